package outbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/testkit"
)

// BenchmarkBook is a booking from a hold (the one-statement gate), alone
// and with its e-mails enqueued in its transaction: the outbox's cost on
// the request path (its sending is not part of it).
//
//	go test -run '^$' -bench Book ./internal/outbox/
func BenchmarkBook(b *testing.B) {
	for _, withOutbox := range []bool{false, true} {
		b.Run(fmt.Sprintf("outbox=%v", withOutbox), func(b *testing.B) {
			pool := testkit.DB(b)
			c := testkit.NewClinic(b, pool, testkit.ClinicOptions{Specialists: 4})
			svc := booking.NewService(pool)
			if withOutbox {
				o, err := outbox.New(pool, outbox.Config{Queue: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				svc = booking.New(pool, booking.Options{TxHooks: []booking.TxHook{{Name: "e-mails", After: o.Enqueue}}})
			}
			loc, err := time.LoadLocation(c.Timezone)
			if err != nil {
				b.Fatal(err)
			}
			first := time.Now().In(loc).AddDate(0, 0, 3).Truncate(24 * time.Hour)
			b.ResetTimer()
			for i := range b.N {
				start := first.Add(time.Duration(i/len(c.Specialists)) * 30 * time.Minute)
				_, err := svc.Book(context.Background(), booking.BookRequest{
					AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[i%len(c.Specialists)].ID,
					Start: start, End: start.Add(30 * time.Minute), ClinicID: c.ID, Actor: "staff:bench",
					Patient: booking.Patient{Name: "Bench Patient", Email: fmt.Sprintf("p%d@example.org", i)},
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
