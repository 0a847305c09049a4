package liveview

import (
	"container/list"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
)

// maxVariants bounds the rendered answers one view keeps (languages,
// page addresses, JSON); past it an answer is rendered and not kept.
const maxVariants = 16

// View is one grid's live state.
type View struct {
	key      grid.View
	feed     *feed
	meta     any
	deadline time.Time
	elem     *list.Element // in the store's LRU list, under its lock
	size     int           // approximate bytes of the state
	s        *Store

	st atomic.Pointer[state]

	mu        sync.Mutex
	memo      map[string]memoEntry
	memoBytes int
	dropped   bool
	// gone is dropped, readable without the lock: a claim waiting for
	// others of its time asks the view it found again (Room), without
	// the store.
	gone atomic.Bool
}

// state is a view at one moment; events replace it, never change it.
type state struct {
	sn      *grid.Snapshot
	version uint64
}

func newState(sn *grid.Snapshot) *state { return &state{sn: sn} }

// apply is the state after ev; false when ev cannot be applied exactly.
func (st *state) apply(ev holds.Event) (*state, bool) {
	sn, ok := st.sn.Apply(ev)
	if !ok {
		return nil, false
	}
	return &state{sn: sn, version: st.version + 1}, true
}

// apply moves v on by ev; it needs the store's lock.
func (v *View) apply(ev holds.Event) bool {
	next, ok := v.st.Load().apply(ev)
	if ok {
		v.st.Store(next)
	}
	return ok
}

// Snapshot is the view's state now, and its version (which every applied
// event moves on).
func (v *View) Snapshot() (*grid.Snapshot, uint64) {
	st := v.st.Load()
	return st.sn, st.version
}

// Meta is what Install was given with the view.
func (v *View) Meta() any { return v.meta }

// HeldBy reports whether the client whose hash is clientHash holds a slot
// of the clinic now, as far as the view knows: its answers as anyone
// sees them are then not that client's.
func (v *View) HeldBy(clientHash string) bool {
	return v.st.Load().sn.HeldBy(clientHash)
}

// heldMargin is how long before its expiry a hold the view knows of no
// longer counts for Room: the hold may lapse before the answer reaches
// the patient.
const heldMargin = time.Second

// Room is how many claims of start may be under way at once, as far as
// the view knows: the specialists free of bookings there that no other
// client's live hold stands in the way of (and, for a type that needs a
// room, none when every room is held). 0: start is a free position
// of the grid whose every specialist, or every room, is held by a live
// hold of a client other than clientHash's, the longest for retry more; only then may a
// claim of start be refused without asking Redis (a refusal a moment late
// in the other direction, a release not yet heard, is what any patient a
// moment earlier would have had). Any doubt (a time the view does not
// have, a hold of the caller's own in the way, a hold about to lapse, a
// view the store has dropped or that is past its time) answers 1: one
// claim at a time, Redis decides.
func (v *View) Room(start time.Time, clientHash string, now time.Time) (free int, retry time.Duration) {
	if v.gone.Load() || !now.Before(v.deadline) {
		return 1, 0
	}
	st := v.st.Load()
	slot, ok := st.sn.FreeAt(start)
	if !ok {
		return 1, 0
	}
	typ := st.sn.Type()
	lo, hi := slot.Start.Add(-typ.BufferBefore), slot.End.Add(typ.BufferAfter)
	var busy []availability.Busy
	var longest time.Duration
	for i, h := range st.sn.Holds() {
		mine := slices.Contains(slot.SpecialistIDs, h.SpecialistID) &&
			h.Start.Add(-h.BufferBefore).Before(hi) && h.End.Add(h.BufferAfter).After(lo)
		// A hold of one of the time's rooms, whoever its specialist.
		room := h.ResourceID != uuid.Nil && slices.Contains(slot.ResourceIDs, h.ResourceID) &&
			h.Start.Before(slot.End) && h.End.After(slot.Start)
		if !mine && !room {
			continue
		}
		if st.sn.Owner(i) == clientHash || !h.ExpiresAt.After(now.Add(heldMargin)) {
			return 1, 0
		}
		busy = append(busy, availability.Busy{SpecialistID: h.SpecialistID, ResourceID: h.ResourceID, Start: h.Start, End: h.End, BufferBefore: h.BufferBefore, BufferAfter: h.BufferAfter})
		longest = max(longest, h.ExpiresAt.Sub(now))
	}
	if len(busy) == 0 {
		return claims(slot), 0
	}
	left := availability.ApplyHolds(typ, []availability.Slot{slot}, busy)
	if len(left) == 0 {
		return 0, longest
	}
	return claims(left[0]), 0
}

// claims is how many claims of a free slot can succeed at once: one per
// specialist, and no more than its rooms when its type needs one.
func claims(slot availability.Slot) int {
	n := len(slot.SpecialistIDs)
	if len(slot.ResourceIDs) > 0 {
		n = min(n, len(slot.ResourceIDs))
	}
	return max(n, 1)
}

// Answer is a rendered answer and its entity tag.
type Answer struct {
	Body []byte
	ETag string
}

type memoEntry struct {
	Answer
	version uint64
}

// Answer is the answer named variant for the view's current state: kept
// from an earlier call for the same state, or rendered by render now.
func (v *View) Answer(variant string, render func(sn *grid.Snapshot) ([]byte, error)) (Answer, error) {
	st := v.st.Load()
	v.mu.Lock()
	e, ok := v.memo[variant]
	v.mu.Unlock()
	if ok && e.version == st.version {
		return e.Answer, nil
	}
	body, err := render(st.sn)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{Body: body, ETag: ETag(body)}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dropped || v.st.Load().version != st.version {
		return a, nil
	}
	old, had := v.memo[variant]
	if !had && len(v.memo) >= maxVariants {
		return a, nil
	}
	v.memo[variant] = memoEntry{Answer: a, version: st.version}
	delta := len(body) - len(old.Body)
	v.memoBytes += delta
	v.s.m.addBytes(delta)
	return a, nil
}

// approxSize is about what a snapshot takes in memory.
func approxSize(sn *grid.Snapshot) int {
	n := 512 + 64*len(sn.Positions()) + 200*len(sn.Holds())
	for _, sl := range sn.FreeOfBookings() {
		n += 48 + 16*len(sl.SpecialistIDs)
	}
	return n
}
