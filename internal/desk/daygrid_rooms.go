package desk

// The day grid's rooms: each active room with its hours on the days
// shown, for the grid that has a column per room.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
)

// GridRoom is an active room and when it is open on each day shown.
type GridRoom struct {
	ID   uuid.UUID
	Name string
	// AlwaysOpen: open whenever the clinic is, which the grid reads as
	// whenever one of its specialists works; else Days' Ranges.
	AlwaysOpen bool
	Days       []DayHours
	// Inactive: the room takes no new bookings but still holds those it
	// has; the grid shows its column only while it holds some.
	Inactive bool
}

// RoomClosure is a closure of a room over some of the days shown.
type RoomClosure struct {
	RoomID, RoomName string
	First, Last      time.Time // local dates, as midnight UTC
	Note             string
}

// GridRooms are the clinic's active rooms with their hours on the days
// local days from from on (closed on a date their own closure or the
// clinic's closes), and their closures over those days. clinicClosed
// says whether the whole clinic is closed on a date (GridData's
// closures).
//
// Errors: none of its own (database failures are internal).
func (b *Bookings) GridRooms(ctx context.Context, clinicID uuid.UUID, from availability.Date, days int, clinicClosed func(availability.Date) (string, bool)) ([]GridRoom, []RoomClosure, error) {
	q := db.New(b.pool)
	rows, err := q.ResourceList(ctx, clinicID)
	if err != nil {
		return nil, nil, fmt.Errorf("list rooms: %w", err)
	}
	hours, err := q.ResourceHoursListByClinic(ctx, clinicID)
	if err != nil {
		return nil, nil, fmt.Errorf("list room hours: %w", err)
	}
	to := from.AddDays(days - 1)
	cls, err := q.ResourceClosureListByClinicRange(ctx, db.ResourceClosureListByClinicRangeParams{ClinicID: clinicID, FromDay: dayUTC(from), ToDay: dayUTC(to)})
	if err != nil {
		return nil, nil, fmt.Errorf("list room closures: %w", err)
	}
	var closures []RoomClosure
	for _, c := range cls {
		closures = append(closures, RoomClosure{RoomID: c.ResourceID.String(), RoomName: c.ResourceName, First: c.FirstDay, Last: c.LastDay, Note: c.Note})
	}
	var out []GridRoom
	for _, r := range rows {
		g := GridRoom{ID: r.ID, Name: r.Name, AlwaysOpen: r.AlwaysOpen, Days: make([]DayHours, days), Inactive: !r.Active}
		for i := range g.Days {
			d := from.AddDays(i)
			h := DayHours{}
			for _, w := range hours {
				if w.ResourceID == r.ID && time.Weekday(w.Weekday) == d.Weekday() {
					h.Ranges = append(h.Ranges, availability.Range{Start: int(w.StartMin), End: int(w.EndMin)})
				}
			}
			if note, closed := clinicClosed(d); closed {
				h = DayHours{Override: true, Closed: true, Closure: true, Note: note}
			}
			day := dayUTC(d)
			for _, c := range cls {
				if c.ResourceID == r.ID && !day.Before(c.FirstDay) && !day.After(c.LastDay) {
					h = DayHours{Override: true, Closed: true, Closure: true, Note: c.Note}
				}
			}
			g.Days[i] = h
		}
		out = append(out, g)
	}
	return out, closures, nil
}

// RoomCount is how many active rooms the clinic has: the day grid offers
// a column per room only when it has some.
//
// Errors: none of its own (database failures are internal).
func (b *Bookings) RoomCount(ctx context.Context, clinicID uuid.UUID) (int, error) {
	rows, err := db.New(b.pool).ResourceList(ctx, clinicID)
	n := 0
	for _, r := range rows {
		if r.Active {
			n++
		}
	}
	return n, err
}

// ClinicClosedOn says whether one of cs (GridData's closures) closes the
// whole clinic on d, and its note.
func ClinicClosedOn(cs []practice.Closure) func(availability.Date) (string, bool) {
	return func(d availability.Date) (string, bool) {
		for _, c := range cs {
			if c.ClinicWide() && c.Covers(uuid.Nil, d) {
				return c.Note, true
			}
		}
		return "", false
	}
}
