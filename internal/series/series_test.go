package series_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/series"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type env struct {
	svc    *series.Service
	holds  *holds.Store
	clinic testkit.Clinic
	loc    *time.Location
	clerk  staff.User
	pool   *pgxpool.Pool
	count  func(t *testing.T, sql string, args ...any) int
}

// setup wires the series service as the server does: the slot cache and
// the holds follow every committed booking change.
func setup(t *testing.T) *env {
	t.Helper()
	pool := testkit.DB(t)
	rdb := testkit.Redis(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{{
		Name: "Physiotherapy", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 200, MaxHoldsPerClient: 1,
	}}})
	bookings := booking.NewService(pool)
	store := holds.NewStore(rdb, 0, quiet)
	sl := slots.New(pool, rdb, slots.Options{Holds: store, Logger: quiet, NoCache: true})
	co := checkout.New(pool, store, sl, bookings, quiet, checkout.Limits{})
	bookings.Observe(sl.OnBookingChange)
	bookings.Observe(co.OnBookingChange)
	t.Cleanup(func() {
		if active, err := store.Active(context.Background(), c.ID); err == nil {
			for _, h := range active {
				_, _ = store.Release(context.Background(), h.HoldID, h.ClientID)
			}
		}
	})
	e := &env{svc: series.New(pool, sl, store, bookings), holds: store, clinic: c, loc: testkit.Zone(t, c.Timezone), pool: pool,
		clerk: testkit.StaffUser(t, pool, c.ID, staff.RoleReception)}
	e.count = func(t *testing.T, sql string, args ...any) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return e
}

// weekly is a weekly series of n sessions from first.
func (e *env) weekly(t *testing.T, first time.Time, n int) []time.Time {
	t.Helper()
	starts, err := series.Dates(first, e.loc, series.Rhythm{EveryDays: 7, Count: n})
	if err != nil {
		t.Fatal(err)
	}
	return starts
}

func (e *env) book(u staff.User, starts []time.Time, name string) (booking.SeriesBooked, error) {
	return e.svc.Book(context.Background(), u, series.BookRequest{
		AppointmentTypeID: e.clinic.Types[0].ID, SpecialistID: e.clinic.Specialists[0].ID,
		Rhythm: series.Rhythm{EveryDays: 7, Count: len(starts)}, Planned: len(starts), Starts: starts,
		Patient: booking.Patient{Name: name, Email: "patient@example.org"},
	})
}

// Every session of a weekly series keeps the first one's wall-clock time
// in the clinic's zone when daylight-saving time begins between them: the
// instants move by the hour the clocks do.
func TestDatesKeepTheWallClockAcrossDST(t *testing.T) {
	t.Parallel()
	berlin := testkit.Zone(t, "Europe/Berlin")
	first := time.Date(2027, 3, 16, 9, 0, 0, 0, berlin) // CET; clocks go forward on 28 March
	got, err := series.Dates(first, berlin, series.Rhythm{EveryDays: 7, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2027-03-16T08:00:00Z", "2027-03-23T08:00:00Z", "2027-03-30T07:00:00Z", "2027-04-06T07:00:00Z"}
	for i, g := range got {
		if g.Format(time.RFC3339) != want[i] {
			t.Errorf("session %d at %s, want %s", i+1, g.Format(time.RFC3339), want[i])
		}
	}
	until, err := series.Dates(first, berlin, series.Rhythm{EveryDays: 14, Until: availability.Date{Year: 2027, Month: 4, Day: 13}})
	if err != nil || len(until) != 3 {
		t.Fatalf("every two weeks until 13 April: %v, %v; want 3 sessions", until, err)
	}
	if _, err := series.Dates(first, berlin, series.Rhythm{EveryDays: 1, Until: availability.Date{Year: 2028, Month: 1, Day: 1}}); apperr.As(err) == nil || apperr.As(err).Field() != "until" {
		t.Errorf("a series of more than %d sessions: %v, want INVALID_ARGUMENT naming until", booking.MaxSeriesSessions, err)
	}
}

// A weekly series booked across the change to summer time: each session
// is booked at 09:00 in the clinic's zone.
func TestBookWeeklySeriesAcrossDST(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// The first Tuesday at least a week before the next change to summer
	// time in Berlin (the last Sunday of March), so six weekly sessions
	// cross it.
	now := time.Now().In(e.loc)
	year := now.Year()
	if now.Month() >= time.March {
		year++
	}
	first := time.Date(year, 3, 31, 9, 0, 0, 0, e.loc)
	for first.Weekday() != time.Sunday {
		first = first.AddDate(0, 0, -1)
	}
	first = first.AddDate(0, 0, -12) // a Tuesday, two weeks before the change
	if first.Sub(now) > 190*24*time.Hour {
		t.Skip("the next change to summer time is beyond the type's window")
	}
	starts := e.weekly(t, first, 6)
	got, err := e.book(e.clerk, starts, "Ada Course")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 6 {
		t.Fatalf("%d sessions booked, want 6", len(got.Sessions))
	}
	offsets := map[int]bool{}
	for i, c := range got.Sessions {
		local := c.Booking.Start.In(e.loc)
		if local.Hour() != 9 || local.Minute() != 0 || local.Weekday() != time.Tuesday {
			t.Errorf("session %d at %s, want Tuesday 09:00 local", i+1, local)
		}
		if c.Booking.SeriesID != got.SeriesID || c.Booking.SeriesPosition != i+1 {
			t.Errorf("session %d: series %s position %d, want %s position %d", i+1, c.Booking.SeriesID, c.Booking.SeriesPosition, got.SeriesID, i+1)
		}
		_, off := local.Zone()
		offsets[off] = true
	}
	if len(offsets) != 2 {
		t.Errorf("the sessions have %d UTC offsets, want 2 (the series crosses the change)", len(offsets))
	}
}

// A plan lists the sessions that are free first, and for one that is
// booked or held (a patient's hold, a waitlist offer's) the nearest free
// times of the same specialist; booking a time that is held is refused
// with the time named and nothing written.
func TestPlanShowsTakenAndHeldTimesWithAlternatives(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	first := testkit.NextWeekday(time.Now(), e.loc, time.Wednesday, 10, 0)
	starts := e.weekly(t, first, 4)
	sp, typ := e.clinic.Specialists[0].ID, e.clinic.Types[0].ID
	if _, err := e.book(e.clerk, starts[1:2], "Someone Else"); err != nil {
		t.Fatal(err)
	}
	h, err := e.holds.Claim(ctx, holds.ClaimRequest{ClientID: "patient-client-1", ClinicID: e.clinic.ID, AppointmentTypeID: typ,
		SpecialistID: sp, Start: starts[2], End: starts[2].Add(30 * time.Minute), Quota: 1})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := e.svc.Plan(ctx, e.clerk, series.PlanRequest{AppointmentTypeID: typ, SpecialistID: sp, First: first,
		Rhythm: series.Rhythm{EveryDays: 7, Count: 4}})
	if err != nil {
		t.Fatal(err)
	}
	free := []bool{true, false, false, true}
	for i, s := range plan.Sessions {
		if s.Free != free[i] {
			t.Errorf("session %d free = %v, want %v", i+1, s.Free, free[i])
		}
		if s.Free != (len(s.Alternatives) == 0) {
			t.Errorf("session %d: %d alternatives", i+1, len(s.Alternatives))
		}
	}
	alt := plan.Sessions[1].Alternatives
	if len(alt) != series.Alternatives || !alt[0].Equal(starts[1].Add(-30*time.Minute)) || !alt[1].Equal(starts[1].Add(30*time.Minute)) {
		t.Errorf("alternatives of a booked 10:00: %v, want 09:30 and 10:30 first", alt)
	}

	_, err = e.book(e.clerk, []time.Time{starts[0], starts[2], starts[3]}, "Ada Course")
	if apperr.CodeOf(err) != apperr.CodeSlotTaken || apperr.As(err).Details["slotStartDate"] != starts[2].Format(time.RFC3339) {
		t.Fatalf("a series over a held time: %v, want SLOT_TAKEN naming %s", err, starts[2].Format(time.RFC3339))
	}
	if n := e.count(t, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND patient_name = 'Ada Course'`, e.clinic.ID); n != 0 {
		t.Errorf("%d sessions written of a refused series, want 0", n)
	}
	if _, err := e.holds.Release(ctx, h.HoldID, "patient-client-1"); err != nil {
		t.Fatal(err)
	}
	chosen := []time.Time{starts[0], alt[0], starts[2], starts[3]}
	got, err := e.book(e.clerk, chosen, "Ada Course")
	if err != nil {
		t.Fatalf("the free times and an alternative: %v", err)
	}
	if len(got.Sessions) != 4 || !got.Sessions[1].Booking.Start.Equal(alt[0]) {
		t.Errorf("booked %d sessions, the second at %v; want 4, the second at %v", len(got.Sessions), got.Sessions[1].Booking.Start, alt[0])
	}
	if left, err := e.holds.Active(ctx, e.clinic.ID); err != nil || len(left) != 0 {
		t.Errorf("holds left after the series: %v (%v), want none (spent)", left, err)
	}
}

// Two receptionists book overlapping series of the same specialist at
// the same moment: one of them books all of theirs, the other nothing
// (no part of a series is booked unless chosen), and every contested
// time is booked once.
func TestOverlappingSeriesRaceOneWins(t *testing.T) {
	t.Parallel()
	e := setup(t)
	other := testkit.StaffUser(t, e.pool, e.clinic.ID, staff.RoleReception)
	first := testkit.NextWeekday(time.Now(), e.loc, time.Thursday, 9, 0)
	for round := range 4 {
		at := first.Add(time.Duration(round) * time.Hour)
		all := e.weekly(t, at, 6)
		mine, theirs := all[:4], all[2:] // weeks 3 and 4 are contested
		users := []staff.User{e.clerk, other}
		names := []string{"Ada Course", "Bea Course"}
		won := make([]booking.SeriesBooked, 2)
		errs := testkit.Race(2, func(i int) error {
			var err error
			won[i], err = e.book(users[i], [][]time.Time{mine, theirs}[i], names[i])
			return err
		})
		winners := 0
		for i, err := range errs {
			switch {
			case err == nil:
				winners++
				if len(won[i].Sessions) != 4 {
					t.Errorf("round %d: the winner has %d sessions, want 4", round, len(won[i].Sessions))
				}
			case apperr.CodeOf(err) != apperr.CodeSlotTaken:
				t.Errorf("round %d: the loser's error %v, want SLOT_TAKEN", round, err)
			}
		}
		if winners != 1 {
			t.Errorf("round %d: %d series booked, want exactly 1 (%v)", round, winners, errs)
		}
		n := e.count(t, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed' AND slot_start = ANY($2)`, e.clinic.ID, all)
		if n != 4 {
			t.Errorf("round %d: %d of the six weeks booked, want the winner's 4", round, n)
		}
		for _, st := range all[2:4] {
			if n := e.count(t, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed' AND slot_start = $2`, e.clinic.ID, st); n != 1 {
				t.Errorf("round %d: the contested %s booked %d times, want once", round, st, n)
			}
		}
	}
}

// A session moved to another time keeps its place in the series: the
// series lists it once, at its new time, and the other sessions as they
// were.
func TestMovedSessionKeepsItsPlace(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first := time.Now().In(e.loc).AddDate(0, 0, 7)
	first = time.Date(first.Year(), first.Month(), first.Day(), 9, 0, 0, 0, e.loc)
	for first.Weekday() != time.Tuesday {
		first = first.AddDate(0, 0, 1)
	}
	got, err := e.book(e.clerk, e.weekly(t, first, 3), "Ada Course")
	if err != nil {
		t.Fatal(err)
	}
	bookings := booking.NewService(e.pool)
	second := got.Sessions[1].Booking
	moved, err := bookings.Reschedule(context.Background(), booking.RescheduleRequest{BookingID: second.ID, ClinicID: e.clinic.ID,
		Start: second.Start.Add(time.Hour), Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if moved.SeriesID != got.SeriesID || moved.SeriesPosition != 2 {
		t.Errorf("the moved session: series %s position %d, want %s position 2", moved.SeriesID, moved.SeriesPosition, got.SeriesID)
	}
	sessions, err := bookings.SeriesSessions(context.Background(), got.SeriesID, e.clinic.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 3 || sessions[1].ID != moved.ID || !sessions[1].Start.Equal(second.Start.Add(time.Hour)) {
		t.Errorf("the series after the move: %d sessions, the second %v, want 3 with the moved one second", len(sessions), sessions)
	}
}

// One series form submitted twice at the same moment (a double click)
// books once: both answers are the one series' receipt, released together
// at a barrier, four rounds. A repeat afterwards answers the same and books
// nothing; the key with other times is refused.
func TestDoubleSubmittedSeriesBooksOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first := testkit.NextWeekday(time.Now(), e.loc, time.Friday, 9, 0)
	for round := range 4 {
		starts := e.weekly(t, first.Add(time.Duration(round)*time.Hour), 3)
		req := series.BookRequest{
			AppointmentTypeID: e.clinic.Types[0].ID, SpecialistID: e.clinic.Specialists[0].ID,
			Rhythm: series.Rhythm{EveryDays: 7, Count: 3}, Planned: 3, Starts: starts,
			Patient: booking.Patient{Name: "Dee Double", Email: "dee@example.org"}, IdempotencyKey: uuid.NewString(),
		}
		got := make([]booking.SeriesBooked, 2)
		errs := testkit.Race(2, func(i int) error {
			var err error
			got[i], err = e.svc.Book(context.Background(), e.clerk, req)
			return err
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: submit %d: %v, want the series booked", round, i, err)
			}
		}
		a, b := got[0].Receipt(), got[1].Receipt()
		if a.SeriesID != b.SeriesID || len(a.Bookings) != 3 || len(b.Bookings) != 3 || a.ManageToken == "" || a.ManageToken != b.ManageToken {
			t.Errorf("round %d: the two answers differ or lack sessions: %+v and %+v", round, a, b)
		}
		if (got[0].Replay == nil) == (got[1].Replay == nil) {
			t.Errorf("round %d: want one booking and one replay, got replays %v and %v", round, got[0].Replay != nil, got[1].Replay != nil)
		}
		if n := e.count(t, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed' AND slot_start = ANY($2)`, e.clinic.ID, starts); n != 3 {
			t.Errorf("round %d: %d sessions booked, want 3", round, n)
		}
		again, err := e.svc.Book(context.Background(), e.clerk, req)
		if err != nil || again.Receipt().SeriesID != a.SeriesID {
			t.Errorf("round %d: a later repeat answers %+v, %v; want the series' receipt", round, again.Receipt(), err)
		}
		other := req
		other.Starts = starts[:2]
		if _, err := e.svc.Book(context.Background(), e.clerk, other); apperr.CodeOf(err) != apperr.CodeIdempotencyMismatch {
			t.Errorf("round %d: the key with other times: %v, want IDEMPOTENCY_MISMATCH", round, err)
		}
	}
	if n := e.count(t, `SELECT count(*) FROM series WHERE clinic_id = $1`, e.clinic.ID); n != 4 {
		t.Errorf("%d series written, want 4 (one a round)", n)
	}
}
