package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
)

func TestMigrationsApplyRollBackAndApplyAgain(t *testing.T) {
	ctx := context.Background()
	url := testkit.FreshDB(t)
	pool, err := postgres.Connect(ctx, url, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p, err := postgres.NewMigrator(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	tables := func() int {
		var n int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
			WHERE table_schema = 'public' AND table_name <> 'goose_db_version'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up on an empty database: %v", err)
	}
	if n := tables(); n != 32 {
		t.Fatalf("want 32 tables after up, got %d", n)
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("roll back: %v", err)
	}
	if n := tables(); n != 0 {
		t.Fatalf("want no tables after rolling back, got %d", n)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if pending, err := p.HasPending(ctx); err != nil || pending {
		t.Fatalf("pending after up: %v %v", pending, err)
	}
	// Several instances start at once: the session lock makes the losers wait
	// and find nothing to do.
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- postgres.Migrate(ctx, pool, nil) }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	// Migrate brings the job queue's tables too.
	var queue bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('river_job') IS NOT NULL`).Scan(&queue); err != nil || !queue {
		t.Fatalf("river_job after Migrate: %v %v", queue, err)
	}
}

func TestSchemaRefusesBadRows(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	cases := map[string]string{
		"InvalidZone":         `INSERT INTO clinics (slug, name, timezone) VALUES ('bad-zone', 'x', 'Mars/Olympus')`,
		"EndBeforeStart":      `INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, patient_name, patient_email) VALUES ($1, $2, $3, '2030-01-07 10:00Z', '2030-01-07 09:00Z', 'a', 'a@b.c')`,
		"UnknownStatus":       `INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, patient_name, patient_email, status) VALUES ($1, $2, $3, '2030-01-07 10:00Z', '2030-01-07 10:30Z', 'a', 'a@b.c', 'pending')`,
		"ZeroDuration":        `INSERT INTO appointment_types (clinic_id, name, duration_min, slot_step_min) VALUES ($1, 'x', 0, 15)`,
		"OverlappingHours":    `INSERT INTO weekly_hours (clinic_id, specialist_id, weekday, start_local, end_local) VALUES ($1, $3, 1, '16:00', '18:00')`,
		"HoursEndBeforeStart": `INSERT INTO weekly_hours (clinic_id, specialist_id, weekday, start_local, end_local) VALUES ($1, $3, 0, '12:00', '11:00')`,
	}
	for name, sql := range cases {
		t.Run(name, func(t *testing.T) {
			args := []any{c.ID, c.Types[0].ID, c.Specialists[0].ID}
			n := 0
			for i := 1; i <= 3; i++ {
				if strings.Contains(sql, fmt.Sprintf("$%d", i)) {
					n = i
				}
			}
			if _, err := pool.Exec(ctx, sql, args[:n]...); err == nil {
				t.Fatal("the schema accepted it")
			}
		})
	}
}
