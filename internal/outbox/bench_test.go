package outbox_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
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

// BenchmarkBookOneSpecialist is 8 bookings at a time, all of one
// specialist, with their e-mails: written after the booking's insert (its
// After step, the specialist's lock held over the e-mails' round trips),
// and queued in the booking's batch (its Queue step, the lock held for the
// last round trip). Bookings of one specialist wait for each other's
// lock, so the lock's time bounds their rate.
//
//	go test -run '^$' -bench BookOneSpecialist ./internal/outbox/
func BenchmarkBookOneSpecialist(b *testing.B) {
	for _, queued := range []bool{false, true} {
		b.Run(fmt.Sprintf("queued=%v", queued), func(b *testing.B) {
			pool := testkit.DB(b)
			c := testkit.NewClinic(b, pool, testkit.ClinicOptions{})
			o, err := outbox.New(pool, outbox.Config{Queue: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			hook := booking.TxHook{Name: "e-mails", After: o.Enqueue}
			if queued {
				hook.Queue = o.Queue
			}
			svc := booking.New(pool, booking.Options{TxHooks: []booking.TxHook{hook}})
			loc, err := time.LoadLocation(c.Timezone)
			if err != nil {
				b.Fatal(err)
			}
			first := time.Now().In(loc).AddDate(0, 0, 3).Truncate(24 * time.Hour)
			var next atomic.Int64
			b.SetParallelism(8 / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					start := first.Add(time.Duration(i) * 30 * time.Minute)
					_, err := svc.Book(context.Background(), booking.BookRequest{
						AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[0].ID,
						Start: start, End: start.Add(30 * time.Minute), ClinicID: c.ID, Actor: "staff:bench",
						Patient: booking.Patient{Name: "Bench Patient", Email: fmt.Sprintf("p%d@example.org", i)},
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
