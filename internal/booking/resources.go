package booking

// Rooms and devices at the gate. PostgreSQL gives a booking of a type that
// needs a resource its resource as the row is inserted (the trigger
// bookings_take_resource), under the resources' locks; a move takes those
// locks here first, before it changes the booking it moves.

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// lockResources takes the locks of every resource a booking of the type
// could hold (BookingResourcesLock), in the order the insert takes them.
// A move takes them after the specialist's lock and before the old row
// changes: a booking of the room's time by another specialist, which
// holds the room's lock, may be waiting for the old row, and must not be
// waited for in turn.
func lockResources(ctx context.Context, q *db.Queries, clinicID, typeID uuid.UUID) error {
	if err := q.BookingResourcesLock(ctx, db.BookingResourcesLockParams{ClinicID: clinicID, AppointmentTypeID: typeID}); err != nil {
		return fmt.Errorf("lock resources: %w", err)
	}
	return nil
}
