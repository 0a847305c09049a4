package staff_test

// Tests of the staff service against the real PostgreSQL of testkit: the
// concurrency of two editors saving one specialist's week, the version
// and audit rules every change follows, roles, accounts, kiosk tokens and
// clinic scoping. Each test makes its own clinic, so they run in parallel.
// This file holds the helpers they share.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// testHashCost is the cost of new hashes in these tests: one more than the
// fixtures' (bcrypt's least), so a sign-in still has a weaker hash to
// rehash, without the seconds each hash at the production cost takes
// under -race.
const testHashCost = bcrypt.MinCost + 1

// newService is the staff service of these tests (see testHashCost).
func newService(pool *pgxpool.Pool, changed staff.Notifier) *staff.Service {
	return staff.New(pool, changed, quietLogger(), staff.WithHashCost(testHashCost))
}

// testPassword is every test account's password (testkit.PasswordHash is
// its hash, made once at bcrypt's lowest cost).
const testPassword = testkit.Password

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newUser makes a staff account of the clinic and returns it as the
// service sees a signed-in user.
func newUser(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID, role string) staff.User {
	t.Helper()
	email := role + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16] + "@example.org"
	row, err := db.New(pool).StaffUserUpsert(context.Background(), db.StaffUserUpsertParams{
		ClinicID: clinicID, Email: email, Name: "Test " + role, PasswordHash: testkit.PasswordHash(), Role: role,
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

// zoneOf loads a clinic's time zone, failing the test if it cannot.
func zoneOf(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load zone %q: %v", name, err)
	}
	return loc
}

// currentHours is the week a CONCURRENCY_CONFLICT carries as the current
// values, sorted.
func currentHours(t testing.TB, err error) []staff.Range {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil {
		t.Fatalf("not an app error: %v", err)
	}
	b, merr := json.Marshal(ae.Details["current"])
	if merr != nil {
		t.Fatalf("details.current %v: %v", ae.Details["current"], merr)
	}
	var cur struct {
		Hours []staff.Range `json:"hours"`
	}
	if err := json.Unmarshal(b, &cur); err != nil {
		t.Fatalf("details.current %s: %v", b, err)
	}
	return sortRanges(cur.Hours)
}
