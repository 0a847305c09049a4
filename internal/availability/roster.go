package availability

// The specialists of one computation: who works when, and the time their
// bookings and holds keep them busy.

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/google/uuid"
)

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
