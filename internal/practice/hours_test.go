package practice_test

// The weekly hours: two editors saving one specialist's week, the current
// values a stale save is told, and the parsing and checking of ranges.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// Two staff members save the same specialist's week at the same moment,
// both from a form opened at the same version: exactly one save wins, the
// other is told CONCURRENCY_CONFLICT, and the audit log has exactly one
// hours.update row for the round. Twenty rounds, each released at a barrier.
func TestStaffSetWeeklyHoursConcurrentEditsOneWins(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0]
	var notified atomic.Int64
	svc := practice.New(pool, func(context.Context, uuid.UUID) { notified.Add(1) })
	editors := []staff.User{testkit.StaffUser(t, pool, c.ID, staff.RoleStaff), testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)}
	ctx := context.Background()

	const rounds = 20
	wins := [2]int{}
	for round := range rounds {
		cur, err := svc.Specialist(ctx, editors[0], sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Each editor saves a different week, so the winner is visible in the rows.
		weeks := [2][]practice.Range{
			{{Weekday: time.Monday, StartMin: 8 * 60, EndMin: 12*60 + round}, {Weekday: time.Wednesday, StartMin: 13 * 60, EndMin: 17 * 60}},
			{{Weekday: time.Tuesday, StartMin: 7 * 60, EndMin: 11*60 + round}, {Weekday: time.Tuesday, StartMin: 12 * 60, EndMin: 16 * 60}},
		}
		before := testkit.CountAction(testkit.AuditRows(t, pool, "specialist", sp.ID.String()), "hours.update")
		notifiedBefore := notified.Load()

		var ready, done sync.WaitGroup
		barrier := make(chan struct{})
		errs := make([]error, 2)
		for i := range 2 {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				<-barrier
				_, errs[i] = svc.SetWeeklyHours(ctx, editors[i], sp.ID, cur.Version, weeks[i])
			}()
		}
		ready.Wait()
		close(barrier)
		done.Wait()

		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner != -1 {
					t.Fatalf("round %d: both saves at version %d succeeded: one overwrote the other", round, cur.Version)
				}
				winner = i
			}
		}
		if winner == -1 {
			t.Fatalf("round %d: neither save succeeded: %v / %v", round, errs[0], errs[1])
		}
		wins[winner]++
		loser := errs[1-winner]
		ae := apperr.As(loser)
		if ae == nil || ae.Code != "CONCURRENCY_CONFLICT" || ae.Kind != apperr.PreconditionFailed {
			t.Fatalf("round %d: the losing save got %v, want CONCURRENCY_CONFLICT (412)", round, loser)
		}
		if !strings.Contains(ae.Message, "changed by someone else") {
			t.Errorf("round %d: the conflict says %q", round, ae.Message)
		}

		rows := testkit.AuditRows(t, pool, "specialist", sp.ID.String())
		if n := testkit.CountAction(rows, "hours.update") - before; n != 1 {
			t.Fatalf("round %d: %d hours.update audit rows for two concurrent saves, want exactly 1", round, n)
		}
		last := rows[len(rows)-1]
		if last.Action != "hours.update" || last.Actor != editors[winner].Actor() {
			t.Fatalf("round %d: last audit row %s by %s, want hours.update by the winner %s", round, last.Action, last.Actor, editors[winner].Actor())
		}
		var after struct {
			Hours []practice.Range `json:"hours"`
		}
		if err := json.Unmarshal(last.After, &after); err != nil || !slices.Equal(sortRanges(after.Hours), sortRanges(weeks[winner])) {
			t.Fatalf("round %d: the audit row's after %s is not the winner's week %v", round, last.After, weeks[winner])
		}
		if got := hoursOf(t, pool, sp.ID); !slices.Equal(got, sortRanges(weeks[winner])) {
			t.Fatalf("round %d: stored week %v, want the winner's %v (no mix of the two)", round, got, sortRanges(weeks[winner]))
		}
		now, err := svc.Specialist(ctx, editors[0], sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if now.Version != cur.Version+1 {
			t.Fatalf("round %d: version %d after one save from %d", round, now.Version, cur.Version)
		}
		if n := notified.Load() - notifiedBefore; n != 1 {
			t.Fatalf("round %d: the change notifier ran %d times, want once (for the committed save only)", round, n)
		}
	}
	t.Logf("wins over %d rounds: editor A %d, editor B %d", rounds, wins[0], wins[1])
}

// A stale save is told the current values. Sequentially, the values it is
// given are those the winner saved.
func TestStaffSetWeeklyHoursStaleCarriesTheCurrentHours(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0]
	svc := practice.New(pool, nil)
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
	ctx := context.Background()

	first := []practice.Range{{Weekday: time.Monday, StartMin: 600, EndMin: 720}}
	if _, err := svc.SetWeeklyHours(ctx, u, sp.ID, sp.Version, first); err != nil {
		t.Fatal(err)
	}
	_, err := svc.SetWeeklyHours(ctx, u, sp.ID, sp.Version, []practice.Range{{Weekday: time.Friday, StartMin: 600, EndMin: 720}})
	testkit.WantCode(t, err, "CONCURRENCY_CONFLICT", "second save at the old version")
	if got := currentHours(t, err); !slices.Equal(got, first) {
		t.Fatalf("the conflict carries %v as the current hours, want %v", got, first)
	}
	if got := hoursOf(t, pool, sp.ID); !slices.Equal(got, first) {
		t.Fatalf("the stale save changed the week to %v", got)
	}
}

// The stale answer of a save that raced another must carry the hours as
// they are once the other save committed, not as they were when the losing
// transaction started: the second editor is to redo their change on top of
// the current values. The other editor's save is held open in a
// transaction of the test, so the interleaving is exact.
func TestStaffSetWeeklyHoursStaleAfterARaceCarriesTheWinnersHours(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0]
	svc := practice.New(pool, nil)
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
	ctx := context.Background()

	// The other editor: bump the version and replace the week, not yet committed.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	q := db.New(tx)
	if _, err := q.SpecialistBumpVersion(ctx, db.SpecialistBumpVersionParams{ID: sp.ID, ClinicID: c.ID, Version: sp.Version}); err != nil {
		t.Fatal(err)
	}
	if err := q.WeeklyHoursDeleteBySpecialist(ctx, sp.ID); err != nil {
		t.Fatal(err)
	}
	winners := []practice.Range{{Weekday: time.Saturday, StartMin: 8 * 60, EndMin: 10 * 60}}
	if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(time.Saturday), StartMin: 8 * 60, EndMin: 10 * 60}); err != nil {
		t.Fatal(err)
	}
	var otherPID int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&otherPID); err != nil {
		t.Fatal(err)
	}

	// This editor saves at the same version; its bump waits for the other's lock.
	res := make(chan error, 1)
	go func() {
		_, err := svc.SetWeeklyHours(ctx, u, sp.ID, sp.Version, []practice.Range{{Weekday: time.Sunday, StartMin: 600, EndMin: 660}})
		res <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, otherPID).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-res:
			t.Fatalf("the save returned (%v) before the other editor committed: it did not wait for the row lock", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the save never waited on the specialist's row lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err = <-res
	testkit.WantCode(t, err, "CONCURRENCY_CONFLICT", "the save that lost the race")
	if got := hoursOf(t, pool, sp.ID); !slices.Equal(got, winners) {
		t.Fatalf("stored week %v, want the winner's %v", got, winners)
	}
	if got := currentHours(t, err); !slices.Equal(got, winners) {
		t.Errorf("the conflict tells the loser the current hours are %v, but they are %v (the winner's): "+
			"SetWeeklyHours reads the old hours before its version bump waits for the winner, and reports that stale read", got, winners)
	}
}

func TestStaffValidateRanges(t *testing.T) {
	t.Parallel()
	r := func(wd time.Weekday, a, b string) practice.Range {
		s, err := practice.ParseClock("x", a)
		if err != nil {
			t.Fatal(err)
		}
		e, err := practice.ParseClock("x", b)
		if err != nil {
			t.Fatal(err)
		}
		return practice.Range{Weekday: wd, StartMin: s, EndMin: e}
	}
	cases := []struct {
		name  string
		in    []practice.Range
		field string // "" when valid
		msg   string
	}{
		{"Empty", nil, "", ""},
		{"TwoRangesADay", []practice.Range{r(time.Monday, "08:30", "12:30"), r(time.Monday, "13:30", "17:00")}, "", ""},
		{"TouchingIsFine", []practice.Range{r(time.Monday, "08:00", "12:00"), r(time.Monday, "12:00", "13:00")}, "", ""},
		{"SameTimesOtherDays", []practice.Range{r(time.Monday, "09:00", "12:00"), r(time.Tuesday, "09:00", "12:00")}, "", ""},
		{"UntilMidnight", []practice.Range{r(time.Sunday, "20:00", "24:00")}, "", ""},
		{"Overlap", []practice.Range{r(time.Monday, "09:00", "12:00"), r(time.Monday, "11:00", "13:00")}, "hours.monday", "Monday: 09:00–12:00 overlaps 11:00–13:00."},
		{"OverlapGivenOutOfOrder", []practice.Range{r(time.Friday, "11:00", "13:00"), r(time.Friday, "09:00", "12:00")}, "hours.friday", "overlaps"},
		{"Contained", []practice.Range{r(time.Monday, "09:00", "17:00"), r(time.Monday, "10:00", "11:00")}, "hours.monday", "overlaps"},
		{"EndBeforeStart", []practice.Range{r(time.Tuesday, "12:00", "09:00")}, "hours.tuesday", "Tuesday: 12:00–09:00 ends before it starts."},
		{"EmptyRange", []practice.Range{r(time.Tuesday, "09:00", "09:00")}, "hours.tuesday", "ends before it starts"},
		{"OutsideTheDay", []practice.Range{{Weekday: time.Wednesday, StartMin: -30, EndMin: 60}}, "hours.wednesday", "within the day"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := practice.ValidateRanges(tc.in)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("valid week refused: %v", err)
				}
				return
			}
			ae := apperr.As(err)
			if ae == nil || ae.Kind != apperr.Invalid || ae.Field() != tc.field || !strings.Contains(ae.Message, tc.msg) {
				t.Fatalf("got %v, want INVALID_ARGUMENT on %s containing %q", err, tc.field, tc.msg)
			}
		})
	}
}

func TestStaffParseClock(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"00:00": 0, "09:30": 570, " 17:05 ": 1025, "24:00": 1440, "9:05": 545} {
		if got, err := practice.ParseClock("f", in); err != nil || got != want {
			t.Errorf("ParseClock(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "noon", "25:00", "24:30", "10:60", "-1:00", "10"} {
		_, err := practice.ParseClock("start", in)
		if ae := apperr.As(err); ae == nil || ae.Field() != "start" {
			t.Errorf("ParseClock(%q) = %v; want INVALID_ARGUMENT on start", in, err)
		}
	}
}
