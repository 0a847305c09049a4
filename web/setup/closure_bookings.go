package setup

// One closure's page: the bookings still on its dates, each to move (the
// desk's move page) or to cancel with a reason. A cancel goes through the
// staff's cancel, one booking at a time, so each patient with an e-mail
// address gets the cancellation e-mail written in that booking's
// transaction (once, in the clinic's language); the page then lists whom
// to call: the patients without one.

import (
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// closureVM is the closure's page with the bookings now on its dates.
func (s *Admin) closureVM(c echo.Context, id int64) (views.ClosureVM, []practice.AffectedBooking, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	cl, err := s.deps.Practice.Closure(ctx, u, id)
	if err != nil {
		return views.ClosureVM{}, nil, err
	}
	bs, err := s.deps.Practice.ClosureBookings(ctx, u, practice.ClosureInput{SpecialistID: cl.SpecialistID, First: cl.First, Last: cl.Last})
	if err != nil {
		return views.ClosureVM{}, nil, err
	}
	_, loc := s.today(c)
	vm := views.ClosureVM{Nav: s.kit.Nav(c, "closures"), Closure: closureRow(cl, false), Bookings: affectedVMs(bs, loc)}
	return vm, bs, nil
}

// recordLook writes the record of who looked at the bookings a page
// shows (their patients' names and contacts) before the page answers.
func (s *Admin) recordLook(c echo.Context, page string, bs []views.AffectedVM) error {
	if len(bs) == 0 || s.deps.Access == nil {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(bs))
	for _, b := range bs {
		if id, err := uuid.Parse(b.ID); err == nil {
			ids = append(ids, id)
		}
	}
	u := httpx.StaffUser(c)
	return s.deps.Access.Record(c.Request().Context(), privacy.Access{ClinicID: u.ClinicID, StaffID: u.ID, Page: page, Bookings: ids})
}

// ClosurePage answers GET /staff/closures/:id.
func (s *Admin) ClosurePage(c echo.Context) error {
	if err := httpx.StaffUser(c).May(staff.ActClosures); err != nil {
		return err
	}
	id, err := closureID(c)
	if err != nil {
		return err
	}
	vm, _, err := s.closureVM(c, id)
	if err != nil {
		return err
	}
	vm.Notice = s.deps.Sessions.PopString(c.Request().Context(), "notice")
	if err := s.recordLook(c, "closure", vm.Bookings); err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("closures.title", nil), views.Closure(vm))
}

// ClosureCancel answers POST /staff/closures/:id/cancel: the chosen
// bookings that are still on the closure's dates cancelled with the
// reason; the page then says who was told by e-mail and whom to call.
func (s *Admin) ClosureCancel(c echo.Context) error {
	if err := httpx.StaffUser(c).May(staff.ActClosures); err != nil {
		return err
	}
	id, err := closureID(c)
	if err != nil {
		return err
	}
	vm, bs, err := s.closureVM(c, id)
	if err != nil {
		return err
	}
	tr := httpx.Tr(c)
	reason := strings.TrimSpace(c.FormValue("reason"))
	if reason == "" {
		vm.Error = tr.T("closures.error_reason", nil)
		return s.kit.Page(c, http.StatusUnprocessableEntity, tr.T("closures.title", nil), views.Closure(vm))
	}
	chosen := c.Request().PostForm["booking"]
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	failed := 0
	for i, b := range bs {
		if !slices.Contains(chosen, b.ID.String()) {
			continue
		}
		_, err := s.deps.StaffBookings.Cancel(ctx, u, b.ID, reason)
		switch {
		case apperr.CodeOf(err) == apperr.CodeBookingNotActive:
			continue // cancelled meanwhile, by someone else: told then
		case err != nil:
			if ae := apperr.As(err); ae == nil || ae.Kind == apperr.Internal {
				s.deps.Logger.Error("closure: cancel a booking", "booking", b.ID, "err", err)
			}
			failed++
			continue
		}
		done := vm.Bookings[i]
		if b.Email != "" {
			vm.Emailed = append(vm.Emailed, done)
		} else {
			vm.Call = append(vm.Call, done)
		}
	}
	vm.Done = true
	vm.Reason = reason
	if failed > 0 {
		vm.Error = tr.T("closures.error_some_failed", map[string]any{"Count": failed})
	}
	// What is left on the dates, after the cancels.
	left, _, err := s.closureVM(c, id)
	if err != nil {
		return err
	}
	vm.Bookings = left.Bookings
	if err := s.recordLook(c, "closure", append(append(slices.Clone(vm.Bookings), vm.Emailed...), vm.Call...)); err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, tr.T("closures.title", nil), views.Closure(vm))
}
