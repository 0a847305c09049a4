package waitlist

// The rooms an offer's hold holds, for a type that needs one.

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// freeRooms are the rooms that can serve a booking like b (its type), are
// open over b's time (hours and closures, as the gate checks them) and
// have no confirmed booking over it, in the order the gate gives them:
// those an offer's hold may hold. needs is false for a type that needs no
// room.
func freeRooms(ctx context.Context, q *db.Queries, b booking.Booking) (rooms []uuid.UUID, needs bool, err error) {
	rs, err := q.ResourcesForType(ctx, b.AppointmentTypeID)
	if err != nil {
		return nil, false, fmt.Errorf("load rooms: %w", err)
	}
	if len(rs) == 0 {
		return nil, false, nil
	}
	for _, r := range rs {
		rooms = append(rooms, r.ID)
	}
	busy, err := q.ResourceBookingsInRange(ctx, db.ResourceBookingsInRangeParams{
		ClinicID: b.ClinicID, ResourceIds: rooms, RangeStart: b.Start, RangeEnd: b.End,
	})
	if err != nil {
		return nil, true, fmt.Errorf("load room bookings: %w", err)
	}
	var free []uuid.UUID
	for _, id := range rooms {
		taken := false
		for _, bk := range busy {
			taken = taken || bk.ResourceID == id
		}
		if !taken {
			free = append(free, id)
		}
	}
	if len(free) == 0 {
		return nil, true, nil
	}
	open, err := q.ResourcesOpenOver(ctx, db.ResourcesOpenOverParams{Ids: free, ClinicID: b.ClinicID, RangeStart: b.Start, RangeEnd: b.End})
	if err != nil {
		return nil, true, fmt.Errorf("rooms open: %w", err)
	}
	return open, true, nil
}

// roomsOf are the rooms the hold of an opening made from f may hold: the
// freed booking's own room (free now that it is cancelled or moved), or
// those f names (a time staff offer by hand); none for a type that needs
// no room.
func roomsOf(f freed) []uuid.UUID {
	if f.rooms != nil {
		return f.rooms
	}
	if f.booking.ResourceID != uuid.Nil {
		return []uuid.UUID{f.booking.ResourceID}
	}
	return nil
}
