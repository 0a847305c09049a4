package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
)

// Rolling back the reception role (00007) and the waitlist (00011) with
// rows present, and applying them again, on a database of the test's own:
// each Down does what its comment says to the rows it cannot keep, the
// rows it can keep stay, and the Up applies again on top of them. Fails if
// a Down leaves a row its constraint then refuses (a reception account or
// a waitlist e-mail), or deletes more than it must.
func TestMigrationsDownAndUpWithRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := postgres.Connect(ctx, testkit.FreshDB(t), 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	p, err := postgres.NewMigrator(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	count := func(sql string, args ...any) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}

	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	reception, admin := uuid.New(), uuid.New()
	exec(`INSERT INTO staff_users (id, clinic_id, email, password_hash, role) VALUES
		($1, $3, $4, 'x', 'reception'), ($2, $3, $5, 'x', 'admin')`,
		reception, admin, c.ID, "desk-"+reception.String()+"@example.org", "boss-"+admin.String()+"@example.org")
	entry := uuid.New()
	exec(`INSERT INTO waitlist_entries (id, clinic_id, appointment_type_id, from_date, to_date, patient_name, patient_email)
		VALUES ($1, $2, $3, current_date, current_date + 1, 'Ada', 'ada@example.org')`, entry, c.ID, c.Types[0].ID)
	exec(`INSERT INTO messages (id, clinic_id, kind, recipient, send_at, entry_id) VALUES
		($1, $3, 'waitlist_joined', 'ada@example.org', now(), $4), ($2, $3, 'lookup', 'bea@example.org', now(), NULL)`,
		uuid.New(), uuid.New(), c.ID, entry)

	// 00011 down and up: the waitlist and its e-mails go, other e-mails stay.
	if _, err := p.DownTo(ctx, 10); err != nil {
		t.Fatalf("roll back 00011 with rows: %v", err)
	}
	if n := count(`SELECT count(*) FROM messages WHERE clinic_id = $1`, c.ID); n != 1 {
		t.Fatalf("%d messages after rolling back the waitlist, want the lookup only", n)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("apply 00011 again: %v", err)
	}
	exec(`INSERT INTO waitlist_entries (id, clinic_id, appointment_type_id, from_date, to_date, patient_name, patient_email)
		VALUES ($1, $2, $3, current_date, current_date + 1, 'Ada', 'ada@example.org')`, uuid.New(), c.ID, c.Types[0].ID)

	// 00007 down (through 00011..00008) and up: the reception account is a
	// disabled staff account, the admin is untouched, and reception can be
	// given again.
	if _, err := p.DownTo(ctx, 6); err != nil {
		t.Fatalf("roll back to 00006 with rows: %v", err)
	}
	var role string
	var disabled bool
	if err := pool.QueryRow(ctx, `SELECT role, disabled_at IS NOT NULL FROM staff_users WHERE id = $1`, reception).Scan(&role, &disabled); err != nil {
		t.Fatal(err)
	}
	if role != "staff" || !disabled {
		t.Fatalf("the reception account is %s (disabled %v) after rolling back 00007, want a disabled staff account", role, disabled)
	}
	if n := count(`SELECT count(*) FROM staff_users WHERE id = $1 AND role = 'admin' AND disabled_at IS NULL`, admin); n != 1 {
		t.Fatal("rolling back 00007 changed the admin")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("apply 00007..00011 again: %v", err)
	}
	exec(`UPDATE staff_users SET role = 'reception', disabled_at = NULL WHERE id = $1`, reception)
	if pending, err := p.HasPending(ctx); err != nil || pending {
		t.Fatalf("pending after up: %v %v", pending, err)
	}
}
