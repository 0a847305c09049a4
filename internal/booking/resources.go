package booking

// Rooms and devices at the gate. PostgreSQL gives a booking of a type that
// needs a resource its resource as the row is inserted (the trigger
// bookings_take_resource), under the resources' locks; a move takes those
// locks here first, before it changes the booking it moves.

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
)

// resourceGate is the exclusion constraint two bookings of one room
// meet in, and the name the insert's trigger gives its refusal when no
// room the booking may take is free.
const resourceGate = "bookings_no_resource_overlap"

// RoomTakenReason is the "reason" detail of a SLOT_TAKEN whose time was
// lost for want of a free room (the specialist may be free then): staff
// are told so in words.
const RoomTakenReason = "room"

// lostRoom reports whether err is the refusal of the resources' gate.
func lostRoom(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23P01" && pgErr.ConstraintName == resourceGate
}

// roomTaken is SLOT_TAKEN for want of a room: the same lost race, with
// nothing written, saying why.
func roomTaken() *apperr.Error {
	e := apperr.SlotTaken()
	e.Message = "No room this appointment needs is free at that time. Please pick another time."
	e.Details = map[string]any{"reason": RoomTakenReason}
	return e
}

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
