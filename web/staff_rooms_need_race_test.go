package web_test

import (
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/testkit"
)

// A room need saved again while staff move one of the type's bookings,
// the two released together at a barrier: both succeed, in any order (the
// need's change locks the bookings' rows before the rooms, as a move
// does, so the two never wait on each other in a cycle). Eight rounds.
func TestRoomNeedSavedWhileABookingMovesBothSucceed(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c, _ := a.roomClinic(t)
	ultra := c.Types[1]
	admin := c.Admin.User(c.ID)
	need := practice.Need{Kind: "ultrasound"}
	if _, err := a.Deps.Practice.SetTypeNeed(t.Context(), admin, ultra.ID, need); err != nil {
		t.Fatal(err)
	}
	at := c.Next(time.Wednesday, 8, 0)
	for round := range 8 {
		start := at.Add(time.Duration(round) * time.Hour)
		b := a.bookAs(t, c, ultra, c.Specialists[0].ID, start, booking.Patient{Name: "Mira Move", Email: uniqueEmail("move")}).Booking
		errs := testkit.Race(2, func(i int) error {
			if i == 0 {
				_, err := a.Deps.Practice.SetTypeNeed(t.Context(), admin, ultra.ID, need)
				return err
			}
			_, err := a.Deps.Bookings.Reschedule(t.Context(), booking.RescheduleRequest{
				BookingID: b.ID, ClinicID: c.ID, Start: start.Add(24 * time.Hour), Actor: "staff:test", Reason: "later", ExpectVersion: b.Version,
			})
			return err
		})
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: %s: %v", round, []string{"saving the need", "the move"}[i], err)
			}
		}
	}
}
