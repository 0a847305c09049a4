package desk

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The booking dialog of the front desk: a booking's details, its
// attendance marks, and the ways to move or cancel it, rendered into the
// page's #desk-dialog container.

// attendanceWords are the marks in words.
var attendanceWords = map[string]string{
	desk.NotMarked: "not marked",
	desk.Arrived:   "arrived",
	desk.NoShow:    "no-show",
	desk.Completed: "completed",
}

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
		vm.Error, vm.ErrorCode = ae.Message, ae.Code
		return s.renderDialog(c, http.StatusConflict, card, vm)
	}
	vm := s.bookingDialogVM(c, card, time.Now())
	vm.Notice = "Attendance: " + attendanceWords[card.Attendance] + "."
	if mark == desk.NotMarked {
		vm.Notice = "The mark was undone."
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
	u := httpx.StaffUser(c)
	loc := b.Location
	times := b.Start.In(loc).Format("15:04") + "–" + b.End.In(loc).Format("15:04")
	vm := views.BookingDialogVM{
		CSRF: s.kit.CSRFToken(c), ID: b.ID.String(), Version: b.Version,
		Title: times + " " + b.PatientName,
		When:  b.Start.In(loc).Format("Monday 2 January 2006") + ", " + times,
		Date:  b.Day().String(), Patient: b.PatientName, Email: b.PatientEmail, Phone: b.PatientPhone,
		TypeName: b.TypeName, Specialist: b.SpecialistName, Status: b.Status,
		Attendance: b.Attendance, AttendanceLabel: attendanceWords[b.Attendance],
		CanMove: u.May(staff.ActMove) == nil, CanCancel: u.May(staff.ActCancel) == nil,
	}
	if b.AttendanceAt != nil && b.Attendance != desk.NotMarked {
		vm.AttendanceLabel += " at " + b.AttendanceAt.In(loc).Format("15:04")
	}
	if b.Status == booking.StatusConfirmed && u.May(staff.ActAttendance) == nil {
		vm.Marks, vm.MarkNote = markButtons(b, now)
	}
	return vm
}

// markButtons are the dialog's mark buttons (Undo only for a marked
// booking), each disabled when the rule refuses it now, and the first
// refusal's words.
func markButtons(b desk.BookingCard, now time.Time) ([]views.MarkButtonVM, string) {
	labels := map[string]string{desk.Arrived: "Arrived", desk.NoShow: "No-show", desk.Completed: "Completed"}
	marks := desk.AttendanceMarks
	if b.Attendance != desk.NotMarked {
		marks = append(marks[:len(marks):len(marks)], desk.NotMarked)
	}
	note := ""
	out := make([]views.MarkButtonVM, 0, len(marks))
	for _, m := range marks {
		btn := views.MarkButtonVM{Mark: m, Label: labels[m], Pressed: m != desk.NotMarked && m == b.Attendance}
		btn.AriaLabel = "Mark " + b.PatientName + " as " + attendanceWords[m]
		if m == desk.NotMarked {
			btn.Label, btn.AriaLabel = "Undo", "Undo the mark "+attendanceWords[b.Attendance]+" of "+b.PatientName
		}
		if err := b.MayMark(m, now); err != nil {
			btn.Disabled = true
			if ae := apperr.As(err); ae != nil && note == "" {
				note = ae.Message
			}
		}
		out = append(out, btn)
	}
	return out, note
}
