package waitlist

// The rooms an offer's hold holds, for a type that needs one.

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// freeRooms are the rooms that can serve a booking like b (its type) and
// have no confirmed booking over b's time, in the order the gate gives
// them: those an offer's hold may hold. needs is false for a type that
// needs no room. The rooms' hours are the gate's to check, as a hold
// only promises what the booking will be given.
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
	free := rooms[:0]
	for _, id := range rooms {
		taken := false
		for _, bk := range busy {
			taken = taken || bk.ResourceID == id
		}
		if !taken {
			free = append(free, id)
		}
	}
	return free, true, nil
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
