package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
)

// The waitlist's confirmation (00014) on a database of the test's own:
// places on the list when it is applied count as confirmed and keep their
// order; rolled back, a place nobody confirmed ends rather than become a
// place the list before would offer times to.
func TestMigrationWaitlistConfirmKeepsExistingPlaces(t *testing.T) {
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
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	if _, err := p.DownTo(ctx, 13); err != nil {
		t.Fatalf("roll back to 00013: %v", err)
	}
	before := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO waitlist_entries (id, clinic_id, appointment_type_id, from_date, to_date, patient_name, patient_email, joined_at)
		VALUES ($1, $2, $3, current_date, current_date + 1, 'Ada', 'ada@example.org', now() - interval '1 hour')`, before, c.ID, c.Types[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 14); err != nil {
		t.Fatalf("apply 00014 with a place on the list: %v", err)
	}
	var confirmed, inOrder bool
	if err := pool.QueryRow(ctx, `SELECT confirmed_at IS NOT NULL, queued_at = joined_at FROM waitlist_entries WHERE id = $1`, before).
		Scan(&confirmed, &inOrder); err != nil {
		t.Fatal(err)
	}
	if !confirmed || !inOrder {
		t.Fatalf("a place on the list before 00014: confirmed %v, queued at its joining %v; want both", confirmed, inOrder)
	}

	after := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO waitlist_entries (id, clinic_id, appointment_type_id, from_date, to_date, patient_name, patient_email)
		VALUES ($1, $2, $3, current_date, current_date + 1, 'Bea', 'bea@example.org')`, after, c.ID, c.Types[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 13); err != nil {
		t.Fatalf("roll back 00014 with an unconfirmed place: %v", err)
	}
	states := map[uuid.UUID]string{}
	for _, id := range []uuid.UUID{before, after} {
		var s string
		if err := pool.QueryRow(ctx, `SELECT state FROM waitlist_entries WHERE id = $1`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		states[id] = s
	}
	if states[before] != "waiting" || states[after] != "lapsed" {
		t.Fatalf("after rolling back 00014: the confirmed place is %s (want waiting), the unconfirmed one %s (want lapsed)", states[before], states[after])
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("apply again: %v", err)
	}
}
