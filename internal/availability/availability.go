// Package availability computes the bookable slots of a clinic.
//
// It is pure: callers load specialists, bookings and holds, and this
// package only does arithmetic on them, so the rules (working hours,
// buffers, notice, daylight saving) can be tested exhaustively without a
// database.
package availability

import (
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Range is a local wall-clock range within one day, in minutes from local
// midnight: 0 <= Start < End <= 1440. Ranges outside those bounds are
// ignored rather than clamped, since a clamped range would offer hours
// nobody entered.
type Range struct {
	Start, End int
}

// WeeklyRange is a specialist's usual hours on one weekday; a day may have
// several, which is how lunch breaks are expressed.
type WeeklyRange struct {
	Weekday time.Weekday
	Range
}

// Override replaces a specialist's weekly hours on one date: Closed, or the
// given Ranges instead. If several overrides name the same date, the first
// one wins.
type Override struct {
	Date   Date
	Closed bool
	Ranges []Range
}

// Specialist carries only what the slot rules read, so the caller decides
// where working hours are stored.
type Specialist struct {
	ID       uuid.UUID
	Priority int // higher wins
	Active   bool
	Weekly   []WeeklyRange
	// Overrides may span any dates; only those in the queried dates are read.
	Overrides []Override
}

// Busy is a confirmed booking or an active hold of some specialist, with
// the buffers of ITS OWN appointment type: a long surgery's clean-up time
// still applies when a short check-up is being booked next to it.
type Busy struct {
	SpecialistID uuid.UUID
	// ResourceID, of a hold, is the room or device it holds with its
	// specialist (uuid.Nil: none): it keeps the room from every slot its
	// own time (without buffers) overlaps, whoever the slot's specialists
	// are. Bookings' rooms are ResourceBusy's.
	ResourceID                uuid.UUID
	Start, End                time.Time
	BufferBefore, BufferAfter time.Duration
}

// AppointmentType holds the slot rules of the type being booked. Its
// buffers apply to the new slot only; existing bookings bring their own.
//
// It is not the clinic's appointment type (a named, versioned thing of a
// clinic, kept in the database) but the engine's input: only the rules, as
// durations, with no identity, so that the engine stays a pure function
// of its query. slots.TypeOf makes one from a stored type.
type AppointmentType struct {
	Duration, Step            time.Duration // Step may be smaller than Duration
	BufferBefore, BufferAfter time.Duration
	MinNotice                 time.Duration
	MaxAdvance                time.Duration // booking window, measured from Now; 0 means none
}

// Query is everything a computation needs, loaded by the caller, so that
// Compute never reaches for the clock or the database.
type Query struct {
	Zone         *time.Location // nil means UTC
	Type         AppointmentType
	Specialists  []Specialist // the eligible ones (those who perform the type)
	Bookings     []Busy       // confirmed bookings (any type) of those specialists
	Holds        []Busy       // active holds
	From, To     Date         // inclusive, local dates
	Now          time.Time
	SpecialistID uuid.UUID // uuid.Nil = pooled view
	// NeedsResource: the type needs a room or device, one of Resources
	// (the active ones that can serve it: the one it names, or those of
	// the kind it needs), open and free of ResourceBusy (the confirmed
	// bookings of those resources, of any type) for the whole slot.
	NeedsResource bool
	Resources     []Resource
	ResourceBusy  []ResourceBusy
}

// Slot is one bookable start. In the pooled view several specialists can
// share it, and the customer need not care which one they get.
type Slot struct {
	Start, End time.Time // UTC
	// SpecialistIDs are the specialists free for the slot, ordered by
	// priority desc then ID string asc, so the first is the one to assign.
	SpecialistIDs []uuid.UUID
	// ResourceIDs are the resources free for the slot when the type needs
	// one, in the order of their ids (the order the gate gives them in).
	ResourceIDs []uuid.UUID
}

// Compute returns the free slots of q, holds included, sorted by start.
//
// Slots are generated per specialist per date by stepping through each
// working range in wall-clock time, which is how a receptionist reads a
// timetable; each wall time then becomes zero, one or two instants
// depending on daylight saving, and each instant must fit inside the real
// extent of its range.
func Compute(q Query) []Slot {
	typ := q.Type
	if typ.Duration <= 0 || typ.Step <= 0 {
		return []Slot{}
	}
	loc := q.Zone
	if loc == nil {
		loc = time.UTC
	}

	earliest := addSat(unixNano(q.Now), typ.MinNotice)
	latest := int64(math.MaxInt64)
	if typ.MaxAdvance != 0 {
		latest = addSat(unixNano(q.Now), typ.MaxAdvance)
	}
	from, to := clipDates(q.From, q.To, earliest, latest, loc)
	if to.Before(from) {
		return []Slot{}
	}

	staff := roster(q.Specialists, q.SpecialistID, from, to)
	if len(staff) == 0 {
		return []Slot{}
	}
	indexBusy(staff, q.Bookings, q.Holds)

	rules := slotRules{
		step:     int64(typ.Step),
		length:   int64(typ.Duration),
		before:   int64(typ.BufferBefore),
		after:    int64(typ.BufferAfter),
		earliest: earliest,
		latest:   latest,
	}
	cands := make([]candidate, 0, estimate(staff, rules.step, DaysBetween(from, to)+1))
	var (
		clock WallClock
		hours []Range
	)
	for d := from; !to.Before(d); d = d.AddDays(1) {
		clock.Reset(loc, d)
		dayStart := len(cands)
		for rank := range staff {
			hours = staff[rank].hours(hours[:0], d)
			for _, r := range hours {
				cands = rules.appendRange(cands, &clock, r, staff[rank].busy, rank)
			}
		}
		// Sorting per day keeps each sort small; dates follow each other in
		// real time, so the days come out in order too.
		slices.SortFunc(cands[dayStart:], compareCandidates)
	}
	// Except where a zone turns its clocks back across midnight, which
	// interleaves two dates. Rare enough to pay for a full sort then.
	if !slices.IsSortedFunc(cands, compareCandidates) {
		slices.SortFunc(cands, compareCandidates)
	}
	slots := group(cands, staff, typ.Duration)
	if q.NeedsResource {
		return fitResources(slots, q, from, to, loc)
	}
	return slots
}

// slotRules are a query's limits in the engine's unit, Unix nanoseconds,
// which keeps the innermost loop free of time.Time arithmetic.
type slotRules struct {
	step, length, before, after int64
	earliest, latest            int64
}

// appendRange appends a candidate for every free start of one working
// range of the specialist with the given rank and busy intervals.
func (ru slotRules) appendRange(cands []candidate, c *WallClock, r Range, busy []interval, rank int) []candidate {
	lo, hi := int64(r.Start)*int64(time.Minute), int64(r.End)*int64(time.Minute)
	rangeStart, rangeEnd := c.first(lo), c.last(hi)
	var buf [4]int64
	for wall := lo; wall < hi; wall += ru.step {
		for _, t := range c.instants(buf[:0], wall) {
			if t < rangeStart || t+ru.length > rangeEnd {
				continue
			}
			if t < ru.earliest || t > ru.latest {
				continue
			}
			if !isFree(busy, t-ru.before, t+ru.length+ru.after) {
				continue
			}
			cands = append(cands, candidate{start: t, rank: rank})
		}
	}
	return cands
}

// ApplyHolds removes held specialists from slots, and held rooms from
// the slots of a type that needs one, and drops the slots left with no
// specialist or no room. It exists so that a cached hold-free computation
// can be brought up to date as holds come and go: for every q,
// Compute(q) equals ApplyHolds(q.Type, Compute(q without holds), q.Holds).
// The input slots are not modified.
func ApplyHolds(t AppointmentType, slots []Slot, holds []Busy) []Slot {
	held := make(map[uuid.UUID][]interval)
	var rooms map[uuid.UUID][]interval
	for _, h := range holds {
		if iv, ok := buffered(h); ok {
			held[h.SpecialistID] = append(held[h.SpecialistID], iv)
		}
		if iv := (interval{unixNano(h.Start), unixNano(h.End)}); h.ResourceID != uuid.Nil && iv.start < iv.end {
			if rooms == nil {
				rooms = make(map[uuid.UUID][]interval)
			}
			rooms[h.ResourceID] = append(rooms[h.ResourceID], iv)
		}
	}
	for id, ivs := range held {
		held[id] = merge(ivs)
	}
	for id, ivs := range rooms {
		rooms[id] = merge(ivs)
	}

	total := 0
	for _, s := range slots {
		total += len(s.SpecialistIDs) + len(s.ResourceIDs)
	}
	out := make([]Slot, 0, len(slots))
	ids := make([]uuid.UUID, 0, total)
	for _, s := range slots {
		lo := addSat(unixNano(s.Start), -t.BufferBefore)
		hi := addSat(unixNano(s.End), t.BufferAfter)
		first := len(ids)
		for _, id := range s.SpecialistIDs {
			if isFree(held[id], lo, hi) {
				ids = append(ids, id)
			}
		}
		if len(ids) == first {
			continue
		}
		sl := Slot{Start: s.Start, End: s.End, SpecialistIDs: ids[first:len(ids):len(ids)]}
		if len(s.ResourceIDs) > 0 {
			if sl.ResourceIDs = freeRooms(s, rooms, &ids); len(sl.ResourceIDs) == 0 {
				ids = ids[:first]
				continue
			}
		}
		out = append(out, sl)
	}
	return out
}

// freeRooms are the rooms of s that no hold in rooms (each room's held
// times, merged) overlaps, appended to *ids and sliced from it.
func freeRooms(s Slot, rooms map[uuid.UUID][]interval, ids *[]uuid.UUID) []uuid.UUID {
	if len(rooms) == 0 {
		return s.ResourceIDs
	}
	lo, hi := unixNano(s.Start), unixNano(s.End)
	first := len(*ids)
	for _, id := range s.ResourceIDs {
		if isFree(rooms[id], lo, hi) {
			*ids = append(*ids, id)
		}
	}
	return (*ids)[first:len(*ids):len(*ids)]
}

// Fits reports whether start is a free slot start for the specialist. The
// booking path calls it to re-check a chosen slot inside its transaction,
// so it runs the very same rules as Compute on the slot's local date; q's
// From, To and SpecialistID are ignored. Pass the holds other than the
// customer's own, or their own hold will block them.
func Fits(q Query, start time.Time, specialistID uuid.UUID) bool {
	if specialistID == uuid.Nil {
		return false
	}
	day := DateOf(start, q.Zone)
	q.From, q.To, q.SpecialistID = day, day, specialistID
	for _, s := range Compute(q) {
		if s.Start.Equal(start) {
			return true
		}
	}
	return false
}
