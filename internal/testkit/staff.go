package testkit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// StaffUser makes a staff account of the clinic with role (its password
// is Password) and returns it as the services see a signed-in user.
func StaffUser(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID, role string) staff.User {
	t.Helper()
	email := role + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16] + "@example.org"
	row, err := db.New(pool).StaffUserUpsert(context.Background(), db.StaffUserUpsertParams{
		ClinicID: clinicID, Email: email, Name: "Test " + role, PasswordHash: PasswordHash(), Role: role,
	})
	if err != nil {
		t.Fatalf("create staff user: %v", err)
	}
	return staff.User{ID: row.ID, ClinicID: row.ClinicID, Email: row.Email, Name: row.Name, Role: row.Role}
}

// AuditRows are the audit rows of one entity, oldest first.
func AuditRows(t testing.TB, pool *pgxpool.Pool, entity, id string) []db.AuditLog {
	t.Helper()
	rows, err := db.New(pool).AuditListByEntity(context.Background(), db.AuditListByEntityParams{Entity: entity, EntityID: id})
	if err != nil {
		t.Fatalf("audit rows: %v", err)
	}
	return rows
}

// CountAction is how many of rows record action.
func CountAction(rows []db.AuditLog, action string) int {
	n := 0
	for _, r := range rows {
		if r.Action == action {
			n++
		}
	}
	return n
}

// WantCode fails the test unless err carries the error code code; what
// names the step that returned it.
func WantCode(t testing.TB, err error, code string, what string) {
	t.Helper()
	if got := apperr.CodeOf(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %s", what, err, got, code)
	}
}

// Zone loads a time zone, failing the test if it cannot.
func Zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load zone %q: %v", name, err)
	}
	return loc
}
