package desk_test

// Attendance: marks on the booking's day with their audit rows and the
// calendar's notice, the rule of when a mark may be set, the day sheet and
// the count of a patient's no-shows.

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// notices counts the calendar changes the service tells, per clinic.
type notices struct {
	mu sync.Mutex
	n  map[uuid.UUID]int
}

func (c *notices) notify(_ context.Context, clinicID uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[clinicID]++
}

func (c *notices) of(id uuid.UUID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

// bookAt books the clinic's first type with specialist i at start, as
// staff (no cooldown), for a patient.
func bookAt(t testing.TB, pool *pgxpool.Pool, c testkit.Clinic, i int, start time.Time, p booking.Patient) booking.Booking {
	t.Helper()
	conf, err := booking.NewService(pool).Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[i].ID, Start: start, Patient: p,
		ClientID: "staff", Actor: "staff:test", ClinicID: c.ID,
	})
	if err != nil {
		t.Fatalf("book at %s: %v", start, err)
	}
	return conf.Booking
}

// today is hh:mm of the clinic's today, days days on.
func today(loc *time.Location, days, hh, mm int) time.Time {
	now := time.Now().In(loc)
	return time.Date(now.Year(), now.Month(), now.Day()+days, hh, mm, 0, 0, loc)
}

// A booking of today that has begun: marked arrived, no-show, completed
// and undone, each with its audit row (before and after) and one notice
// to the open calendars; the same mark again writes nothing; a stale
// version, an unknown mark and another clinic's user are refused.
func TestAttendanceMarks(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	loc := testkit.Zone(t, c.Timezone)
	told := &notices{n: map[uuid.UUID]int{}}
	svc := desk.NewBookings(pool, told.notify, booking.NewService(pool), nil)
	clerk := testkit.StaffUser(t, pool, c.ID, staff.RoleReception)
	ctx := context.Background()
	bk := bookAt(t, pool, c, 0, today(loc, 0, 0, 0), booking.Patient{Name: "Ada Patient", Email: "ada@example.org"})

	version := bk.Version
	for i, mark := range []string{desk.Arrived, desk.NotMarked, desk.NoShow, desk.Completed, desk.NotMarked} {
		card, err := svc.MarkAttendance(ctx, clerk, bk.ID, mark, version)
		if err != nil {
			t.Fatalf("mark %q: %v", mark, err)
		}
		if card.Attendance != mark || card.Version != version+1 || (mark == desk.NotMarked) != (card.AttendanceAt == nil) {
			t.Fatalf("after %q: attendance %q, version %d (was %d), at %v", mark, card.Attendance, card.Version, version, card.AttendanceAt)
		}
		version = card.Version
		rows := testkit.AuditRows(t, pool, "booking", bk.ID.String())
		last := rows[len(rows)-1]
		if testkit.CountAction(rows, "booking.attendance") != i+1 || last.Action != "booking.attendance" || last.Actor != clerk.Actor() {
			t.Fatalf("after %q: audit rows %d, last %s by %s", mark, testkit.CountAction(rows, "booking.attendance"), last.Action, last.Actor)
		}
		var after struct{ Attendance string }
		if err := json.Unmarshal(last.After, &after); err != nil || after.Attendance != mark || len(last.Before) == 0 {
			t.Errorf("after %q: audit before %s after %s", mark, last.Before, last.After)
		}
		if n := told.of(c.ID); n != i+1 {
			t.Errorf("after %q: %d calendar notices, want %d", mark, n, i+1)
		}
	}

	// The same mark again: nothing written, nothing told, even at an old version.
	before, notified := testkit.AuditCount(t, pool, c.ID), told.of(c.ID)
	if _, err := svc.MarkAttendance(ctx, clerk, bk.ID, desk.NotMarked, 1); err != nil {
		t.Fatalf("the same mark again: %v", err)
	}
	_, err := svc.MarkAttendance(ctx, clerk, bk.ID, desk.Arrived, version-1)
	testkit.WantCode(t, err, apperr.CodeConcurrencyConflict, "a mark at a stale version")
	_, err = svc.MarkAttendance(ctx, clerk, bk.ID, "late", 0)
	testkit.WantCode(t, err, apperr.CodeInvalidArgument, "an unknown mark")
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	_, err = svc.MarkAttendance(ctx, testkit.StaffUser(t, pool, other.ID, staff.RoleAdmin), bk.ID, desk.Arrived, 0)
	testkit.WantCode(t, err, apperr.CodeNotFound, "another clinic's booking")
	if testkit.AuditCount(t, pool, c.ID) != before || told.of(c.ID) != notified {
		t.Error("refused or unchanged marks wrote audit rows or told the calendars")
	}
}

// Yesterday's booking can no longer be marked nor undone, and a cancelled
// booking has nothing to mark.
func TestAttendanceRefusedOutsideTheDay(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	loc := testkit.Zone(t, c.Timezone)
	svc := desk.NewBookings(pool, nil, booking.NewService(pool), nil)
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
	ctx := context.Background()
	past := bookAt(t, pool, c, 0, today(loc, -1, 10, 0), booking.Patient{Name: "Past Patient", Email: "past@example.org"})
	before := testkit.AuditCount(t, pool, c.ID)
	for _, mark := range []string{desk.Arrived, desk.NoShow, desk.NotMarked} {
		_, err := svc.MarkAttendance(ctx, u, past.ID, mark, 0)
		if mark == desk.NotMarked {
			// Unmarked already: nothing to undo.
			if err != nil {
				t.Errorf("undo of an unmarked booking: %v", err)
			}
			continue
		}
		testkit.WantCode(t, err, desk.CodeAttendanceClosed, "a mark the day after")
	}
	if _, err := pool.Exec(ctx, `UPDATE bookings SET attendance = 'arrived' WHERE id = $1`, past.ID); err != nil {
		t.Fatal(err)
	}
	_, err := svc.MarkAttendance(ctx, u, past.ID, desk.NotMarked, 0)
	testkit.WantCode(t, err, desk.CodeAttendanceClosed, "an undo the day after")
	if n := testkit.AuditCount(t, pool, c.ID); n != before {
		t.Errorf("refused marks wrote %d audit rows", n-before)
	}
	if ae := apperr.As(err); ae.Kind != apperr.Conflict || ae.Message == "" {
		t.Errorf("the refusal: %+v", ae)
	}

	bk := bookAt(t, pool, c, 0, today(loc, 0, 0, 0), booking.Patient{Name: "Cancelled Patient", Email: "gone@example.org"})
	if _, _, err := booking.NewService(pool).Cancel(ctx, booking.CancelRequest{BookingID: bk.ID, ClinicID: c.ID, Actor: u.Actor(), Reason: "called"}); err != nil {
		t.Fatal(err)
	}
	cancelled := testkit.AuditCount(t, pool, c.ID)
	_, err = svc.MarkAttendance(ctx, u, bk.ID, desk.Arrived, 0)
	testkit.WantCode(t, err, apperr.CodeBookingNotActive, "a cancelled booking")
	if n := testkit.AuditCount(t, pool, c.ID); n != cancelled {
		t.Errorf("a refused mark wrote %d audit rows", n-cancelled)
	}
}

// The rule at chosen instants: the booking's local day only, from its
// midnight to the next; a no-show from the start.
func TestAttendanceRule(t *testing.T) {
	t.Parallel()
	loc := testkit.Zone(t, "Europe/Berlin")
	start := time.Date(2031, 3, 12, 14, 30, 0, 0, loc)
	cases := []struct {
		status, mark string
		now          time.Time
		code         string
	}{
		{"confirmed", desk.Arrived, time.Date(2031, 3, 11, 23, 59, 0, 0, loc), desk.CodeAttendanceNotYet},
		{"confirmed", desk.Arrived, time.Date(2031, 3, 12, 0, 0, 0, 0, loc), ""},
		{"confirmed", desk.Completed, time.Date(2031, 3, 12, 8, 0, 0, 0, loc), ""},
		{"confirmed", desk.NotMarked, time.Date(2031, 3, 12, 8, 0, 0, 0, loc), ""},
		{"confirmed", desk.NoShow, time.Date(2031, 3, 12, 14, 29, 0, 0, loc), desk.CodeNoShowTooEarly},
		{"confirmed", desk.NoShow, start, ""},
		{"confirmed", desk.NotMarked, time.Date(2031, 3, 12, 23, 59, 59, 0, loc), ""},
		{"confirmed", desk.NotMarked, time.Date(2031, 3, 13, 0, 0, 0, 0, loc), desk.CodeAttendanceClosed},
		{"confirmed", desk.NoShow, time.Date(2031, 3, 13, 9, 0, 0, 0, loc), desk.CodeAttendanceClosed},
		{"cancelled", desk.Arrived, start, apperr.CodeBookingNotActive},
		{"rescheduled", desk.NotMarked, start, apperr.CodeBookingNotActive},
	}
	for _, tc := range cases {
		err := desk.AttendanceAllowed(tc.status, start, tc.mark, tc.now, loc)
		if got := apperr.CodeOf(err); got != tc.code {
			t.Errorf("%s %q at %s: %q (%v), want %q", tc.status, tc.mark, tc.now.Format(time.DateTime), got, err, tc.code)
		}
	}
}

// NoShows counts the clinic's no-shows of one patient by e-mail (case
// aside) or phone digits, and nothing of other patients or clinics.
func TestAttendanceNoShowsCount(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	loc := testkit.Zone(t, c.Timezone)
	svc := desk.NewBookings(pool, nil, booking.NewService(pool), nil)
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleReception)
	ctx := context.Background()
	noShow := func(cl testkit.Clinic, day int, p booking.Patient) {
		b := bookAt(t, pool, cl, 0, today(loc, day, 10, 0), p)
		if _, err := pool.Exec(ctx, `UPDATE bookings SET attendance = 'no_show' WHERE id = $1`, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	noShow(c, -3, booking.Patient{Name: "Ada", Email: "Ada.Patient@Example.org"})
	noShow(c, -2, booking.Patient{Name: "Ada", Email: "other@example.org", Phone: "+49 30 1234-567"})
	noShow(c, -1, booking.Patient{Name: "Bob", Email: "bob@example.org", Phone: "+49 30 999"})
	noShow(other, -1, booking.Patient{Name: "Ada", Email: "ada.patient@example.org", Phone: "4930 1234567"})
	bookAt(t, pool, c, 0, today(loc, -4, 10, 0), booking.Patient{Name: "Ada", Email: "ada.patient@example.org"}) // came

	for _, tc := range []struct {
		email, phone string
		want         int
	}{
		{"ada.patient@example.org", "", 1},
		{"  ADA.PATIENT@EXAMPLE.ORG ", "", 1},
		{"", "(0049) 30 1234567", 0}, // other digits
		{"", "49301234567", 1},
		{"ada.patient@example.org", "+49-30-1234567", 2},
		{"", "", 0},
		{"nobody@example.org", "", 0},
		{"", "+49 30 999", 1},
	} {
		n, err := svc.NoShows(ctx, u, tc.email, tc.phone)
		if err != nil || n != tc.want {
			t.Errorf("NoShows(%q, %q) = %d, %v; want %d", tc.email, tc.phone, n, err, tc.want)
		}
	}
}

// The day sheet lists every active specialist in the clinic's order, each
// with their bookings that start that day, attendance included.
func TestAttendanceDaySheet(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 2})
	loc := testkit.Zone(t, c.Timezone)
	svc := desk.NewBookings(pool, nil, booking.NewService(pool), nil)
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleReception)
	ctx := context.Background()
	day := availability.DateOf(today(loc, 2, 12, 0), loc)
	late := bookAt(t, pool, c, 1, today(loc, 2, 16, 0), booking.Patient{Name: "Late", Email: "late@example.org"})
	early := bookAt(t, pool, c, 1, today(loc, 2, 9, 0), booking.Patient{Name: "Early", Email: "early@example.org", Phone: "030 12345"})
	bookAt(t, pool, c, 0, today(loc, 3, 9, 0), booking.Patient{Name: "Next day", Email: "next@example.org"})
	if _, err := pool.Exec(ctx, `UPDATE bookings SET attendance = 'arrived' WHERE id = $1`, early.ID); err != nil {
		t.Fatal(err)
	}

	sheet, err := svc.DaySheet(ctx, u, day)
	if err != nil {
		t.Fatal(err)
	}
	if len(sheet.Specialists) != 2 || sheet.Specialists[0].Specialist.ID != c.Specialists[0].ID {
		t.Fatalf("specialists %+v", sheet.Specialists)
	}
	if n := len(sheet.Specialists[0].Bookings); n != 0 {
		t.Errorf("the first specialist has %d bookings that day, want none", n)
	}
	got := sheet.Specialists[1].Bookings
	if len(got) != 2 || got[0].ID != early.ID || got[1].ID != late.ID || got[0].Attendance != desk.Arrived || got[0].PatientPhone != "030 12345" {
		t.Errorf("the second specialist's day: %+v", got)
	}
}
