// Package availability computes the bookable slots of a clinic.
//
// It is pure: callers load specialists, bookings and holds, and this
// package only does arithmetic on them, so the rules (working hours,
// buffers, notice, daylight saving) can be tested exhaustively without a
// database.
package availability

import (
	"bytes"
	"cmp"
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
	SpecialistID              uuid.UUID
	Start, End                time.Time
	BufferBefore, BufferAfter time.Duration
}

// AppointmentType holds the slot rules of the type being booked. Its
// buffers apply to the new slot only; existing bookings bring their own.
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
}

// Slot is one bookable start. In the pooled view several specialists can
// share it, and the customer need not care which one they get.
type Slot struct {
	Start, End time.Time // UTC
	// SpecialistIDs are the specialists free for the slot, ordered by
	// priority desc then ID string asc, so the first is the one to assign.
	SpecialistIDs []uuid.UUID
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
		clock dayClock
		hours []Range
	)
	for d := from; !to.Before(d); d = d.AddDays(1) {
		clock.reset(loc, d)
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
	return group(cands, staff, typ.Duration)
}

// slotRules are a query's limits in the engine's unit, Unix nanoseconds,
// which keeps the innermost loop free of time.Time arithmetic.
type slotRules struct {
	step, length, before, after int64
	earliest, latest            int64
}

// appendRange appends a candidate for every free start of one working
// range of the specialist with the given rank and busy intervals.
func (ru slotRules) appendRange(cands []candidate, c *dayClock, r Range, busy []interval, rank int) []candidate {
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

// ApplyHolds removes held specialists from slots and drops the slots left
// with none. It exists so that a cached hold-free computation can be
// brought up to date as holds come and go: for every q,
// Compute(q) equals ApplyHolds(q.Type, Compute(q without holds), q.Holds).
// The input slots are not modified.
func ApplyHolds(t AppointmentType, slots []Slot, holds []Busy) []Slot {
	held := make(map[uuid.UUID][]interval)
	for _, h := range holds {
		if iv, ok := buffered(h); ok {
			held[h.SpecialistID] = append(held[h.SpecialistID], iv)
		}
	}
	for id, ivs := range held {
		held[id] = merge(ivs)
	}

	total := 0
	for _, s := range slots {
		total += len(s.SpecialistIDs)
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
		if len(ids) > first {
			out = append(out, Slot{Start: s.Start, End: s.End, SpecialistIDs: ids[first:len(ids):len(ids)]})
		}
	}
	return out
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

// worker is an active specialist prepared for one computation.
type worker struct {
	id        uuid.UUID
	weekly    []WeeklyRange
	overrides []Override // only those within the computed dates
	busy      []interval // bookings and holds, buffered, sorted and merged
}

// hours appends the working ranges of date d to dst.
func (w *worker) hours(dst []Range, d Date) []Range {
	for _, o := range w.overrides {
		if o.Date == d {
			if o.Closed {
				return dst
			}
			return appendValid(dst, o.Ranges...)
		}
	}
	wd := d.Weekday()
	for _, wr := range w.weekly {
		if wr.Weekday == wd {
			dst = appendValid(dst, wr.Range)
		}
	}
	return dst
}

func appendValid(dst []Range, rs ...Range) []Range {
	for _, r := range rs {
		if 0 <= r.Start && r.Start < r.End && r.End <= 24*60 {
			dst = append(dst, r)
		}
	}
	return dst
}

// roster returns the active specialists of the view in slot order:
// priority desc, then ID string asc. A specialist listed twice counts once.
func roster(specialists []Specialist, only uuid.UUID, from, to Date) []worker {
	ranked := make([]*Specialist, 0, len(specialists))
	for i := range specialists {
		s := &specialists[i]
		if s.Active && (only == uuid.Nil || s.ID == only) {
			ranked = append(ranked, s)
		}
	}
	slices.SortStableFunc(ranked, func(a, b *Specialist) int {
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		// The canonical string is lowercase hex of the bytes in order,
		// so comparing bytes orders IDs exactly as their strings would,
		// without formatting them.
		return bytes.Compare(a.ID[:], b.ID[:])
	})

	staff := make([]worker, 0, len(ranked))
	for i, s := range ranked {
		if i > 0 && s.ID == ranked[i-1].ID {
			continue
		}
		w := worker{id: s.ID, weekly: s.Weekly}
		for _, o := range s.Overrides {
			if !o.Date.Before(from) && !to.Before(o.Date) {
				w.overrides = append(w.overrides, o)
			}
		}
		staff = append(staff, w)
	}
	return staff
}

// indexBusy gives each worker its buffered busy intervals, sorted and
// merged so that a slot is checked with one binary search. Bookings and
// holds are counted first so that all workers share one allocation.
func indexBusy(staff []worker, lists ...[]Busy) {
	rank := make(map[uuid.UUID]int, len(staff))
	for i, w := range staff {
		rank[w.id] = i
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	owner := make([]int, 0, n)
	counts := make([]int, len(staff))
	for _, l := range lists {
		for _, b := range l {
			i, ok := rank[b.SpecialistID]
			if !ok {
				i = -1
			} else {
				counts[i]++
			}
			owner = append(owner, i)
		}
	}

	backing := make([]interval, 0, n)
	for i := range staff {
		staff[i].busy = backing[len(backing) : len(backing) : len(backing)+counts[i]]
		backing = backing[:len(backing)+counts[i]]
	}
	k := 0
	for _, l := range lists {
		for _, b := range l {
			i := owner[k]
			k++
			if i < 0 {
				continue
			}
			if iv, ok := buffered(b); ok {
				staff[i].busy = append(staff[i].busy, iv)
			}
		}
	}
	for i := range staff {
		staff[i].busy = merge(staff[i].busy)
	}
}

// interval is a half-open stretch of real time in Unix nanoseconds.
type interval struct {
	start, end int64
}

// buffered returns the time b blocks, buffers included; an empty one
// blocks nothing.
func buffered(b Busy) (interval, bool) {
	iv := interval{
		start: addSat(unixNano(b.Start), -b.BufferBefore),
		end:   addSat(unixNano(b.End), b.BufferAfter),
	}
	return iv, iv.start < iv.end
}

// merge sorts ivs and joins the overlapping ones in place. Disjoint sorted
// intervals also have sorted ends, which is what isFree's search needs.
func merge(ivs []interval) []interval {
	slices.SortFunc(ivs, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	out := ivs[:0]
	for _, iv := range ivs {
		if n := len(out); n > 0 && iv.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, iv.end)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// isFree reports whether [start, end) misses every interval of busy,
// which must be sorted and disjoint. Touching is not overlapping.
func isFree(busy []interval, start, end int64) bool {
	// Binary search for the first interval ending after start.
	lo, hi := 0, len(busy)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if busy[mid].end <= start {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo == len(busy) || busy[lo].start >= end
}

// candidate is one specialist free at one instant.
type candidate struct {
	start int64 // Unix nanoseconds
	rank  int   // index into the roster, so ordering by it orders specialists
}

func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return cmp.Compare(a.rank, b.rank)
}

// group merges sorted candidates into slots, one per instant. All the
// slots' ID lists share one backing array, capped so appending to one
// cannot overwrite the next.
func group(cands []candidate, staff []worker, dur time.Duration) []Slot {
	n := 0
	for i := range cands {
		if i == 0 || cands[i].start != cands[i-1].start {
			n++
		}
	}
	slots := make([]Slot, 0, n)
	ids := make([]uuid.UUID, 0, len(cands))
	for i := 0; i < len(cands); {
		first := len(ids)
		j := i
		for ; j < len(cands) && cands[j].start == cands[i].start; j++ {
			// Overlapping ranges of one specialist produce the same
			// candidate twice.
			if j > i && cands[j].rank == cands[j-1].rank {
				continue
			}
			ids = append(ids, staff[cands[j].rank].id)
		}
		start := time.Unix(0, cands[i].start).UTC()
		slots = append(slots, Slot{Start: start, End: start.Add(dur), SpecialistIDs: ids[first:len(ids):len(ids)]})
		i = j
	}
	return slots
}

// estimate guesses the number of candidates so that one allocation
// usually suffices: every weekly range stepped through, nothing booked.
// It is capped so that an absurd date range grows the slice as it goes
// instead of reserving gigabytes up front.
func estimate(staff []worker, step int64, days int) int {
	var weekly int64
	for _, w := range staff {
		for _, wr := range w.weekly {
			if n := int64(wr.End-wr.Start) * int64(time.Minute) / step; n > 0 {
				weekly += n + 1
			}
		}
	}
	return int(min(weekly*int64(days)/7, 1<<16)) + 16
}

// Instants outside int64 nanoseconds (years 1678 to 2262) are clamped:
// the zero Time as Now must mean "long ago", not wrap around.
var (
	minInstant = time.Unix(0, math.MinInt64)
	maxInstant = time.Unix(0, math.MaxInt64)
)

// Dates are limited to well inside that span, since a day's clock looks a
// day beyond it on both sides.
var (
	minDate = Date{Year: 1700, Month: time.January, Day: 1}
	maxDate = Date{Year: 2200, Month: time.December, Day: 31}
)

func unixNano(t time.Time) int64 {
	switch {
	case t.Before(minInstant):
		return math.MinInt64
	case t.After(maxInstant):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// addSat adds without wrapping around, so clamped instants stay clamped.
func addSat(t int64, d time.Duration) int64 {
	s := t + int64(d)
	switch {
	case d > 0 && s < t:
		return math.MaxInt64
	case d < 0 && s > t:
		return math.MinInt64
	}
	return s
}

// clipDates narrows [from, to] to the dates that can hold a slot between
// earliest and latest, so a far-reaching To with a short booking window
// costs nothing. A day of margin covers clocks turned back across midnight.
func clipDates(from, to Date, earliest, latest int64, loc *time.Location) (Date, Date) {
	if d := DateOf(time.Unix(0, earliest), loc).AddDays(-1); from.Before(d) {
		from = d
	}
	if d := DateOf(time.Unix(0, latest), loc).AddDays(1); d.Before(to) {
		to = d
	}
	if from.Before(minDate) {
		from = minDate
	}
	if maxDate.Before(to) {
		to = maxDate
	}
	return from, to
}
