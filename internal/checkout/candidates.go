package checkout

// The slots a request can take: the day's free slots, the specialists
// free at a start in the order to try them, and why a time is not free.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/assignment"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/slots"
)

// daySlots computes the free slots of start's local day for a type, with
// the type's row. ignore is a booking to treat as free (a reschedule's own).
func (s *Service) daySlots(ctx context.Context, typeID, specialist uuid.UUID, start time.Time, ignore *booking.Booking) (slots.Result, error) {
	clinicID, err := s.slots.ClinicOfType(ctx, typeID)
	if err != nil {
		if isNotFound(err) {
			return slots.Result{}, apperr.NotFoundf("appointmentTypeId", "No such appointment type.")
		}
		return slots.Result{}, err
	}
	loc, err := s.slots.Zone(ctx, clinicID)
	if err != nil {
		return slots.Result{}, err
	}
	day := availability.DateOf(start, loc)
	req := slots.Request{AppointmentTypeID: typeID, From: day, To: day, SpecialistID: specialist, NoHolds: true}
	if ignore != nil {
		req.Ignore = &slots.Interval{SpecialistID: ignore.SpecialistID, Start: ignore.Start, End: ignore.End}
	}
	return s.slots.Free(ctx, req)
}

// candidatesIn are the specialists of res free at start, in the order to
// try them. exclude is a booking treated as free in res. Holds are not
// looked at: a claim's own script refuses a slot another client's hold
// overlaps, so reading them first would only cost a round trip.
func (s *Service) candidatesIn(ctx context.Context, res slots.Result, specialist uuid.UUID, start time.Time, exclude uuid.UUID) ([]assignment.Candidate, error) {
	if cands := candidatesAt(res, start); len(cands) > 0 {
		return cands, nil
	}
	return nil, s.notFree(ctx, res, specialist, start, exclude)
}

// candidatesAt are the specialists of res free at start, in the order to
// try them; none when start is not one of res's slots.
func candidatesAt(res slots.Result, start time.Time) []assignment.Candidate {
	var slot *availability.Slot
	for i := range res.Slots {
		if res.Slots[i].Start.Equal(start) {
			slot = &res.Slots[i]
			break
		}
	}
	if slot == nil {
		return nil
	}
	cands := make([]assignment.Candidate, 0, len(slot.SpecialistIDs))
	for _, id := range slot.SpecialistIDs {
		cands = append(cands, assignment.Candidate{ID: id, Priority: res.Priority[id]})
	}
	return assignment.Order(res.Stored.ID, start, cands)
}

// roomsAt are the rooms of res free of bookings at start, in the order to
// give them; none for a type that needs no room.
func roomsAt(res slots.Result, start time.Time) []uuid.UUID {
	if !res.NeedsRoom {
		return nil
	}
	for _, sl := range res.Slots {
		if sl.Start.Equal(start) {
			return sl.ResourceIDs
		}
	}
	return nil
}

// notFree tells a booked slot (409) from a time that is not a slot (400):
// for a type that needs a room, a time whose every room is booked is
// booked.
// The bitmap answers "booked" for a hot slot's late losers without a
// database round trip; only what it cannot vouch for is asked of
// PostgreSQL.
func (s *Service) notFree(ctx context.Context, res slots.Result, specialist uuid.UUID, start time.Time, exclude uuid.UUID) error {
	t := res.Stored
	ids := []uuid.UUID{specialist}
	if specialist == uuid.Nil {
		ids = ids[:0]
		for id := range res.Priority {
			ids = append(ids, id)
		}
	}
	end := start.Add(time.Duration(t.DurationMin) * time.Minute)
	if exclude == uuid.Nil && len(ids) > 0 {
		all := true
		for _, id := range ids {
			if taken, known := s.slots.Bitmap.Taken(ctx, res.Location, res.ClinicID, id, start, end); !known || !taken {
				all = false
				break
			}
		}
		if all {
			return apperr.SlotTaken()
		}
	}
	booked, err := db.New(s.pool).BookingOverlapExists(ctx, db.BookingOverlapExistsParams{
		SpecialistIds: ids, RangeStart: start, RangeEnd: end, ExcludeID: exclude,
	})
	if err != nil {
		return fmt.Errorf("check booked: %w", err)
	}
	if booked {
		return apperr.SlotTaken()
	}
	if res.NeedsRoom {
		if booked, err = s.roomsBooked(ctx, res, start, end); err != nil {
			return err
		}
		if booked {
			return apperr.SlotTaken()
		}
	}
	return apperr.Invalidf("slotStartDate", "%s is not a bookable slot of %s (outside opening hours, too soon, too far ahead, or off the grid).",
		start.Format(time.RFC3339), t.Name)
}

// roomsBooked reports whether every room that can serve res's type has a
// confirmed booking (of any type) over [start, end): the time is taken,
// whichever specialist is asked for.
func (s *Service) roomsBooked(ctx context.Context, res slots.Result, start, end time.Time) (bool, error) {
	q := db.New(s.pool)
	rooms, err := q.ResourcesForType(ctx, res.Stored.ID)
	if err != nil || len(rooms) == 0 {
		return false, err
	}
	ids := make([]uuid.UUID, len(rooms))
	for i, r := range rooms {
		ids[i] = r.ID
	}
	busy, err := q.ResourceBookingsInRange(ctx, db.ResourceBookingsInRangeParams{ClinicID: res.ClinicID, ResourceIds: ids, RangeStart: start, RangeEnd: end})
	if err != nil {
		return false, fmt.Errorf("check rooms booked: %w", err)
	}
	for _, id := range ids {
		if !slices.ContainsFunc(busy, func(b db.ResourceBookingsInRangeRow) bool { return b.ResourceID == id }) {
			return false, nil
		}
	}
	return true, nil
}
