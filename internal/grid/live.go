package grid

// Keeping a snapshot current from the events a process hears, without
// reading it again: what a view kept in memory between reads needs.

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/holds"
)

// LiveSnapshot is Snapshot for a view that is to be kept and updated by
// events: it fails when the clinic's live holds cannot be read (Snapshot
// then shows none, which a kept view must never do). The holds are read
// within the call (with the cache's counters, at the moment the cached
// lists are of; or after the slots), so no hold claimed before the call
// is missing.
func (s *Service) LiveSnapshot(ctx context.Context, v View) (*Snapshot, error) {
	return s.snapshot(ctx, v, true)
}

// Type is the view's appointment type, as the snapshot computed it.
func (sn *Snapshot) Type() availability.AppointmentType { return sn.typ }

// Positions are the view's slot positions (from hours alone), in order.
func (sn *Snapshot) Positions() []availability.Slot { return sn.positions }

// Holds are the clinic's live holds the snapshot knows of.
func (sn *Snapshot) Holds() []holds.Hold { return sn.holds }

// FreeOfBookings is every position with its specialists (and, for a type
// that needs one, its rooms) free of bookings, holds left out: the list
// slots.Free gives with NoHolds.
func (sn *Snapshot) FreeOfBookings() []availability.Slot {
	out := make([]availability.Slot, 0, len(sn.free))
	for _, p := range sn.positions {
		if ids := sn.free[p.Start.Unix()]; len(ids) > 0 {
			out = append(out, availability.Slot{Start: p.Start, End: p.End, SpecialistIDs: ids, ResourceIDs: sn.roomsFree[p.Start.Unix()]})
		}
	}
	return out
}

// FreeAt is the position starting at start with its specialists free of
// bookings (holds left out); false when start is no position of the view
// or every specialist there is booked.
func (sn *Snapshot) FreeAt(start time.Time) (availability.Slot, bool) {
	i, found := slices.BinarySearchFunc(sn.positions, start, func(p availability.Slot, t time.Time) int { return p.Start.Compare(t) })
	if !found {
		return availability.Slot{}, false
	}
	ids := sn.free[start.Unix()]
	if len(ids) == 0 {
		return availability.Slot{}, false
	}
	return availability.Slot{Start: sn.positions[i].Start, End: sn.positions[i].End, SpecialistIDs: ids, ResourceIDs: sn.roomsFree[start.Unix()]}, true
}

// Bookable is the free slots with the live holds taken out: what
// GET /v1/appointment-types/{id}/timeslots answers for the view's range.
func (sn *Snapshot) Bookable() []availability.Slot {
	free := sn.FreeOfBookings()
	if len(sn.holds) == 0 {
		return free
	}
	busy := make([]availability.Busy, len(sn.holds))
	for i, h := range sn.holds {
		busy[i] = availability.Busy{SpecialistID: h.SpecialistID, ResourceID: h.ResourceID, Start: h.Start, End: h.End, BufferBefore: h.BufferBefore, BufferAfter: h.BufferAfter}
	}
	return availability.ApplyHolds(sn.typ, free, busy)
}

// Apply is the snapshot after ev, a new one (sn is left as it was, for
// whoever still reads it). ok is false when ev cannot be applied exactly
// (a cancellation frees time only a new reading can tell; a calendar
// change; a booking whose buffers are unknown): the snapshot must then be
// read again. Events of another clinic change nothing.
//
// Applying an event that the snapshot already reflects changes nothing,
// so events heard while the snapshot was being read may be applied again.
func (sn *Snapshot) Apply(ev holds.Event) (next *Snapshot, ok bool) {
	if ev.ClinicID != sn.ClinicID {
		return sn, true
	}
	switch ev.Type {
	case holds.EventHold, holds.EventHeartbeat:
		owner := ev.ClientHash
		if owner == "" {
			owner = holds.ClientHash(ev.ClientID)
		}
		c := *sn
		c.holds, c.owners = sn.withHold(ev.Hold, owner)
		return &c, true
	case holds.EventRelease:
		c := *sn
		c.holds, c.owners = sn.without(ev.HoldID)
		return &c, true
	case holds.EventConfirm:
		return sn.booked(ev)
	default:
		return sn, false
	}
}

// Lapsed is the snapshot without the holds whose life ended by now: the
// ones a reading at now would no longer find (sn itself when there are
// none). A hold lapses a moment before the event that announces it.
func (sn *Snapshot) Lapsed(now time.Time) *Snapshot {
	n := 0
	for _, h := range sn.holds {
		if h.ExpiresAt.After(now) {
			n++
		}
	}
	if n == len(sn.holds) {
		return sn
	}
	c := *sn
	c.holds, c.owners = make([]holds.Hold, 0, n), make([]string, 0, n)
	for i, h := range sn.holds {
		if h.ExpiresAt.After(now) {
			c.holds, c.owners = append(c.holds, h), append(c.owners, sn.Owner(i))
		}
	}
	return &c
}

// booked applies a new booking: its specialist leaves every position the
// booking blocks with its buffers, and the hold it came from goes.
func (sn *Snapshot) booked(ev holds.Event) (*Snapshot, bool) {
	if ev.Start.IsZero() || ev.End.IsZero() || ev.SpecialistID == uuid.Nil || sn.rooms {
		return sn, false
	}
	before, after, known := time.Duration(0), time.Duration(0), false
	for _, h := range sn.holds {
		if ev.HoldID != "" && h.HoldID == ev.HoldID {
			before, after, known = h.BufferBefore, h.BufferAfter, true
		}
	}
	if !known && ev.AppointmentTypeID == sn.View.AppointmentTypeID {
		before, after, known = sn.typ.BufferBefore, sn.typ.BufferAfter, true
	}
	if !known {
		return sn, false
	}
	busy := []availability.Busy{{SpecialistID: ev.SpecialistID, Start: ev.Start, End: ev.End, BufferBefore: before, BufferAfter: after}}
	// Only the positions whose time with the type's buffers can meet the
	// booking's with its own are looked at again (a minute wider either
	// way; ApplyHolds decides exactly): a booking elsewhere in the week,
	// or in another week, costs a scan of the positions and no copy.
	lo := ev.Start.Add(-before - sn.typ.BufferAfter - time.Minute)
	hi := ev.End.Add(after + sn.typ.BufferBefore + time.Minute)
	var touched []availability.Slot
	for _, p := range sn.positions {
		if p.Start.Before(hi) && p.End.After(lo) {
			if ids := sn.free[p.Start.Unix()]; len(ids) > 0 {
				touched = append(touched, availability.Slot{Start: p.Start, End: p.End, SpecialistIDs: ids})
			}
		}
	}
	c := *sn
	if len(touched) > 0 {
		c.free = maps.Clone(sn.free)
		for _, sl := range touched {
			delete(c.free, sl.Start.Unix())
		}
		for _, sl := range availability.ApplyHolds(sn.typ, touched, busy) {
			c.free[sl.Start.Unix()] = sl.SpecialistIDs
		}
	}
	if ev.HoldID != "" {
		c.holds, c.owners = sn.without(ev.HoldID)
	}
	return &c, true
}

// without is the holds and their owners without the hold id.
func (sn *Snapshot) without(id string) ([]holds.Hold, []string) {
	hs, owners := make([]holds.Hold, 0, len(sn.holds)), make([]string, 0, len(sn.holds))
	for i, h := range sn.holds {
		if h.HoldID != id {
			hs, owners = append(hs, h), append(owners, sn.Owner(i))
		}
	}
	return hs, owners
}

// withHold is the holds and their owners with h (owned by owner) in place
// of any earlier payload of its id, in the order a reading lists them: a
// viewer holding two times sees the same one first either way.
func (sn *Snapshot) withHold(h holds.Hold, owner string) ([]holds.Hold, []string) {
	hs, owners := make([]holds.Hold, 0, len(sn.holds)+1), make([]string, 0, len(sn.holds)+1)
	placed := false
	for i, o := range sn.holds {
		if o.HoldID == h.HoldID {
			continue
		}
		if !placed && holdOrder(h, o) < 0 {
			hs, owners, placed = append(hs, h), append(owners, owner), true
		}
		hs, owners = append(hs, o), append(owners, sn.Owner(i))
	}
	if !placed {
		hs, owners = append(hs, h), append(owners, owner)
	}
	return hs, owners
}

// holdOrder is the order of holds.Store.Active: by start, specialist (as
// bytes, which order as the UUIDs' strings do) and id.
func holdOrder(a, b holds.Hold) int {
	return cmp.Or(a.Start.Compare(b.Start), bytes.Compare(a.SpecialistID[:], b.SpecialistID[:]), cmp.Compare(a.HoldID, b.HoldID))
}
