// Package desk is the calendar and the front desk: the staff's bookings
// (by phone, cancelled or moved with a reason) and their search, the
// calendar's reads, the day grid's and week view's data and rows
// (daygrid.go), typed local times resolved through the one wall clock
// (walltime.go), attendance marks and no-shows, the printed day sheet, and
// the desk dialog that holds a clicked time the way a patient's hold does
// before it books or moves a booking. Each action takes a staff.User and
// checks its action in the role table first; the clinic's specialists and
// types come from internal/practice.
package desk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/staff"
)

// Bookings are the staff's booking actions, over the same gate as
// patients, and the calendar's reads: its bookings, the grid's data, the
// attendance marks and the day sheet.
type Bookings struct {
	pool     *pgxpool.Pool
	changed  staff.Notifier
	bookings *booking.Service
	holds    *holds.Store
}

// NewBookings is the staff's bookings over the booking service and the
// hold store (nil: phone bookings do not look at holds); changed (may be
// nil) is told after an attendance mark is committed.
func NewBookings(pool *pgxpool.Pool, changed staff.Notifier, b *booking.Service, h *holds.Store) *Bookings {
	return &Bookings{pool: pool, changed: changed, bookings: b, holds: h}
}

// BookForPatient books straight through the database gate, without a hold
// (a phone booking), but not over a hold another client has on that time.
// With Redis down it still books: the database decides.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT, NOT_FOUND, SLOT_HELD (423),
// SLOT_TAKEN (409), SLOT_UNAVAILABLE (409: inside the type's notice, or on
// a closed date).
func (b *Bookings) BookForPatient(ctx context.Context, u staff.User, typeID, specialistID uuid.UUID, start time.Time, p booking.Patient) (booking.Confirmation, error) {
	if err := u.May(staff.ActBook); err != nil {
		return booking.Confirmation{}, err
	}
	t, err := db.New(b.pool).AppointmentTypeGetInClinic(ctx, db.AppointmentTypeGetInClinicParams{ID: typeID, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Confirmation{}, apperr.NotFoundf("appointmentTypeId", "No such appointment type at this clinic.")
	}
	if err != nil {
		return booking.Confirmation{}, err
	}
	// The minimum notice holds for staff as for patients: the day grid
	// offers no time inside it and its dialog holds none, so neither does
	// this form book one.
	if notice := time.Duration(t.MinNoticeMin) * time.Minute; notice > 0 && start.Before(time.Now().Add(notice)) {
		return booking.Confirmation{}, apperr.New(apperr.Conflict, apperr.CodeSlotUnavailable, fmt.Sprintf(
			"%s needs %s notice: choose a later time, or a time the day grid shows free.", t.Name, noticeWords(notice)))
	}
	end := start.Add(time.Duration(t.DurationMin) * time.Minute)
	if err := b.notClosed(ctx, u.ClinicID, specialistID, start, end); err != nil {
		return booking.Confirmation{}, err
	}
	if b.holds != nil {
		if active, err := b.holds.Active(ctx, u.ClinicID); err == nil {
			for _, h := range active {
				if h.SpecialistID == specialistID && h.Start.Before(end) && start.Before(h.End) {
					return booking.Confirmation{}, apperr.SlotHeld(time.Until(h.ExpiresAt))
				}
			}
		}
	}
	return b.bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: typeID, SpecialistID: specialistID, Start: start, Patient: p,
		Actor: u.Actor(), ClinicID: u.ClinicID, ClientID: "staff",
	})
}

// notClosed refuses a time on a date a closure of the specialist or of
// the clinic covers. The desk may book outside a specialist's hours, but
// not over a closure: it is the clinic's word that nobody is there, and a
// booking on a closed day would be one the patients' pages and the greyed
// day grid deny. To book then, staff reopen the date first.
func (b *Bookings) notClosed(ctx context.Context, clinicID, specialistID uuid.UUID, start, end time.Time) error {
	closed, err := db.New(b.pool).ClosureCovers(ctx, db.ClosureCoversParams{
		ClinicID: clinicID, SpecialistID: uuid.NullUUID{UUID: specialistID, Valid: true}, RangeStart: start, RangeEnd: end,
	})
	if err != nil {
		return fmt.Errorf("closures: %w", err)
	}
	if closed {
		return apperr.New(apperr.Conflict, apperr.CodeSlotUnavailable,
			"That date is closed (a closure or a public holiday). Reopen it on the Closures page first, or choose another date.")
	}
	return nil
}

// Cancel cancels any of the clinic's bookings with a reason.
func (b *Bookings) Cancel(ctx context.Context, u staff.User, id uuid.UUID, reason string) (booking.Booking, error) {
	if err := u.May(staff.ActCancel); err != nil {
		return booking.Booking{}, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return booking.Booking{}, apperr.Invalidf("reason", "Give a reason: it goes into the audit log.")
	}
	bk, _, err := b.bookings.Cancel(ctx, booking.CancelRequest{BookingID: id, ClinicID: u.ClinicID, Actor: u.Actor(), Reason: reason})
	return bk, err
}

// CancelSeriesFrom cancels a session of a series and every later confirmed
// one, with a reason, in one transaction; the patient is written to once.
// A booking of no series is cancelled alone. It returns the sessions it
// cancelled, in order.
func (b *Bookings) CancelSeriesFrom(ctx context.Context, u staff.User, id uuid.UUID, reason string) ([]booking.Booking, error) {
	if err := u.May(staff.ActCancel); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, apperr.Invalidf("reason", "Give a reason: it goes into the audit log.")
	}
	return b.bookings.CancelSeriesFrom(ctx, booking.SeriesCancelRequest{BookingID: id, ClinicID: u.ClinicID, Actor: u.Actor(), Reason: reason})
}

// Reschedule moves any of the clinic's bookings, with a reason, under the
// version the form was opened at.
func (b *Bookings) Reschedule(ctx context.Context, u staff.User, id uuid.UUID, start time.Time, specialist uuid.UUID, version int32, reason string) (booking.Booking, error) {
	if err := u.May(staff.ActMove); err != nil {
		return booking.Booking{}, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return booking.Booking{}, apperr.Invalidf("reason", "Give a reason: it goes into the audit log.")
	}
	if err := b.notClosed(ctx, u.ClinicID, specialist, start, start.Add(time.Minute)); err != nil {
		return booking.Booking{}, err
	}
	return b.bookings.Reschedule(ctx, booking.RescheduleRequest{
		BookingID: id, ClinicID: u.ClinicID, Start: start, SpecialistID: specialist,
		Actor: u.Actor(), Reason: reason, ExpectVersion: version,
	})
}

// RoomName is the name of the clinic's room id, for a booking that holds
// it: the callers have checked their own action on the booking.
//
// Errors: NOT_FOUND.
func (b *Bookings) RoomName(ctx context.Context, clinicID, id uuid.UUID) (string, error) {
	r, err := db.New(b.pool).ResourceGet(ctx, db.ResourceGetParams{ClinicID: clinicID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", apperr.NotFoundf("room", "No such room.")
	}
	return r.Name, err
}

// Calendar is the clinic's confirmed bookings between from and to.
//
// Errors: FORBIDDEN.
func (b *Bookings) Calendar(ctx context.Context, u staff.User, from, to time.Time) ([]CalendarBooking, error) {
	if err := u.May(staff.ActCalendar); err != nil {
		return nil, err
	}
	return b.calendar(ctx, u.ClinicID, from, to)
}

// SearchResult is a booking found by a search, of any status.
type SearchResult struct {
	ID, SpecialistID                        uuid.UUID
	SlotStart, SlotEnd                      time.Time
	Status                                  string
	PatientName, PatientEmail, PatientPhone string
	TypeName, SpecialistName                string
	Series                                  SeriesMark // its place in its series, if any
}

func searchResultFromRow(r db.BookingSearchRow) SearchResult {
	return SearchResult{
		ID: r.ID, SpecialistID: r.SpecialistID, SlotStart: r.SlotStart, SlotEnd: r.SlotEnd, Status: r.Status,
		PatientName: r.PatientName, PatientEmail: r.PatientEmail, PatientPhone: r.PatientPhone,
		TypeName: r.TypeName, SpecialistName: r.SpecialistName,
	}
}

// Search finds bookings by patient name, e-mail or phone in a date range.
func (b *Bookings) Search(ctx context.Context, u staff.User, q string, from, to time.Time) ([]SearchResult, error) {
	if err := u.May(staff.ActSearch); err != nil {
		return nil, err
	}
	rows, err := db.New(b.pool).BookingSearch(ctx, db.BookingSearchParams{ClinicID: u.ClinicID, Q: strings.TrimSpace(q), RangeStart: from, RangeEnd: to})
	out, err := staff.FromRows(rows, err, searchResultFromRow)
	if err != nil {
		return nil, err
	}
	return out, b.markSearch(ctx, u.ClinicID, out)
}

// noticeWords says a notice as people do: "2 hours", "1 day", "90 minutes".
func noticeWords(d time.Duration) string {
	switch m := int(d / time.Minute); {
	case m%(24*60) == 0:
		return plural(m/(24*60), "day")
	case m%60 == 0:
		return plural(m/60, "hour")
	default:
		return plural(m, "minute")
	}
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
