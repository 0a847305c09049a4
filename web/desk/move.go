package desk

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The move dialog: a booking's free times to move to, as buttons.

// DeskMove answers GET /staff/bookings/:id/move: the free times that fit
// the booking, each a button that moves it there through the calendar's
// reschedule (POST /staff/bookings/:id/reschedule).
func (s *FrontDesk) DeskMove(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActMove); err != nil {
		return err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return apperr.NotFoundf("id", "No such booking.")
	}
	mc, err := s.desk().MoveChoices(c.Request().Context(), u, id)
	if err != nil {
		ae := apperr.As(err)
		if ae == nil || ae.Kind != apperr.Conflict {
			return err
		}
		vm := views.MoveDialogVM{CSRF: s.kit.CSRFToken(c), BookingID: id.String(), Title: "Move this booking", Error: ae.Message}
		return httpx.Render(c, http.StatusConflict, nil, views.MoveDialog(vm))
	}
	if err := s.record(c, privacy.PageMoveDialog, []uuid.UUID{mc.Booking.ID}, nil); err != nil {
		return err
	}
	return httpx.Render(c, http.StatusOK, nil, views.MoveDialog(moveVM(mc, s.kit.CSRFToken(c))))
}

// moveVM is the move dialog of a booking's choices.
func moveVM(mc desk.MoveChoices, csrf string) views.MoveDialogVM {
	b, loc := mc.Booking, mc.Location
	vm := views.MoveDialogVM{CSRF: csrf, BookingID: b.ID.String(), Version: b.Version}
	current := ""
	for _, opt := range mc.Options {
		g := views.MoveGroupVM{Specialist: opt.Specialist.Name, SpecialistID: opt.Specialist.ID.String(), Same: opt.Same}
		if opt.Same {
			current = opt.Specialist.Name
		}
		for _, st := range opt.Starts {
			local := st.In(loc)
			label := local.Format("Monday 2 January")
			if n := len(g.Days); n == 0 || g.Days[n-1].Label != label {
				g.Days = append(g.Days, views.MoveDayVM{Label: label})
			}
			d := &g.Days[len(g.Days)-1]
			d.Times = append(d.Times, views.MoveTimeVM{
				Label: local.Format("15:04"), Start: local.Format("2006-01-02T15:04"), Date: local.Format("2006-01-02"),
				AriaLabel: "Move to " + local.Format("15:04") + " on " + label + " with " + opt.Specialist.Name,
			})
		}
		vm.Groups = append(vm.Groups, g)
	}
	vm.Title = "Move " + b.Patient.Name + "'s " + mc.TypeName + " (" + b.Start.In(loc).Format("Mon 2 Jan 15:04")
	if current != "" {
		vm.Title += ", " + current
	}
	vm.Title += ")"
	return vm
}
