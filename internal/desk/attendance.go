package desk

// Attendance: whether the patient came, marked at the front desk on the
// booking's day, and the day sheet printed from the calendar. A mark is
// no status of the booking: the booking stays confirmed and keeps its time.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
)

// The marks of attendance. NotMarked is also how a mark is undone.
const (
	NotMarked = ""
	Arrived   = "arrived"
	NoShow    = "no_show"
	Completed = "completed"
)

// AttendanceMarks are every mark, in the order the desk offers them.
var AttendanceMarks = []string{Arrived, NoShow, Completed}

// The refusals of a mark at the wrong time (409).
const (
	// CodeAttendanceNotYet: the booking's day has not begun.
	CodeAttendanceNotYet = "ATTENDANCE_NOT_YET"
	// CodeAttendanceClosed: the booking's day is over.
	CodeAttendanceClosed = "ATTENDANCE_CLOSED"
	// CodeNoShowTooEarly: a no-show before the appointment has begun.
	CodeNoShowTooEarly = "NO_SHOW_TOO_EARLY"
)

// BookingCard is one booking of the clinic as the booking dialog shows it.
type BookingCard struct {
	CalendarBooking
	Status string
	// AttendanceAt is when the current mark was set; nil when unmarked.
	AttendanceAt *time.Time
	// Location is the clinic's zone, in which the booking's day is counted.
	Location *time.Location
	// RoomName is the room the booking holds; "" when its type needs none.
	RoomName string
}

// Day is the booking's local day.
func (b BookingCard) Day() availability.Date { return availability.DateOf(b.Start, b.Location) }

// MayMark says whether mark (NotMarked: undo) may be set now: nil, or the
// refusal MarkAttendance would give.
func (b BookingCard) MayMark(mark string, now time.Time) error {
	return attendanceAllowed(b.Status, b.Start, mark, now, b.Location)
}

// BookingCard is one booking of the user's clinic with its names.
//
// Errors: FORBIDDEN, NOT_FOUND (also for another clinic's booking).
func (b *Bookings) BookingCard(ctx context.Context, u staff.User, id uuid.UUID) (BookingCard, error) {
	if err := u.May(staff.ActCalendar); err != nil {
		return BookingCard{}, err
	}
	r, err := db.New(b.pool).BookingCard(ctx, db.BookingCardParams{ID: id, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return BookingCard{}, staff.NotFound("booking")
	}
	if err != nil {
		return BookingCard{}, fmt.Errorf("get booking: %w", err)
	}
	loc, err := clinics.LoadZone(r.Timezone)
	if err != nil {
		return BookingCard{}, fmt.Errorf("clinic zone: %w", err)
	}
	bk := r.Booking
	card := BookingCard{
		CalendarBooking: CalendarBooking{
			ID: bk.ID, SpecialistID: bk.SpecialistID, AppointmentTypeID: bk.AppointmentTypeID,
			Start: bk.SlotStart.UTC(), End: bk.SlotEnd.UTC(),
			PatientName: bk.PatientName, PatientEmail: bk.PatientEmail, PatientPhone: bk.PatientPhone,
			TypeName: r.TypeName, SpecialistName: r.SpecialistName, Version: bk.Version, Attendance: bk.Attendance,
		},
		Status: bk.Status, AttendanceAt: bk.AttendanceAt, Location: loc, RoomName: r.RoomName,
	}
	if bk.SeriesID.Valid {
		marks, err := b.seriesMarks(ctx, u.ClinicID, []uuid.UUID{bk.ID})
		if err != nil {
			return BookingCard{}, err
		}
		card.Series = marks[bk.ID]
	}
	return card, nil
}

// attendanceState is a booking's attendance as its audit rows record it.
type attendanceState struct {
	Attendance string     `json:"attendance"`
	At         *time.Time `json:"attendanceAt,omitempty"`
	Version    int32      `json:"version"`
}

// errUnchanged ends a marking that would set the mark the booking has.
var errUnchanged = errors.New("attendance unchanged")

// MarkAttendance sets whether the patient of a confirmed booking of the
// user's clinic came (NotMarked undoes it), with its audit row, and tells
// the open calendars. It is allowed only on the booking's own day in the
// clinic's zone, a no-show only once the appointment has begun. Setting
// the mark the booking already has changes nothing. expectVersion, when
// not 0, is the version the desk saw.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (mark), NOT_FOUND (also for another
// clinic's booking), BOOKING_NOT_ACTIVE (409), ATTENDANCE_NOT_YET (409),
// ATTENDANCE_CLOSED (409), NO_SHOW_TOO_EARLY (409), CONCURRENCY_CONFLICT
// (412).
func (b *Bookings) MarkAttendance(ctx context.Context, u staff.User, id uuid.UUID, mark string, expectVersion int32) (BookingCard, error) {
	if err := u.May(staff.ActAttendance); err != nil {
		return BookingCard{}, err
	}
	mark = strings.TrimSpace(mark)
	if mark != NotMarked && !slices.Contains(AttendanceMarks, mark) {
		return BookingCard{}, apperr.Invalidf("mark", "The mark is one of: arrived, no_show, completed, or empty to undo it.")
	}
	err := staff.Change(ctx, b.pool, b.changed, u, func(q *db.Queries) error {
		return markInTx(ctx, q, u, id, mark, expectVersion, time.Now())
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return BookingCard{}, err
	}
	return b.BookingCard(ctx, u, id)
}

// markInTx checks and writes one mark in the transaction of q.
func markInTx(ctx context.Context, q *db.Queries, u staff.User, id uuid.UUID, mark string, expectVersion int32, now time.Time) error {
	r, err := q.BookingCardForUpdate(ctx, db.BookingCardForUpdateParams{ID: id, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return staff.NotFound("booking")
	}
	if err != nil {
		return fmt.Errorf("lock booking: %w", err)
	}
	b := r.Booking
	before := attendanceState{Attendance: b.Attendance, At: b.AttendanceAt, Version: b.Version}
	if b.Status == booking.StatusConfirmed && b.Attendance == mark {
		return errUnchanged
	}
	if expectVersion != 0 && b.Version != expectVersion {
		return staff.Stale(before)
	}
	loc, err := clinics.LoadZone(r.Timezone)
	if err != nil {
		return fmt.Errorf("clinic zone: %w", err)
	}
	if err := attendanceAllowed(b.Status, b.SlotStart, mark, now, loc); err != nil {
		return err
	}
	a, err := q.BookingAttendanceSet(ctx, db.BookingAttendanceSetParams{Attendance: mark, ID: id})
	if err != nil {
		return fmt.Errorf("set attendance: %w", err)
	}
	after := attendanceState{Attendance: a.Attendance, At: a.AttendanceAt, Version: a.Version}
	return staff.WriteAudit(ctx, q, u, "booking.attendance", "booking", id.String(), before, after, "")
}

// attendanceAllowed is the rule of marks: a confirmed booking, on its
// local day (from its midnight to the next), and a no-show from its start.
func attendanceAllowed(status string, start time.Time, mark string, now time.Time, loc *time.Location) error {
	if status != booking.StatusConfirmed {
		return apperr.New(apperr.Conflict, apperr.CodeBookingNotActive,
			"This booking was cancelled or moved: there is no appointment to mark.")
	}
	day := availability.DateOf(start, loc)
	next := day.AddDays(1)
	from := time.Date(day.Year, day.Month, day.Day, 0, 0, 0, 0, loc)
	until := time.Date(next.Year, next.Month, next.Day, 0, 0, 0, 0, loc)
	label := start.In(loc).Format("Mon 2 Jan")
	switch {
	case now.Before(from):
		return apperr.New(apperr.Conflict, CodeAttendanceNotYet,
			fmt.Sprintf("Attendance is marked on the booking's day only: come back on %s.", label))
	case !now.Before(until):
		return apperr.New(apperr.Conflict, CodeAttendanceClosed,
			fmt.Sprintf("The booking's day (%s) is over: its attendance can no longer be changed.", label))
	case mark == NoShow && now.Before(start):
		return apperr.New(apperr.Conflict, CodeNoShowTooEarly,
			fmt.Sprintf("A no-show can be marked only once the appointment has begun (at %s).", start.In(loc).Format("15:04")))
	}
	return nil
}

// NoShows counts the clinic's bookings of a patient marked as no-shows:
// the same e-mail (case aside) or the same phone digits. Nothing typed
// counts 0.
//
// Errors: FORBIDDEN.
func (b *Bookings) NoShows(ctx context.Context, u staff.User, email, phone string) (int, error) {
	if err := u.May(staff.ActBook); err != nil {
		return 0, err
	}
	email, phone = strings.TrimSpace(email), strings.TrimSpace(phone)
	if email == "" && phone == "" {
		return 0, nil
	}
	n, err := db.New(b.pool).BookingNoShowCount(ctx, db.BookingNoShowCountParams{ClinicID: u.ClinicID, Email: email, Phone: phone})
	if err != nil {
		return 0, fmt.Errorf("count no-shows: %w", err)
	}
	return int(n), nil
}

// DaySheet is a clinic's day as it is printed: each specialist's
// bookings in order.
type DaySheet struct {
	Day      availability.Date
	Location *time.Location
	// Specialists are every active specialist, with bookings or none, and
	// an inactive one only when they still have bookings that day; in the
	// clinic's order.
	Specialists []DaySheetSpecialist
}

// DaySheetSpecialist is one specialist's part of the day sheet.
type DaySheetSpecialist struct {
	Specialist practice.Specialist
	Bookings   []CalendarBooking
}

// DaySheet is the confirmed bookings starting on the local day, per
// specialist.
//
// Errors: FORBIDDEN.
func (b *Bookings) DaySheet(ctx context.Context, u staff.User, day availability.Date) (DaySheet, error) {
	if err := u.May(staff.ActCalendar); err != nil {
		return DaySheet{}, err
	}
	q := db.New(b.pool)
	tz, err := q.ClinicTimezone(ctx, u.ClinicID)
	if err != nil {
		return DaySheet{}, fmt.Errorf("clinic zone: %w", err)
	}
	loc, err := clinics.LoadZone(tz)
	if err != nil {
		return DaySheet{}, fmt.Errorf("clinic zone: %w", err)
	}
	next := day.AddDays(1)
	from := time.Date(day.Year, day.Month, day.Day, 0, 0, 0, 0, loc)
	until := time.Date(next.Year, next.Month, next.Day, 0, 0, 0, 0, loc)
	rows, err := q.BookingCalendar(ctx, db.BookingCalendarParams{ClinicID: u.ClinicID, RangeStart: from, RangeEnd: until})
	bookings, err := staff.FromRows(rows, err, calendarBookingFromRow)
	if err != nil {
		return DaySheet{}, fmt.Errorf("day's bookings: %w", err)
	}
	sps, err := practice.ClinicSpecialists(ctx, q, u.ClinicID)
	if err != nil {
		return DaySheet{}, fmt.Errorf("specialists: %w", err)
	}
	sheet := DaySheet{Day: day, Location: loc}
	for _, sp := range sps {
		part := DaySheetSpecialist{Specialist: sp}
		for _, b := range bookings {
			// A booking of the evening before that runs past midnight
			// belongs to its own day's sheet.
			if b.SpecialistID == sp.ID && !b.Start.Before(from) {
				part.Bookings = append(part.Bookings, b)
			}
		}
		if sp.Active || len(part.Bookings) > 0 {
			sheet.Specialists = append(sheet.Specialists, part)
		}
	}
	return sheet, nil
}
