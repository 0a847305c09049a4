package desk

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/i18n"
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
		tr := httpx.Tr(c)
		vm := views.MoveDialogVM{CSRF: s.kit.CSRFToken(c), BookingID: id.String(), Title: tr.T("desk.move.title_plain", nil), Error: refusal(tr, ae)}
		return httpx.Render(c, http.StatusConflict, nil, views.MoveDialog(vm))
	}
	if err := s.record(c, privacy.PageMoveDialog, []uuid.UUID{mc.Booking.ID}, nil); err != nil {
		return err
	}
	tr := httpx.Tr(c)
	typ := mc.TypeName
	if names, err := s.typeNames(c.Request().Context(), u.ClinicID, tr.Lang()); err == nil {
		typ = typeName(names, mc.Booking.AppointmentTypeID, typ)
	}
	vm := moveVM(tr, mc, typ, s.kit.CSRFToken(c))
	if mc.Booking.ResourceID != uuid.Nil {
		if vm.Room, err = s.deps.StaffBookings.RoomName(c.Request().Context(), u.ClinicID, mc.Booking.ResourceID); err != nil {
			return err
		}
	}
	return httpx.Render(c, http.StatusOK, nil, views.MoveDialog(vm))
}

// moveVM is the move dialog of a booking's choices, in tr's words, the
// booking's type named typ.
func moveVM(tr *i18n.Localizer, mc desk.MoveChoices, typ, csrf string) views.MoveDialogVM {
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
			label := tr.LongDay(local)
			if n := len(g.Days); n == 0 || g.Days[n-1].Label != label {
				g.Days = append(g.Days, views.MoveDayVM{Label: label})
			}
			d := &g.Days[len(g.Days)-1]
			d.Times = append(d.Times, views.MoveTimeVM{
				Label: tr.Time(local), Start: local.Format("2006-01-02T15:04"), Date: local.Format("2006-01-02"),
				AriaLabel: tr.T("desk.move.aria", map[string]any{"Time": tr.Time(local), "Day": label, "Specialist": opt.Specialist.Name}),
			})
		}
		vm.Groups = append(vm.Groups, g)
	}
	data := map[string]any{"Patient": b.Patient.Name, "Type": typ, "When": tr.Day(b.Start.In(loc)) + " " + tr.Time(b.Start.In(loc)), "Specialist": current}
	vm.Title = tr.T("desk.move.title", data)
	if current != "" {
		vm.Title = tr.T("desk.move.title_with", data)
	}
	return vm
}
