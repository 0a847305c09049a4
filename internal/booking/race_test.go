package booking_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/booking"

	"github.com/clinic/booking/internal/testkit"
)

// slowOutbox keeps each change's transaction open a little after its
// booking row is written, as writing real messages does.
type slowOutbox struct{}

func (slowOutbox) Enqueue(context.Context, pgx.Tx, booking.Change) error {
	time.Sleep(5 * time.Millisecond)
	return nil
}

// Different patients racing for one slot, and for slots overlapping it,
// inside transactions that stay open: one wins, the rest are told
// SLOT_TAKEN, none gets PostgreSQL's deadlock error (two inserts of
// overlapping times waiting for each other's uncommitted row).
func TestBookRaceOfDifferentPatientsDoesNotDeadlock(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		b.svc = hooked(b, slowOutbox{}.Enqueue)
		// The deadlock needs two inserts to meet in the index at once:
		// several rounds, each on a time of its own, make that likely.
		const rounds, n = 8, 16
		for round := range rounds {
			start := b.monday(8, 0).Add(time.Duration(round) * time.Hour)
			errs := testkit.Race(n, func(i int) error {
				typ, at := 0, start
				if i%2 == 1 {
					typ, at = 1, start.Add(-30*time.Minute) // overlaps the 30 minutes from start
				}
				req := b.req(typ, 0, at)
				req.Patient.Email = fmt.Sprintf("racer%d.%d@example.org", round, i)
				req.Patient.Phone = ""
				_, err := b.svc.Book(context.Background(), req)
				return err
			})
			if won, taken := tally(t, errs); won != 1 || taken != n-1 {
				t.Fatalf("round %d: want 1 confirmed and %d SLOT_TAKEN, got %d and %d", round, n-1, won, taken)
			}
		}
	})
}

// A booking moved away while others book the time it leaves: the move
// and exactly one of the bookings succeed, and nobody deadlocks.
func TestMoveRacesBookingsOfTheTimeItFrees(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.svc = hooked(b, slowOutbox{}.Enqueue)
	ctx := context.Background()
	old := b.monday(9, 0)
	mine, err := b.svc.Book(ctx, b.req(0, 0, old))
	if err != nil {
		t.Fatal(err)
	}
	const n = 9
	errs := testkit.Race(n, func(i int) error {
		if i == 0 {
			_, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: mine.Booking.ID, Start: b.monday(14, 0), Actor: "staff:x"})
			return err
		}
		req := b.req(0, 0, old)
		req.Patient.Email = fmt.Sprintf("caller%d@example.org", i)
		req.Patient.Phone = ""
		_, err := b.svc.Book(ctx, req)
		return err
	})
	if errs[0] != nil {
		t.Fatalf("move: %v", errs[0])
	}
	won, taken := tally(t, errs[1:])
	// Bookings that ran before the move committed found the time taken by
	// the booking being moved; after it, one of them got it, unless every
	// one of them came first.
	if won > 1 || won+taken != n-1 {
		t.Fatalf("%d bookings of the freed time won, %d SLOT_TAKEN", won, taken)
	}
	if got := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, old); got != int64(won) {
		t.Fatalf("%d confirmed at the freed time, %d bookings said they won", got, won)
	}
}
