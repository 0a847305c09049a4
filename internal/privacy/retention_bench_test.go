package privacy_test

import (
	"context"
	"testing"
	"time"

	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/testkit"
)

// benchBookings is how many bookings past the period each run meets.
const benchBookings = 10000

// BenchmarkRetentionRun times a run over benchBookings bookings past the
// period, each with two messages, their stored copies, a manage link
// and two audit rows: the first run of a clinic with a year of bookings.
//
//	go test -run '^$' -bench RetentionRun -benchtime 3x ./internal/privacy/
func BenchmarkRetentionRun(b *testing.B) {
	ctx := context.Background()
	pool := freshPoolB(b)
	c := testkit.NewClinic(b, pool, testkit.ClinicOptions{})
	r := privacy.NewRetention(pool, privacy.RetentionConfig{})
	for range b.N {
		b.StopTimer()
		seed := []string{
			`INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, status,
				patient_name, patient_email, patient_phone, patient_email_key, client_id)
			 SELECT $1, $2, $3, now() - interval '2 years' + g * interval '30 minutes', now() - interval '2 years' + g * interval '30 minutes' + interval '30 minutes',
				'cancelled', 'Patient ' || g, 'p' || g || '@example.org', '+4930' || g, 'p' || g || '@example.org', 'client-' || g
			 FROM generate_series(1, $4::int) g`,
			`INSERT INTO messages (id, clinic_id, booking_id, kind, recipient, status, send_at)
			 SELECT gen_random_uuid(), clinic_id, id, k, patient_email, 'sent', slot_start
			 FROM bookings, unnest(ARRAY['confirmation', 'reminder']) k WHERE clinic_id = $1 AND anonymised_at IS NULL`,
			`INSERT INTO outbox_copies (message_id, clinic_id, recipient, subject, raw)
			 SELECT m.id, m.clinic_id, m.recipient, 'Your booking', convert_to(repeat('Dear patient ', 200), 'UTF8')
			 FROM messages m JOIN bookings b ON b.id = m.booking_id WHERE b.clinic_id = $1 AND b.anonymised_at IS NULL`,
			`INSERT INTO booking_links (token_hash, booking_id, clinic_id)
			 SELECT decode(md5(id::text), 'hex') || decode(md5(random()::text), 'hex'), id, clinic_id FROM bookings WHERE clinic_id = $1 AND anonymised_at IS NULL`,
			`INSERT INTO audit_log (clinic_id, actor, action, entity, entity_id, after, reason)
			 SELECT clinic_id, 'patient', a, 'booking', id::text,
				jsonb_build_object('status', status, 'patient', jsonb_build_object('name', patient_name, 'email', patient_email)), 'moved away'
			 FROM bookings, unnest(ARRAY['booking.create', 'booking.cancel']) a WHERE clinic_id = $1 AND anonymised_at IS NULL`,
		}
		for i, sql := range seed {
			args := []any{c.ID}
			if i == 0 {
				args = append(args, c.Types[0].ID, c.Specialists[0].ID, benchBookings)
			}
			if _, err := pool.Exec(ctx, sql, args...); err != nil {
				b.Fatal(err)
			}
		}
		// A database in service has its tables' statistics; a new one
		// gets them from autovacuum a little later.
		if _, err := pool.Exec(ctx, `ANALYZE bookings, messages, outbox_copies, booking_links, audit_log`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		rep, err := r.Run(ctx, c.Slug)
		if err != nil {
			b.Fatal(err)
		}
		if got := rep.Clinics[0].Scrubbed; got.Bookings != benchBookings || got.Copies != 2*benchBookings {
			b.Fatalf("scrubbed %+v", got)
		}
		b.Logf("%d bookings anonymised with their messages, copies, links and audit rows in %s", benchBookings, time.Since(start).Round(time.Millisecond))
	}
}
