package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
)

// TestBackupMeasure times pg_dump, pg_restore and ANALYZE on a clinic with
// BACKUP_MEASURE bookings (each with its confirmation sent, its reminder
// queued as a job, and its audit row), and logs the figures and the
// dump's size. It runs only when asked:
//
//	BACKUP_MEASURE=10000 go test -count=1 -run TestBackupMeasure -v ./cmd/clinic/
func TestBackupMeasure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BACKUP_MEASURE"))
	if n <= 0 {
		t.Skip("set BACKUP_MEASURE to a number of bookings to measure a backup and a restore")
	}
	ctx := context.Background()
	srcURL := testkit.FreshDB(t)
	src, err := postgres.ConnectMigrated(ctx, srcURL, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	cl := testkit.NewClinic(t, src, testkit.ClinicOptions{Specialists: 10})
	specialists := make([]string, len(cl.Specialists))
	for i, s := range cl.Specialists {
		specialists[i] = s.ID.String()
	}
	for i, stmt := range []string{
		`INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end,
			patient_name, patient_email, patient_phone, patient_email_key, patient_phone_key, client_id, manage_token_hash, language)
		 SELECT $1, $2, ($3::uuid[])[1 + i % cardinality($3::uuid[])],
			timestamptz '2027-01-04 08:00Z' + (i / cardinality($3::uuid[])) * interval '30 minutes',
			timestamptz '2027-01-04 08:30Z' + (i / cardinality($3::uuid[])) * interval '30 minutes',
			'Patient ' || i, 'patient' || i || '@example.org', '+49 30 ' || (1000000 + i), 'patient' || i || '@example.org',
			'+4930' || (1000000 + i), md5(i::text), sha256(i::text::bytea), 'de'
		 FROM generate_series(0, $4 - 1) i`,
		`INSERT INTO messages (id, clinic_id, booking_id, kind, recipient, language, status, send_at, attempts, accepted_at, cause)
		 SELECT gen_random_uuid(), clinic_id, id, 'confirmation', patient_email, 'de', 'sent', created_at, 1, created_at, 'public'
		 FROM bookings WHERE clinic_id = $1`,
		`INSERT INTO messages (id, clinic_id, booking_id, kind, recipient, language, status, send_at, cause)
		 SELECT gen_random_uuid(), clinic_id, id, 'reminder', patient_email, 'de', 'queued', slot_start - interval '1 day', 'schedule'
		 FROM bookings WHERE clinic_id = $1`,
		`INSERT INTO river_job (kind, args, max_attempts, state, scheduled_at)
		 SELECT 'outbox_send', jsonb_build_object('message_id', id), 25, 'scheduled', send_at
		 FROM messages WHERE clinic_id = $1 AND status = 'queued'`,
		`INSERT INTO audit_log (clinic_id, actor, action, entity, entity_id, after)
		 SELECT clinic_id, 'patient', 'booking.create', 'booking', id::text,
			jsonb_build_object('slot_start', slot_start, 'specialist_id', specialist_id, 'patient_name', patient_name)
		 FROM bookings WHERE clinic_id = $1`,
	} {
		args := []any{cl.ID}
		if i == 0 {
			args = []any{cl.ID, cl.Types[0].ID, specialists, n}
		}
		if _, err := src.Exec(ctx, stmt, args...); err != nil {
			t.Fatalf("%v\n%s", err, stmt)
		}
	}
	if _, err := src.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		t.Fatal(err)
	}
	var dbSize string
	if err := src.QueryRow(ctx, `SELECT pg_size_pretty(pg_database_size(current_database()))`).Scan(&dbSize); err != nil {
		t.Fatal(err)
	}

	dump := filepath.Join(t.TempDir(), "clinic.dump")
	dumpTook := timed(t, "pg_dump", "-Fc", "-f", dump, "--dbname", srcURL)
	st, err := os.Stat(dump)
	if err != nil {
		t.Fatal(err)
	}
	dstURL := testkit.FreshDB(t)
	restoreTook := timed(t, "pg_restore", "--no-owner", "--exit-on-error", "--dbname", dstURL, dump)
	dst, err := pgxpool.New(ctx, dstURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)
	start := time.Now()
	if _, err := dst.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	analyzeTook := time.Since(start)
	parallelURL := testkit.FreshDB(t)
	parallelTook := timed(t, "pg_restore", "--no-owner", "--exit-on-error", "--jobs", "2", "--dbname", parallelURL, dump)

	var bookings, messages int
	if err := dst.QueryRow(ctx, `SELECT (SELECT count(*) FROM bookings), (SELECT count(*) FROM messages)`).Scan(&bookings, &messages); err != nil || bookings != n {
		t.Fatalf("restored %d bookings of %d (%v)", bookings, n, err)
	}
	t.Logf("%d bookings, %d messages; database %s; dump (pg_dump -Fc) %.1f MB in %s; pg_restore %s (--jobs 2: %s); ANALYZE %s",
		bookings, messages, dbSize, float64(st.Size())/1e6, dumpTook.Round(time.Millisecond),
		restoreTook.Round(time.Millisecond), parallelTook.Round(time.Millisecond), analyzeTook.Round(time.Millisecond))
}

func timed(t *testing.T, name string, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	pgTool(t, name, args...)
	return time.Since(start)
}
