package booking_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"

	"github.com/clinic/booking/internal/testkit"
)

// A cancel of a booking that was moved (a stale staff page, or a cancel
// that lost the race with the move) is refused with BOOKING_NOT_ACTIVE:
// the booking lives on at its new time, and saying "cancelled" would be
// false. Nothing changes and no audit row is written.
//
// Mutation: Cancel treating a moved booking as already cancelled (a
// harmless no-op): the cancel answers success with the old, rescheduled
// booking.
func TestCancelOfAMovedBookingIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	conf, err := b.svc.Book(ctx, b.req(0, 0, b.monday(11, 0)))
	if err != nil {
		t.Fatal(err)
	}
	moved, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: conf.Booking.ID, Start: b.monday(14, 0), Actor: "staff:test"})
	if err != nil {
		t.Fatal(err)
	}
	before := testkit.AuditCount(t, b.pool, b.clinic.ID)

	got, changed, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID, Actor: "staff:test", Reason: "ill"})
	if e := apperr.As(err); e == nil || e.Code != apperr.CodeBookingNotActive || e.Kind != apperr.Conflict || changed {
		t.Fatalf("cancel of the moved booking: %+v changed=%v err=%v; want BOOKING_NOT_ACTIVE", got, changed, err)
	}
	if n := testkit.AuditCount(t, b.pool, b.clinic.ID); n != before {
		t.Fatalf("the refused cancel wrote %d audit rows", n-before)
	}
	for id, want := range map[uuid.UUID]string{conf.Booking.ID: booking.StatusRescheduled, moved.ID: booking.StatusConfirmed} {
		if bk, err := b.svc.Get(ctx, id, uuid.Nil); err != nil || bk.Status != want {
			t.Fatalf("booking %s: %+v %v, want %s", id, bk, err, want)
		}
	}
}
