package setup

// The closures page: the clinic's coming closures, adding one (after
// listing the bookings it would leave on its dates) and reopening one.

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// closureFields are the closure form's fields and the catalogue's word
// for each one's mistake.
var closureFields = map[string]string{
	"specialist": "closures.error_specialist",
	"first":      "closures.error_first",
	"last":       "closures.error_last",
	"note":       "closures.error_note",
}

// today is the clinic's local date, as midnight UTC.
func (s *Admin) today(c echo.Context) (time.Time, *time.Location) {
	loc, err := s.deps.Slots.Zone(c.Request().Context(), httpx.StaffUser(c).ClinicID)
	if err != nil {
		loc = time.UTC
	}
	now := time.Now().In(loc)
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC), loc
}

// closuresVM is the page with the form as in (its values kept as typed).
func (s *Admin) closuresVM(c echo.Context, in views.ClosuresVM) (views.ClosuresVM, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	today, _ := s.today(c)
	cs, err := s.deps.Practice.Closures(ctx, u, today)
	if err != nil {
		return views.ClosuresVM{}, err
	}
	sps, err := s.deps.Practice.Specialists(ctx, u)
	if err != nil {
		return views.ClosuresVM{}, err
	}
	vm := in
	vm.Nav = s.kit.Nav(c, "closures")
	vm.Year = today.Year()
	vm.CanClinic = u.May(staff.ActClinicClosures) == nil
	if vm.Errors == nil {
		vm.Errors = map[string]string{}
	}
	for _, cl := range cs {
		vm.Closures = append(vm.Closures, closureRow(cl, vm.CanClinic || !cl.ClinicWide()))
	}
	chosen := c.FormValue("specialist")
	if vm.CanClinic {
		vm.Who = append(vm.Who, views.OptionVM{Value: "", Label: httpx.Tr(c).T("closures.whole_clinic", nil), Selected: chosen == ""})
	}
	for _, sp := range sps {
		vm.Who = append(vm.Who, views.OptionVM{Value: sp.ID.String(), Label: sp.Name, Selected: chosen == sp.ID.String()})
	}
	return vm, nil
}

func closureRow(cl practice.Closure, canRemove bool) views.ClosureRowVM {
	return views.ClosureRowVM{
		ID: strconv.FormatInt(cl.ID, 10), First: cl.First, Last: cl.Last, Who: cl.SpecialistName,
		Note: cl.Note, Holiday: cl.Holiday, CanRemove: canRemove,
	}
}

func affectedVMs(bs []practice.AffectedBooking, loc *time.Location) []views.AffectedVM {
	out := make([]views.AffectedVM, len(bs))
	for i, b := range bs {
		out[i] = views.AffectedVM{
			ID: b.ID.String(), Start: b.Start.In(loc), Who: b.SpecialistName, Type: b.TypeName,
			Patient: b.PatientName, Email: b.Email, Phone: b.Phone,
		}
	}
	return out
}

// ClosuresPage answers GET /staff/closures.
func (s *Admin) ClosuresPage(c echo.Context) error {
	vm, err := s.closuresVM(c, views.ClosuresVM{})
	if err != nil {
		return err
	}
	vm.Notice = s.deps.Sessions.PopString(c.Request().Context(), "notice")
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("closures.title", nil), views.Closures(vm))
}

// parseDay reads a date field (2026-12-24); empty is the zero time, left
// to the service to name.
func parseDay(c echo.Context, field string) (time.Time, error) {
	v := c.FormValue(field)
	if v == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, apperr.Invalidf(field, "%q is not a date.", v)
	}
	return d, nil
}

func (s *Admin) closureInput(c echo.Context) (practice.ClosureInput, error) {
	var in practice.ClosureInput
	var err error
	if v := c.FormValue("specialist"); v != "" {
		if in.SpecialistID, err = uuid.Parse(v); err != nil {
			return in, apperr.Invalidf("specialist", "Pick a specialist.")
		}
	}
	if in.First, err = parseDay(c, "first"); err != nil {
		return in, err
	}
	if in.Last, err = parseDay(c, "last"); err != nil {
		return in, err
	}
	in.Note = c.FormValue("note")
	return in, nil
}

// ClosureCreate answers POST /staff/closures: with bookings on the dates
// and no confirm, the page again listing them; else the closure saved.
func (s *Admin) ClosureCreate(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActClosures); err != nil {
		return err
	}
	form := views.ClosuresVM{First: c.FormValue("first"), Last: c.FormValue("last"), Note: c.FormValue("note")}
	in, err := s.closureInput(c)
	if err == nil && c.FormValue("confirm") == "" {
		var bs []practice.AffectedBooking
		if bs, err = s.deps.Practice.ClosureBookings(ctx, u, in); err == nil && len(bs) > 0 {
			_, loc := s.today(c)
			form.Preview = affectedVMs(bs, loc)
			vm, verr := s.closuresVM(c, form)
			if verr != nil {
				return verr
			}
			if err := s.recordLook(c, "closure preview", form.Preview); err != nil {
				return err
			}
			return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("closures.title", nil), views.Closures(vm))
		}
	}
	var id int64
	if err == nil {
		if in.SpecialistID == uuid.Nil {
			id, err = s.deps.Practice.AddClinicClosure(ctx, u, in)
		} else {
			id, err = s.deps.Practice.AddClosure(ctx, u, in)
		}
	}
	if err != nil {
		return s.closureFail(c, form, err)
	}
	s.deps.Sessions.Put(ctx, "notice", httpx.Tr(c).T("closures.saved", nil))
	return c.Redirect(http.StatusSeeOther, "/staff/closures/"+strconv.FormatInt(id, 10))
}

// closureFail shows the form again with the field's mistake in the page's
// language (422), or passes any other error on.
func (s *Admin) closureFail(c echo.Context, form views.ClosuresVM, err error) error {
	ae := apperr.As(err)
	if ae == nil || ae.Kind != apperr.Invalid {
		return err
	}
	key, ok := closureFields[ae.Field()]
	if !ok {
		return err
	}
	form.Errors = map[string]string{ae.Field(): httpx.Tr(c).T(key, nil)}
	vm, verr := s.closuresVM(c, form)
	if verr != nil {
		return verr
	}
	return s.kit.Page(c, http.StatusUnprocessableEntity, httpx.Tr(c).T("closures.title", nil), views.Closures(vm))
}

// closureID reads the :id of a closure's route.
func closureID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.NotFoundf("id", "Not found.")
	}
	return id, nil
}

// ClosureDelete answers POST /staff/closures/:id/delete: the dates open
// again.
func (s *Admin) ClosureDelete(c echo.Context) error {
	if err := httpx.StaffUser(c).May(staff.ActClosures); err != nil {
		return err
	}
	id, err := closureID(c)
	if err != nil {
		return err
	}
	if err := s.deps.Practice.DeleteClosure(c.Request().Context(), httpx.StaffUser(c), id); err != nil {
		return err
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", httpx.Tr(c).T("closures.reopened", nil))
	return c.Redirect(http.StatusSeeOther, "/staff/closures")
}
