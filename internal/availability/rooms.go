package availability

// Rooms and devices: a slot of a type that needs one is offered only when
// one of the resources that can serve it is open over the whole slot and
// free of other bookings, as the booking gate (PostgreSQL) will check.

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Resource is a room or device that can serve the type being booked.
type Resource struct {
	ID uuid.UUID
	// AlwaysOpen: open at any time of any date not Closed; otherwise only
	// inside its Weekly hours. A slot must fit inside one range of the
	// hours of its start's local date.
	AlwaysOpen bool
	Weekly     []WeeklyRange
	Closed     []Date // local dates it takes no bookings
}

// ResourceBusy is a confirmed booking of a resource. Its
// type's buffers do not apply: the gate keeps bookings of one resource
// apart by their times alone.
type ResourceBusy struct {
	ResourceID uuid.UUID
	Start, End time.Time
}

// room is a resource prepared for one computation: its open stretches
// and its busy ones, in Unix nanoseconds, each sorted and disjoint.
type room struct {
	id   uuid.UUID
	open []interval
	busy []interval
}

// fitResources keeps the slots that one of q's resources can serve (free
// of its bookings and of the holds that hold it) and
// names, in each, the resources free for it in the order of their ids
// (the order in which the gate offers them, so the first is the one a
// booking would be given). from and to are the computed dates.
func fitResources(slots []Slot, q Query, from, to Date, loc *time.Location) []Slot {
	busy := q.ResourceBusy
	for _, h := range q.Holds {
		if h.ResourceID != uuid.Nil {
			busy = append(busy[:len(busy):len(busy)], ResourceBusy{ResourceID: h.ResourceID, Start: h.Start, End: h.End})
		}
	}
	rooms := prepareRooms(q.Resources, busy, from, to, loc)
	out := slots[:0]
	ids := make([]uuid.UUID, 0, len(slots))
	for _, s := range slots {
		lo, hi := unixNano(s.Start), unixNano(s.End)
		first := len(ids)
		for i := range rooms {
			if contains(rooms[i].open, lo, hi) && isFree(rooms[i].busy, lo, hi) {
				ids = append(ids, rooms[i].id)
			}
		}
		if len(ids) > first {
			s.ResourceIDs = ids[first:len(ids):len(ids)]
			out = append(out, s)
		}
	}
	return out
}

// prepareRooms turns resources into rooms ordered by id (a resource listed
// twice counts once), their open stretches over the dates from..to.
func prepareRooms(resources []Resource, busy []ResourceBusy, from, to Date, loc *time.Location) []room {
	sorted := slices.Clone(resources)
	slices.SortFunc(sorted, func(a, b Resource) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	sorted = slices.CompactFunc(sorted, func(a, b Resource) bool { return a.ID == b.ID })
	rooms := make([]room, len(sorted))
	index := make(map[uuid.UUID]int, len(sorted))
	for i, r := range sorted {
		index[r.ID] = i
		rooms[i].id = r.ID
	}
	openStretches(rooms, sorted, from, to, loc)
	for _, b := range busy {
		if i, ok := index[b.ResourceID]; ok {
			if iv := (interval{unixNano(b.Start), unixNano(b.End)}); iv.start < iv.end {
				rooms[i].busy = append(rooms[i].busy, iv)
			}
		}
	}
	for i := range rooms {
		rooms[i].busy = merge(rooms[i].busy)
	}
	return rooms
}

// openStretches sets when each room is open over the dates from..to, as
// real time: each range of its resource's hours on each date it is not
// closed, turned into instants by the date's wall clock (so across a
// change of the clock a range has its true length). An always-open
// resource's days join into one stretch between closed dates; ranges of
// hours stay apart even where one ends at midnight and the next begins,
// as the gate reads them.
func openStretches(rooms []room, resources []Resource, from, to Date, loc *time.Location) {
	var clock WallClock
	var hours []Range
	for d := from; !to.Before(d); d = d.AddDays(1) {
		clock.Reset(loc, d)
		wd := d.Weekday()
		for i, r := range resources {
			if slices.Contains(r.Closed, d) {
				continue
			}
			hours = hours[:0]
			if r.AlwaysOpen {
				hours = append(hours, Range{Start: 0, End: 24 * 60})
			}
			for _, wr := range r.Weekly {
				if !r.AlwaysOpen && wr.Weekday == wd {
					hours = appendValid(hours, wr.Range)
				}
			}
			open := rooms[i].open
			for _, h := range hours {
				iv := interval{clock.first(int64(h.Start) * int64(time.Minute)), clock.last(int64(h.End) * int64(time.Minute))}
				if iv.start >= iv.end {
					continue
				}
				if n := len(open); r.AlwaysOpen && n > 0 && open[n-1].end >= iv.start {
					open[n-1].end = max(open[n-1].end, iv.end)
					continue
				}
				open = append(open, iv)
			}
			rooms[i].open = open
		}
	}
	for i := range rooms {
		slices.SortFunc(rooms[i].open, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	}
}

// contains reports whether one stretch of open, sorted by start, holds
// all of [start, end).
func contains(open []interval, start, end int64) bool {
	// The last stretch starting at or before start.
	i, _ := slices.BinarySearchFunc(open, start, func(iv interval, t int64) int {
		if iv.start <= t {
			return -1
		}
		return 1
	})
	for j := i - 1; j >= 0; j-- {
		if open[j].end >= end {
			return true
		}
		if open[j].end <= start {
			// Stretches of one date never overlap, and earlier dates end
			// earlier: nothing before this one reaches further.
			return false
		}
	}
	return false
}
