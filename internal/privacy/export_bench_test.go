package privacy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/testkit"
)

// The export of a patient with 100 bookings, each with three e-mails
// (their copies kept, HTML and text) and an audit row, in a clinic where
// 2,000 other bookings and their e-mails lie beside them.
func BenchmarkExport(b *testing.B) {
	pool := testkit.DB(b)
	ctx := context.Background()
	c := testkit.NewClinic(b, pool, testkit.ClinicOptions{})
	tag := strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	me := "bench-" + tag + "@example.org"
	raw, err := mail.Preview(mail.Message{ID: uuid.NewString(), To: me, From: "Clinic <clinic@example.org>",
		Subject: "Your appointment is booked", Text: strings.Repeat("Your appointment on Tuesday at 09:00.\n", 20),
		HTML: "<p>" + strings.Repeat("Your appointment on Tuesday at 09:00.<br>", 20) + "</p>"})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now().Add(24 * time.Hour).Truncate(time.Hour)
	const mine, others = 100, 2000
	for i := range mine + others {
		email := fmt.Sprintf("other-%d-%s@example.org", i, tag)
		if i < mine {
			email = me
		}
		id := uuid.New()
		at := start.Add(time.Duration(i) * 30 * time.Minute)
		if _, err := pool.Exec(ctx, `INSERT INTO bookings (id, clinic_id, appointment_type_id, specialist_id, slot_start, slot_end,
			patient_name, patient_email, patient_email_key) VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz + interval '30 minutes', 'Bench Patient', $6, $7)`,
			id, c.ID, c.Types[0].ID, c.Specialists[i%2].ID, at, email, identity.EmailKey(email)); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO audit_log (clinic_id, actor, action, entity, entity_id) VALUES ($1, 'patient', 'booking.create', 'booking', $2)`, c.ID, id.String()); err != nil {
			b.Fatal(err)
		}
		for _, kind := range []string{"confirmation", "reminder", "cancellation"} {
			mid := uuid.New()
			if _, err := pool.Exec(ctx, `INSERT INTO messages (id, clinic_id, booking_id, kind, recipient, status, send_at, accepted_at)
				VALUES ($1, $2, $3, $4, $5, 'sent', now(), now())`, mid, c.ID, id, kind, email); err != nil {
				b.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `INSERT INTO outbox_copies (message_id, clinic_id, recipient, subject, raw) VALUES ($1, $2, $3, 'Booked', $4)`,
				mid, c.ID, email, raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	x := privacy.NewExporter(pool)
	b.ResetTimer()
	for b.Loop() {
		out, err := x.ExportByOperator(ctx, c.ID, strings.ToUpper(me), "")
		if err != nil {
			b.Fatal(err)
		}
		if n := out.Counts(); n.Bookings != mine || n.Emails != 3*mine || n.AuditEntries != mine {
			b.Fatalf("counts %+v", n)
		}
	}
}
