package booking_test

import (
	"context"
	"testing"

	"github.com/clinic/booking/internal/booking"
)

// A booking stored before today's free-text rules (a name with a carriage
// return, say) can still be moved: the patient's details are the stored
// booking's, not new input, and are carried over as they are.
func TestRescheduleKeepsAStoredNameTodaysRulesWouldRefuse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	made, err := b.svc.Book(ctx, b.req(0, 0, b.monday(9, 0)))
	if err != nil {
		t.Fatal(err)
	}
	const old = "Eve\rretry: 86400000"
	if _, err := b.pool.Exec(ctx, `UPDATE bookings SET patient_name = $1 WHERE id = $2`, old, made.Booking.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := booking.ValidatePatient(booking.Patient{Name: old, Email: "eve@example.org"}); err == nil {
		t.Fatal("the rules must refuse this name as new input, or the test proves nothing")
	}
	moved, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: made.Booking.ID, Start: b.monday(11, 0), Actor: "patient"})
	if err != nil {
		t.Fatalf("reschedule of a stored booking: %v", err)
	}
	if moved.Patient.Name != old {
		t.Fatalf("name carried over as %q", moved.Patient.Name)
	}
}
