package desk

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The booking dialog of the front desk: a booking's details, its
// attendance marks, and the ways to move or cancel it, rendered into the
// page's #desk-dialog container.

// BookingDialog answers GET /staff/bookings/:id/dialog.
func (s *FrontDesk) BookingDialog(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActCalendar); err != nil {
		return err
	}
	id, err := bookingParam(c)
	if err != nil {
		return err
	}
	card, err := s.deps.StaffBookings.BookingCard(c.Request().Context(), u, id)
	if err != nil {
		return err
	}
	return s.renderDialog(c, http.StatusOK, card, s.bookingDialogVM(c, card, time.Now()))
}

// MarkAttendance answers POST /staff/bookings/:id/attendance (mark,
// version): the dialog again, with the mark set, or with why it was not
// (409, the booking's current values shown).
func (s *FrontDesk) MarkAttendance(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActAttendance); err != nil {
		return err
	}
	id, err := bookingParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	mark := c.FormValue("mark")
	card, err := s.deps.StaffBookings.MarkAttendance(ctx, u, id, mark, httpx.Atoi32(c.FormValue("version")))
	if err != nil {
		ae := apperr.As(err)
		if ae == nil || (ae.Kind != apperr.Conflict && ae.Kind != apperr.PreconditionFailed) {
			return err
		}
		if card, err = s.deps.StaffBookings.BookingCard(ctx, u, id); err != nil {
			return err
		}
		vm := s.bookingDialogVM(c, card, time.Now())
		tr, local := httpx.Tr(c), card.Start.In(card.Location)
		vm.Error, vm.ErrorCode = refusalOf(tr, ae, map[string]any{"Day": tr.Day(local), "Time": tr.Time(local)}), ae.Code
		return s.renderDialog(c, http.StatusConflict, card, vm)
	}
	vm := s.bookingDialogVM(c, card, time.Now())
	tr := httpx.Tr(c)
	vm.Notice = tr.T("desk.mark.notice", map[string]any{"Mark": markWord(tr, card.Attendance)})
	if mark == desk.NotMarked {
		vm.Notice = tr.T("desk.mark.undone", nil)
	}
	return s.renderDialog(c, http.StatusOK, card, vm)
}

// renderDialog answers with a booking's dialog, recorded as a view of it.
func (s *FrontDesk) renderDialog(c echo.Context, status int, card desk.BookingCard, vm views.BookingDialogVM) error {
	if err := s.record(c, privacy.PageBookingDialog, []uuid.UUID{card.ID}, nil); err != nil {
		return err
	}
	return httpx.Render(c, status, nil, views.BookingDialog(vm))
}

// bookingParam is the booking id in the path; a malformed one is no
// booking.
func bookingParam(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, apperr.NotFoundf("id", "No such booking.")
	}
	return id, nil
}

// bookingDialogVM is the dialog of a booking as its viewer may use it at now.
func (s *FrontDesk) bookingDialogVM(c echo.Context, b desk.BookingCard, now time.Time) views.BookingDialogVM {
	u, tr := httpx.StaffUser(c), httpx.Tr(c)
	loc := b.Location
	times := tr.Time(b.Start.In(loc)) + "–" + tr.Time(b.End.In(loc))
	vm := views.BookingDialogVM{
		CSRF: s.kit.CSRFToken(c), ID: b.ID.String(), Version: b.Version,
		Title: times + " " + b.PatientName,
		When:  longDate(tr, b.Start.In(loc)) + ", " + times,
		Date:  b.Day().String(), Patient: b.PatientName, Email: b.PatientEmail, Phone: b.PatientPhone,
		TypeName: b.TypeName, Specialist: b.SpecialistName, Room: b.RoomName, Status: b.Status, StatusLabel: statusWord(tr, b.Status),
		Attendance: b.Attendance, AttendanceLabel: markWord(tr, b.Attendance),
		CanMove: u.May(staff.ActMove) == nil, CanCancel: u.May(staff.ActCancel) == nil,
		LaterSessions: b.Series.Total - b.Series.N,
	}
	if names, err := s.typeNames(c.Request().Context(), u.ClinicID, tr.Lang()); err == nil {
		vm.TypeName = typeName(names, b.AppointmentTypeID, b.TypeName)
	}
	if b.AttendanceAt != nil && b.Attendance != desk.NotMarked {
		vm.AttendanceLabel = tr.T("desk.mark.at", map[string]any{"Mark": vm.AttendanceLabel, "Time": tr.Time(b.AttendanceAt.In(loc))})
	}
	if b.Status == booking.StatusConfirmed && u.May(staff.ActAttendance) == nil {
		vm.Marks, vm.MarkNote = markButtons(tr, b, now)
	}
	return vm
}

// markButtons are the dialog's mark buttons (Undo only for a marked
// booking), each disabled when the rule refuses it now, and the first
// refusal's words.
func markButtons(tr *i18n.Localizer, b desk.BookingCard, now time.Time) ([]views.MarkButtonVM, string) {
	marks := desk.AttendanceMarks
	if b.Attendance != desk.NotMarked {
		marks = append(marks[:len(marks):len(marks)], desk.NotMarked)
	}
	note := ""
	out := make([]views.MarkButtonVM, 0, len(marks))
	for _, m := range marks {
		btn := views.MarkButtonVM{Mark: m, Label: markWord(tr, m), Pressed: m != desk.NotMarked && m == b.Attendance}
		btn.AriaLabel = tr.T("desk.mark.aria", map[string]any{"Patient": b.PatientName, "Mark": markInSentence(tr, m)})
		if m == desk.NotMarked {
			btn.Label = tr.T("desk.mark.undo", nil)
			btn.AriaLabel = tr.T("desk.mark.undo_aria", map[string]any{"Patient": b.PatientName, "Mark": markInSentence(tr, b.Attendance)})
		}
		if err := b.MayMark(m, now); err != nil {
			btn.Disabled = true
			if ae := apperr.As(err); ae != nil && note == "" {
				local := b.Start.In(b.Location)
				note = refusalOf(tr, ae, map[string]any{"Day": tr.Day(local), "Time": tr.Time(local)})
			}
		}
		out = append(out, btn)
	}
	return out, note
}
