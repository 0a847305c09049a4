// One booking as staff see it: its details and every e-mail sent (or
// still to be sent) about it, with a warning when one could not be
// delivered.

package desk

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// StaffBookingPage answers GET /staff/bookings/:id. It shows what the
// search shows of a booking and more, so it asks the search's action.
func (s *FrontDesk) StaffBookingPage(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActSearch); err != nil {
		return err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return apperr.NotFoundf("id", "No such booking.")
	}
	ctx := c.Request().Context()
	b, err := s.deps.Bookings.Get(ctx, id, u.ClinicID)
	if err != nil {
		return err
	}
	typ, err := s.deps.Clinics.AppointmentType(ctx, b.AppointmentTypeID)
	if err != nil {
		return err
	}
	sp, err := s.deps.Clinics.Specialist(ctx, b.SpecialistID)
	if err != nil {
		return err
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	msgs, err := s.deps.Outbox.ForBooking(ctx, u, b.ID)
	if err != nil {
		return err
	}
	card, err := s.deps.StaffBookings.BookingCard(ctx, u, b.ID)
	if err != nil {
		return err
	}
	if err := s.record(c, privacy.PageBooking, []uuid.UUID{b.ID}, nil); err != nil {
		return err
	}
	tr := httpx.Tr(c)
	vm := views.StaffBookingVM{
		Nav: s.kit.Nav(c, "search"), ID: b.ID.String(), When: when(tr, b.Start, loc), Ends: tr.Time(b.End.In(loc)),
		TypeName: typ.NameIn(tr.Lang()), Specialist: sp.Name, Status: b.Status, StatusLabel: statusWord(tr, b.Status), CancelReason: b.CancelReason,
		Patient: b.Patient.Name, Email: b.Patient.Email, Phone: b.Patient.Phone,
		Booked: shortWhen(tr, b.CreatedAt.In(loc)), Language: languageWord(tr, b.Language),
		Attendance: card.Attendance, AttendanceLabel: markWord(tr, card.Attendance), LateCancel: b.LateCancel,
		CalendarURL: "/staff?view=day&date=" + b.Start.In(loc).Format(time.DateOnly),
	}
	if b.RescheduledFrom != uuid.Nil {
		vm.MovedFromURL = "/staff/bookings/" + b.RescheduledFrom.String()
	}
	vm.Messages, vm.Undeliverable = s.messageRows(tr, msgs, loc)
	return s.kit.Page(c, http.StatusOK, tr.T("desk.page.title", map[string]any{"Patient": b.Patient.Name}), views.StaffBooking(vm))
}

// messageRows are a booking's messages as its page lists them, and
// whether any of them could not be delivered.
func (s *FrontDesk) messageRows(tr *i18n.Localizer, msgs []outbox.Status, loc *time.Location) ([]views.StaffMessageVM, bool) {
	rows := make([]views.StaffMessageVM, len(msgs))
	failed := false
	for i, m := range msgs {
		r := views.StaffMessageVM{
			Kind: m.Kind, KindLabel: mailWord(tr, "kind", m.Kind), Status: m.Status, StatusLabel: mailWord(tr, "status", m.Status),
			Due:      shortWhen(tr, m.SendAt.In(loc)),
			Attempts: strconv.Itoa(m.Attempts), Error: m.Error, Failed: m.Undeliverable(),
		}
		if m.Sent != nil {
			r.Sent = shortWhen(tr, m.Sent.In(loc))
			if s.deps.Outbox.Stored() {
				r.CopyURL = "/staff/outbox/" + m.ID.String()
			}
		}
		failed = failed || r.Failed
		rows[i] = r
	}
	return rows, failed
}
