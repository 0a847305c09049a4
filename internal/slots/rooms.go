package slots

// The rooms and devices of a type that needs one: which can serve it and
// their hours (read with the skeleton, only for such a type), their
// closed dates in the requested range, and their bookings of any type.

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
)

// loadRooms fills sk's rooms when its type needs one: two queries, none
// for a type that does not.
func loadRooms(ctx context.Context, q *db.Queries, sk *skeleton) error {
	if !sk.row.NeedsResource {
		return nil
	}
	typeID := sk.row.AppointmentType.ID
	rows, err := q.ResourcesForType(ctx, typeID)
	if err != nil {
		return fmt.Errorf("load resources: %w", err)
	}
	sk.rooms = make([]availability.Resource, len(rows))
	index := make(map[uuid.UUID]int, len(rows))
	for i, r := range rows {
		sk.rooms[i] = availability.Resource{ID: r.ID, AlwaysOpen: r.AlwaysOpen}
		index[r.ID] = i
	}
	hours, err := q.ResourceHoursForType(ctx, typeID)
	if err != nil {
		return fmt.Errorf("load resource hours: %w", err)
	}
	for _, h := range hours {
		if i, ok := index[h.ResourceID]; ok {
			sk.rooms[i].Weekly = append(sk.rooms[i].Weekly, availability.WeeklyRange{
				Weekday: time.Weekday(h.Weekday),
				Range:   availability.Range{Start: int(h.StartMin), End: int(h.EndMin)},
			})
		}
	}
	return nil
}

// roomsOfRange gives cal the rooms of sk with their closed dates in the
// request's range: one query, none for a type that needs no room.
func roomsOfRange(ctx context.Context, q *db.Queries, cal *calendar, sk *skeleton, req Request) error {
	if !sk.row.NeedsResource {
		return nil
	}
	cal.q.NeedsResource = true
	cal.q.Resources = make([]availability.Resource, len(sk.rooms))
	index := make(map[uuid.UUID]int, len(sk.rooms))
	for i, r := range sk.rooms {
		cal.q.Resources[i] = availability.Resource{ID: r.ID, AlwaysOpen: r.AlwaysOpen, Weekly: r.Weekly}
		index[r.ID] = i
	}
	if len(sk.rooms) == 0 {
		return nil
	}
	closed, err := q.ResourceClosedDaysForType(ctx, db.ResourceClosedDaysForTypeParams{
		AppointmentTypeID: sk.row.AppointmentType.ID, FromDay: dateTime(req.From), ToDay: dateTime(req.To),
	})
	if err != nil {
		return fmt.Errorf("load resource closures: %w", err)
	}
	for _, c := range closed {
		if i, ok := index[c.ResourceID]; ok {
			r := &cal.q.Resources[i]
			r.Closed = append(r.Closed, availability.Date{Year: c.Day.Year(), Month: c.Day.Month(), Day: c.Day.Day()})
		}
	}
	return nil
}

// loadRoomBusy reads the confirmed bookings of cal's rooms in its range,
// of whatever type, leaving out the one ignore names (a booking being
// moved, whose own room must not keep it from its new time).
func loadRoomBusy(ctx context.Context, q *db.Queries, cal *calendar, ignore *Interval) error {
	if !cal.q.NeedsResource || len(cal.q.Resources) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(cal.q.Resources))
	for i, r := range cal.q.Resources {
		ids[i] = r.ID
	}
	rows, err := q.ResourceBookingsInRange(ctx, db.ResourceBookingsInRangeParams{
		ClinicID: cal.clinicID, ResourceIds: ids, RangeStart: cal.rangeStart, RangeEnd: cal.rangeEnd,
	})
	if err != nil {
		return fmt.Errorf("load resource bookings: %w", err)
	}
	cal.q.ResourceBusy = make([]availability.ResourceBusy, 0, len(rows))
	for _, r := range rows {
		if ignore != nil && r.SpecialistID == ignore.SpecialistID && r.SlotStart.Equal(ignore.Start) && r.SlotEnd.Equal(ignore.End) {
			continue
		}
		cal.q.ResourceBusy = append(cal.q.ResourceBusy, availability.ResourceBusy{ResourceID: r.ResourceID, Start: r.SlotStart, End: r.SlotEnd})
	}
	return nil
}

// roomBound reports whether a booking of the type may hold a room, as
// the clinic's set-up stood at generation gen (the value a cached list
// was read under; "" for a counter not yet made): false only when this
// process read the type's skeleton under that very generation and it
// needs no room. A skeleton of an older generation cannot tell: the type
// may have gained a need since, and a list carried over the booking would
// keep a time whose last free room the booking took.
func (s *Service) roomBound(typeID uuid.UUID, gen string) bool {
	v, ok := s.skeletons.Load(typeID)
	if !ok {
		return true
	}
	sk := v.(*skeleton)
	return sk.gen == "" || sk.gen != cmp.Or(gen, "0") || !s.now().Before(sk.expires) || sk.row.NeedsResource
}
