package staff_test

// Tests of the staff service against the real PostgreSQL of testkit: the
// concurrency of two editors saving one specialist's week, the version
// and audit rules every change follows, roles, and clinic scoping. Each
// test makes its own clinic, so they run in parallel.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

const testPassword = "correct horse battery"

var (
	hashOnce sync.Once
	hash     string
)

// passwordHash is testPassword's bcrypt hash at the lowest cost, so
// sign-ins in tests are quick (Authenticate compares at the stored cost).
func passwordHash(t testing.TB) string {
	hashOnce.Do(func() {
		h, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
		if err != nil {
			panic(err)
		}
		hash = string(h)
	})
	return hash
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newUser makes a staff account of the clinic and returns it as the
// service sees a signed-in user.
func newUser(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID, role string) staff.User {
	t.Helper()
	email := role + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16] + "@example.org"
	row, err := db.New(pool).StaffUserUpsert(context.Background(), db.StaffUserUpsertParams{
		ClinicID: clinicID, Email: email, Name: "Test " + role, PasswordHash: passwordHash(t), Role: role,
	})
	if err != nil {
		t.Fatalf("create staff user: %v", err)
	}
	return staff.User{ID: row.ID, ClinicID: row.ClinicID, Email: row.Email, Name: row.Name, Role: row.Role}
}

func auditRows(t testing.TB, pool *pgxpool.Pool, entity, id string) []db.AuditLog {
	t.Helper()
	rows, err := db.New(pool).AuditListByEntity(context.Background(), db.AuditListByEntityParams{Entity: entity, EntityID: id})
	if err != nil {
		t.Fatalf("audit rows: %v", err)
	}
	return rows
}

func countAction(rows []db.AuditLog, action string) int {
	n := 0
	for _, r := range rows {
		if r.Action == action {
			n++
		}
	}
	return n
}

func auditCount(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID) int64 {
	t.Helper()
	n, err := db.New(pool).AuditCountByClinic(context.Background(), clinicID)
	if err != nil {
		t.Fatalf("count audit rows: %v", err)
	}
	return n
}

func hoursOf(t testing.TB, pool *pgxpool.Pool, specialistID uuid.UUID) []staff.Range {
	t.Helper()
	rows, err := db.New(pool).WeeklyHoursListBySpecialist(context.Background(), specialistID)
	if err != nil {
		t.Fatalf("weekly hours: %v", err)
	}
	out := make([]staff.Range, len(rows))
	for i, r := range rows {
		out[i] = staff.Range{Weekday: time.Weekday(r.Weekday), StartMin: int(r.StartMin), EndMin: int(r.EndMin)}
	}
	return out
}

func sortRanges(rs []staff.Range) []staff.Range {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b staff.Range) int {
		if a.Weekday != b.Weekday {
			return int(a.Weekday) - int(b.Weekday)
		}
		return a.StartMin - b.StartMin
	})
	return rs
}

func wantCode(t testing.TB, err error, code string, what string) {
	t.Helper()
	if got := apperr.CodeOf(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %s", what, err, got, code)
	}
}

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
	svc := staff.New(pool, func(context.Context, uuid.UUID) { notified.Add(1) }, quietLogger())
	editors := []staff.User{newUser(t, pool, c.ID, staff.RoleStaff), newUser(t, pool, c.ID, staff.RoleStaff)}
	ctx := context.Background()

	const rounds = 20
	wins := [2]int{}
	for round := range rounds {
		cur, err := svc.Specialist(ctx, editors[0], sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Each editor saves a different week, so the winner is visible in the rows.
		weeks := [2][]staff.Range{
			{{Weekday: time.Monday, StartMin: 8 * 60, EndMin: 12*60 + round}, {Weekday: time.Wednesday, StartMin: 13 * 60, EndMin: 17 * 60}},
			{{Weekday: time.Tuesday, StartMin: 7 * 60, EndMin: 11*60 + round}, {Weekday: time.Tuesday, StartMin: 12 * 60, EndMin: 16 * 60}},
		}
		before := countAction(auditRows(t, pool, "specialist", sp.ID.String()), "hours.update")
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

		rows := auditRows(t, pool, "specialist", sp.ID.String())
		if n := countAction(rows, "hours.update") - before; n != 1 {
			t.Fatalf("round %d: %d hours.update audit rows for two concurrent saves, want exactly 1", round, n)
		}
		last := rows[len(rows)-1]
		if last.Action != "hours.update" || last.Actor != editors[winner].Actor() {
			t.Fatalf("round %d: last audit row %s by %s, want hours.update by the winner %s", round, last.Action, last.Actor, editors[winner].Actor())
		}
		var after struct {
			Hours []staff.Range `json:"hours"`
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
	svc := staff.New(pool, nil, quietLogger())
	u := newUser(t, pool, c.ID, staff.RoleStaff)
	ctx := context.Background()

	first := []staff.Range{{Weekday: time.Monday, StartMin: 600, EndMin: 720}}
	if _, err := svc.SetWeeklyHours(ctx, u, sp.ID, sp.Version, first); err != nil {
		t.Fatal(err)
	}
	_, err := svc.SetWeeklyHours(ctx, u, sp.ID, sp.Version, []staff.Range{{Weekday: time.Friday, StartMin: 600, EndMin: 720}})
	wantCode(t, err, "CONCURRENCY_CONFLICT", "second save at the old version")
	if got := currentHours(t, err); !slices.Equal(got, first) {
		t.Fatalf("the conflict carries %v as the current hours, want %v", got, first)
	}
	if got := hoursOf(t, pool, sp.ID); !slices.Equal(got, first) {
		t.Fatalf("the stale save changed the week to %v", got)
	}
}

func currentHours(t testing.TB, err error) []staff.Range {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil {
		t.Fatalf("not an app error: %v", err)
	}
	b, _ := json.Marshal(ae.Details["current"])
	var cur struct {
		Hours []staff.Range `json:"hours"`
	}
	if err := json.Unmarshal(b, &cur); err != nil {
		t.Fatalf("details.current %s: %v", b, err)
	}
	return sortRanges(cur.Hours)
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
	svc := staff.New(pool, nil, quietLogger())
	u := newUser(t, pool, c.ID, staff.RoleStaff)
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
	winners := []staff.Range{{Weekday: time.Saturday, StartMin: 8 * 60, EndMin: 10 * 60}}
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
		_, err := svc.SetWeeklyHours(ctx, u, sp.ID, sp.Version, []staff.Range{{Weekday: time.Sunday, StartMin: 600, EndMin: 660}})
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
	wantCode(t, err, "CONCURRENCY_CONFLICT", "the save that lost the race")
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
	r := func(wd time.Weekday, a, b string) staff.Range {
		s, err := staff.ParseClock("x", a)
		if err != nil {
			t.Fatal(err)
		}
		e, err := staff.ParseClock("x", b)
		if err != nil {
			t.Fatal(err)
		}
		return staff.Range{Weekday: wd, StartMin: s, EndMin: e}
	}
	cases := []struct {
		name  string
		in    []staff.Range
		field string // "" when valid
		msg   string
	}{
		{"Empty", nil, "", ""},
		{"TwoRangesADay", []staff.Range{r(time.Monday, "08:30", "12:30"), r(time.Monday, "13:30", "17:00")}, "", ""},
		{"TouchingIsFine", []staff.Range{r(time.Monday, "08:00", "12:00"), r(time.Monday, "12:00", "13:00")}, "", ""},
		{"SameTimesOtherDays", []staff.Range{r(time.Monday, "09:00", "12:00"), r(time.Tuesday, "09:00", "12:00")}, "", ""},
		{"UntilMidnight", []staff.Range{r(time.Sunday, "20:00", "24:00")}, "", ""},
		{"Overlap", []staff.Range{r(time.Monday, "09:00", "12:00"), r(time.Monday, "11:00", "13:00")}, "hours.monday", "Monday: 09:00–12:00 overlaps 11:00–13:00."},
		{"OverlapGivenOutOfOrder", []staff.Range{r(time.Friday, "11:00", "13:00"), r(time.Friday, "09:00", "12:00")}, "hours.friday", "overlaps"},
		{"Contained", []staff.Range{r(time.Monday, "09:00", "17:00"), r(time.Monday, "10:00", "11:00")}, "hours.monday", "overlaps"},
		{"EndBeforeStart", []staff.Range{r(time.Tuesday, "12:00", "09:00")}, "hours.tuesday", "Tuesday: 12:00–09:00 ends before it starts."},
		{"EmptyRange", []staff.Range{r(time.Tuesday, "09:00", "09:00")}, "hours.tuesday", "ends before it starts"},
		{"OutsideTheDay", []staff.Range{{Weekday: time.Wednesday, StartMin: -30, EndMin: 60}}, "hours.wednesday", "within the day"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := staff.ValidateRanges(tc.in)
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
		if got, err := staff.ParseClock("f", in); err != nil || got != want {
			t.Errorf("ParseClock(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "noon", "25:00", "24:30", "10:60", "-1:00", "10"} {
		_, err := staff.ParseClock("start", in)
		if ae := apperr.As(err); ae == nil || ae.Field() != "start" {
			t.Errorf("ParseClock(%q) = %v; want INVALID_ARGUMENT on start", in, err)
		}
	}
}

// A wrong e-mail and a wrong password fail the same way.
func TestStaffAuthenticate(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := staff.New(pool, nil, quietLogger())
	u := newUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()

	got, err := svc.Authenticate(ctx, "  "+strings.ToUpper(u.Email)+" ", testPassword)
	if err != nil || got.ID != u.ID || got.ClinicID != c.ID || got.Role != staff.RoleAdmin {
		t.Fatalf("sign-in with the right password (e-mail in other case, padded): %+v, %v", got, err)
	}
	_, errPw := svc.Authenticate(ctx, u.Email, "wrong password!")
	_, errMail := svc.Authenticate(ctx, "nobody-"+uuid.NewString()+"@example.org", testPassword)
	a, b := apperr.As(errPw), apperr.As(errMail)
	if a == nil || b == nil || a.Code != "BAD_CREDENTIALS" || a.Code != b.Code || a.Message != b.Message || a.Kind != apperr.Unauthorized || a.Kind != b.Kind {
		t.Fatalf("wrong password: %v; wrong e-mail: %v; want one and the same BAD_CREDENTIALS", errPw, errMail)
	}
	if got.Actor() != "staff:"+u.Email {
		t.Fatalf("actor %q", got.Actor())
	}
}

// A plain staff member cannot do what only an admin may, and nothing is
// written when they try.
func TestStaffRoleIsRefusedAdminActions(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := staff.New(pool, nil, quietLogger())
	s := newUser(t, pool, c.ID, staff.RoleStaff)
	ctx := context.Background()
	sp, typ := c.Specialists[0], c.Types[0]
	before := auditCount(t, pool, c.ID)

	calls := map[string]func() error{
		"CreateSpecialist": func() error {
			_, err := svc.CreateSpecialist(ctx, s, staff.SpecialistInput{Name: "New", Active: true})
			return err
		},
		"UpdateSpecialist": func() error {
			_, err := svc.UpdateSpecialist(ctx, s, sp.ID, staff.SpecialistInput{Name: "Renamed", Active: true, Version: sp.Version})
			return err
		},
		"SaveType(create)": func() error {
			_, err := svc.SaveType(ctx, s, uuid.Nil, staff.TypeInput{Name: "X", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1})
			return err
		},
		"SaveType(update)": func() error {
			_, err := svc.SaveType(ctx, s, typ.ID, staff.TypeInput{Name: "X", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1, Version: typ.Version})
			return err
		},
		"StaffUsers": func() error { _, err := svc.StaffUsers(ctx, s); return err },
		"CreateStaffUser": func() error {
			_, err := svc.CreateStaffUser(ctx, s, "x-"+uuid.NewString()[:8]+"@example.org", "X", "long enough password", staff.RoleAdmin)
			return err
		},
		"KioskTokens":      func() error { _, err := svc.KioskTokens(ctx, s); return err },
		"CreateKioskToken": func() error { _, err := svc.CreateKioskToken(ctx, s, "Lobby"); return err },
		"RevokeKioskToken": func() error { return svc.RevokeKioskToken(ctx, s, uuid.New()) },
	}
	for name, call := range calls {
		err := call()
		if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Forbidden {
			t.Errorf("%s as staff: %v, want FORBIDDEN", name, err)
		}
	}
	if n := auditCount(t, pool, c.ID); n != before {
		t.Fatalf("refused calls wrote %d audit rows", n-before)
	}
}

// Every call with another clinic's ids is NOT_FOUND (or refused as
// input), and the other clinic's data stays as it was.
func TestStaffEveryCallIsScopedToTheUsersClinic(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	mine := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := staff.New(pool, nil, quietLogger())
	bookings := staff.NewBookings(svc, booking.NewService(pool), nil)
	admin := newUser(t, pool, mine.ID, staff.RoleAdmin)
	otherAdmin := newUser(t, pool, other.ID, staff.RoleAdmin)
	ctx := context.Background()
	osp, otyp := other.Specialists[0], other.Types[0]
	loc, _ := time.LoadLocation(other.Timezone)

	// The other clinic has an override, a booking and a kiosk token.
	day := testkit.NextWeekday(time.Now(), loc, time.Wednesday, 0, 0)
	dayUTC := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	if err := svc.AddOverride(ctx, otherAdmin, osp.ID, staff.OverrideInput{Day: dayUTC, Closed: true, Version: osp.Version}); err != nil {
		t.Fatal(err)
	}
	ovs, err := db.New(pool).OverrideListBySpecialist(ctx, db.OverrideListBySpecialistParams{SpecialistID: osp.ID, FromDay: dayUTC})
	if err != nil || len(ovs) != 1 {
		t.Fatalf("override: %v %v", ovs, err)
	}
	start := testkit.NextWeekday(time.Now(), loc, time.Tuesday, 10, 0)
	conf, err := bookings.BookForPatient(ctx, otherAdmin, otyp.ID, osp.ID, start, booking.Patient{Name: "Other Patient", Email: "other@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateKioskToken(ctx, otherAdmin, "Their lobby"); err != nil {
		t.Fatal(err)
	}
	tokens, err := svc.KioskTokens(ctx, otherAdmin)
	if err != nil || len(tokens) != 1 {
		t.Fatal(tokens, err)
	}
	ospNow, err := svc.Specialist(ctx, otherAdmin, osp.ID)
	if err != nil {
		t.Fatal(err)
	}
	otypNow, _, err := svc.Type(ctx, otherAdmin, otyp.ID)
	if err != nil {
		t.Fatal(err)
	}
	hoursBefore := hoursOf(t, pool, osp.ID)
	otherAudit := auditCount(t, pool, other.ID)
	myAudit := auditCount(t, pool, mine.ID)

	notFound := map[string]func() error{
		"Specialist": func() error { _, err := svc.Specialist(ctx, admin, osp.ID); return err },
		"UpdateSpecialist": func() error {
			_, err := svc.UpdateSpecialist(ctx, admin, osp.ID, staff.SpecialistInput{Name: "Hijacked", Active: false, Version: ospNow.Version})
			return err
		},
		"WeeklyHours": func() error { _, err := svc.WeeklyHours(ctx, admin, osp.ID); return err },
		"SetWeeklyHours": func() error {
			_, err := svc.SetWeeklyHours(ctx, admin, osp.ID, ospNow.Version, nil)
			return err
		},
		"AddOverride": func() error {
			return svc.AddOverride(ctx, admin, osp.ID, staff.OverrideInput{Day: dayUTC.AddDate(0, 0, 1), Closed: true, Version: ospNow.Version})
		},
		"DeleteOverride": func() error { return svc.DeleteOverride(ctx, admin, ovs[0].ID, ospNow.Version) },
		"Type":           func() error { _, _, err := svc.Type(ctx, admin, otyp.ID); return err },
		"SaveType(update)": func() error {
			_, err := svc.SaveType(ctx, admin, otyp.ID, staff.TypeInput{Name: "Hijacked", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1, Version: otypNow.Version})
			return err
		},
		"RevokeKioskToken": func() error { return svc.RevokeKioskToken(ctx, admin, tokens[0].ID) },
		"Cancel": func() error {
			_, err := bookings.Cancel(ctx, admin, conf.Booking.ID, "not mine")
			return err
		},
		"Reschedule": func() error {
			_, err := bookings.Reschedule(ctx, admin, conf.Booking.ID, start.Add(time.Hour), uuid.Nil, conf.Booking.Version, "not mine")
			return err
		},
		"BookForPatient(their type)": func() error {
			_, err := bookings.BookForPatient(ctx, admin, otyp.ID, osp.ID, start.Add(2*time.Hour), booking.Patient{Name: "X", Email: "x@example.org"})
			return err
		},
	}
	for name, call := range notFound {
		if ae := apperr.As(call()); ae == nil || ae.Kind != apperr.NotFound {
			t.Errorf("%s with the other clinic's id: %v, want NOT_FOUND", name, ae)
		}
	}
	// Their specialist on a type of mine, or in my type's performer list: refused.
	if _, err := bookings.BookForPatient(ctx, admin, mine.Types[0].ID, osp.ID, start.Add(3*time.Hour), booking.Patient{Name: "X", Email: "x@example.org"}); apperr.As(err) == nil || apperr.As(err).Kind == apperr.Internal {
		t.Errorf("booking the other clinic's specialist on my type: %v, want a refusal", err)
	}
	if _, err := svc.SaveType(ctx, admin, uuid.Nil, staff.TypeInput{Name: "Mine", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1, SpecialistIDs: []uuid.UUID{osp.ID}}); apperr.As(err) == nil || apperr.As(err).Field() != "specialists" {
		t.Errorf("a type performed by the other clinic's specialist: %v, want INVALID_ARGUMENT on specialists", err)
	}
	// Lists show only my clinic's rows.
	if sps, _ := svc.Specialists(ctx, admin); len(sps) != 1 || sps[0].ClinicID != mine.ID {
		t.Errorf("Specialists: %v", sps)
	}
	if ts, _ := svc.Types(ctx, admin); len(ts) != 1 || ts[0].ClinicID != mine.ID {
		t.Errorf("Types: %v", ts)
	}
	if ks, _ := svc.KioskTokens(ctx, admin); len(ks) != 0 {
		t.Errorf("KioskTokens shows %d tokens of the other clinic", len(ks))
	}
	if rows, _ := bookings.Search(ctx, admin, "Other Patient", time.Now().AddDate(-1, 0, 0), time.Now().AddDate(1, 0, 0)); len(rows) != 0 {
		t.Errorf("Search finds the other clinic's booking")
	}
	if rows, _ := bookings.Calendar(ctx, admin, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 1, 0)); len(rows) != 0 {
		t.Errorf("Calendar shows the other clinic's booking")
	}
	if rows, _ := svc.Audit(ctx, admin, staff.AuditFilter{From: time.Unix(0, 0), To: time.Now().Add(time.Hour)}); len(rows) != 0 {
		t.Errorf("Audit shows %d rows of the other clinic", len(rows))
	}

	// Nothing of theirs changed, and nothing was written.
	if got, _ := svc.Specialist(ctx, otherAdmin, osp.ID); got.Name != ospNow.Name || got.Version != ospNow.Version || !got.Active {
		t.Errorf("their specialist changed: %+v", got)
	}
	if got, _, _ := svc.Type(ctx, otherAdmin, otyp.ID); got.Name != otypNow.Name || got.Version != otypNow.Version {
		t.Errorf("their type changed: %+v", got)
	}
	if got := hoursOf(t, pool, osp.ID); !slices.Equal(got, hoursBefore) {
		t.Errorf("their hours changed: %v", got)
	}
	if n, _ := db.New(pool).OverrideCountBySpecialist(ctx, osp.ID); n != 1 {
		t.Errorf("their overrides: %d", n)
	}
	if ok, _ := svc.KioskTokenValid(ctx, other.ID, "x"); ok {
		t.Error("a made-up kiosk token is valid")
	}
	if ks, _ := svc.KioskTokens(ctx, otherAdmin); len(ks) != 1 || ks[0].RevokedAt != nil {
		t.Errorf("their kiosk token was revoked")
	}
	if b, err := booking.NewService(pool).Get(ctx, conf.Booking.ID, other.ID); err != nil || b.Status != booking.StatusConfirmed || !b.Start.Equal(start) {
		t.Errorf("their booking changed: %+v %v", b, err)
	}
	if n := auditCount(t, pool, other.ID); n != otherAudit {
		t.Errorf("%d audit rows written to the other clinic", n-otherAudit)
	}
	if n := auditCount(t, pool, mine.ID); n != myAudit {
		t.Errorf("%d audit rows written for refused calls", n-myAudit)
	}
}

// Each committed change writes exactly one audit row, names the actor and
// tells the notifier once; a refused change writes nothing and tells no one.
func TestStaffEveryChangeWritesOneAuditRowAndNotifies(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	var notified atomic.Int64
	svc := staff.New(pool, func(_ context.Context, id uuid.UUID) {
		if id != c.ID {
			t.Errorf("notified for clinic %s", id)
		}
		notified.Add(1)
	}, quietLogger())
	admin := newUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()
	loc, _ := time.LoadLocation(c.Timezone)
	day := testkit.NextWeekday(time.Now(), loc, time.Thursday, 0, 0)
	dayUTC := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)

	var sp staff.Specialist
	var typ staff.AppointmentType
	var overrideID int64
	steps := []struct {
		name, action string
		ok           bool
		do           func() error
	}{
		{"create specialist", "specialist.create", true, func() (err error) {
			sp, err = svc.CreateSpecialist(ctx, admin, staff.SpecialistInput{Name: "  Dr. New  ", Priority: 5, Active: true})
			return err
		}},
		{"create specialist without a name", "", false, func() error {
			_, err := svc.CreateSpecialist(ctx, admin, staff.SpecialistInput{Name: "  "})
			return err
		}},
		{"update specialist", "specialist.update", true, func() (err error) {
			sp, err = svc.UpdateSpecialist(ctx, admin, sp.ID, staff.SpecialistInput{Name: "Dr. Renamed", Priority: 7, Active: true, Version: sp.Version})
			return err
		}},
		{"update specialist at a stale version", "", false, func() error {
			_, err := svc.UpdateSpecialist(ctx, admin, sp.ID, staff.SpecialistInput{Name: "Lost", Active: true, Version: sp.Version - 1})
			return err
		}},
		{"set hours", "hours.update", true, func() error {
			var err error
			sp, err = svc.SetWeeklyHours(ctx, admin, sp.ID, sp.Version, []staff.Range{{Weekday: time.Thursday, StartMin: 540, EndMin: 1020}})
			return err
		}},
		{"set overlapping hours", "", false, func() error {
			_, err := svc.SetWeeklyHours(ctx, admin, sp.ID, sp.Version, []staff.Range{{Weekday: time.Thursday, StartMin: 540, EndMin: 720}, {Weekday: time.Thursday, StartMin: 700, EndMin: 800}})
			return err
		}},
		{"add override", "override.create", true, func() error {
			if err := svc.AddOverride(ctx, admin, sp.ID, staff.OverrideInput{Day: dayUTC, StartMin: 600, EndMin: 720, Note: "short day", Version: sp.Version}); err != nil {
				return err
			}
			sp, _ = svc.Specialist(ctx, admin, sp.ID)
			ovs, err := db.New(pool).OverrideListBySpecialist(ctx, db.OverrideListBySpecialistParams{SpecialistID: sp.ID, FromDay: dayUTC})
			if err == nil && len(ovs) == 1 {
				overrideID = ovs[0].ID
			}
			return err
		}},
		{"add an overlapping override", "", false, func() error {
			return svc.AddOverride(ctx, admin, sp.ID, staff.OverrideInput{Day: dayUTC, Closed: true, Version: sp.Version})
		}},
		{"add override ending before it starts", "", false, func() error {
			return svc.AddOverride(ctx, admin, sp.ID, staff.OverrideInput{Day: dayUTC.AddDate(0, 0, 1), StartMin: 720, EndMin: 600, Version: sp.Version})
		}},
		{"delete override", "override.delete", true, func() error {
			err := svc.DeleteOverride(ctx, admin, overrideID, sp.Version)
			sp, _ = svc.Specialist(ctx, admin, sp.ID)
			return err
		}},
		{"create type", "type.create", true, func() (err error) {
			typ, err = svc.SaveType(ctx, admin, uuid.Nil, staff.TypeInput{Name: "Check", DurationMin: 20, SlotStepMin: 10, BufferBeforeMin: 5, BufferAfterMin: 5,
				MinNoticeMin: 60, MaxAdvanceDays: 90, CooldownMin: 0, MaxHoldsPerClient: 2, SpecialistIDs: []uuid.UUID{sp.ID}})
			return err
		}},
		{"create type lasting 0 minutes", "", false, func() error {
			_, err := svc.SaveType(ctx, admin, uuid.Nil, staff.TypeInput{Name: "Zero", DurationMin: 0, SlotStepMin: 10, MaxAdvanceDays: 90, MaxHoldsPerClient: 1})
			return err
		}},
		{"update type", "type.update", true, func() (err error) {
			typ, err = svc.SaveType(ctx, admin, typ.ID, staff.TypeInput{Name: "Check-up", DurationMin: 25, SlotStepMin: 5, MaxAdvanceDays: 90, MaxHoldsPerClient: 1, Version: typ.Version})
			return err
		}},
		{"update type at a stale version", "", false, func() error {
			_, err := svc.SaveType(ctx, admin, typ.ID, staff.TypeInput{Name: "Lost", DurationMin: 25, SlotStepMin: 5, MaxAdvanceDays: 90, MaxHoldsPerClient: 1, Version: typ.Version - 1})
			return err
		}},
		{"create kiosk token", "kiosk_token.create", true, func() error { _, err := svc.CreateKioskToken(ctx, admin, "Lobby"); return err }},
		{"create staff account", "staff.create", true, func() error {
			_, err := svc.CreateStaffUser(ctx, admin, "New-"+uuid.NewString()[:8]+"@Example.org", "New", "long enough password", staff.RoleStaff)
			return err
		}},
		{"create staff account with a short password", "", false, func() error {
			_, err := svc.CreateStaffUser(ctx, admin, "short-"+uuid.NewString()[:8]+"@example.org", "New", "short", staff.RoleStaff)
			return err
		}},
	}
	for _, st := range steps {
		before, nBefore := auditCount(t, pool, c.ID), notified.Load()
		err := st.do()
		after := auditCount(t, pool, c.ID)
		if st.ok {
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if after-before != 1 {
				t.Fatalf("%s: %d audit rows, want exactly 1", st.name, after-before)
			}
			rows, _ := svc.Audit(ctx, admin, staff.AuditFilter{From: time.Unix(0, 0), To: time.Now().Add(time.Hour)})
			if len(rows) == 0 || rows[0].Action != st.action || rows[0].Actor != admin.Actor() {
				t.Fatalf("%s: newest audit row %+v, want %s by %s", st.name, rows[0], st.action, admin.Actor())
			}
			if n := notified.Load() - nBefore; n != 1 {
				t.Fatalf("%s: notified %d times, want once", st.name, n)
			}
			continue
		}
		if err == nil {
			t.Fatalf("%s: accepted", st.name)
		}
		if ae := apperr.As(err); ae == nil || ae.Kind == apperr.Internal {
			t.Fatalf("%s: %v is not a clear refusal", st.name, err)
		}
		if after != before {
			t.Fatalf("%s (refused: %v) wrote %d audit rows", st.name, err, after-before)
		}
		if n := notified.Load() - nBefore; n != 0 {
			t.Fatalf("%s (refused) notified %d times", st.name, n)
		}
	}
	if sp.Name != "Dr. Renamed" || sp.Priority != 7 {
		t.Errorf("specialist: %+v", sp)
	}
	if typ.Name != "Check-up" || typ.DurationMin != 25 || typ.SlotStepMin != 5 {
		t.Errorf("type: %+v", typ)
	}
}
