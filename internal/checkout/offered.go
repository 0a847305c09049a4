package checkout

// What a hold's claim knew about its slot, so that its confirm need not
// read the day's slots again while nothing has changed.

import (
	"sync"
	"time"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/slots"
)

// claimedSlot is what this process read when it claimed a hold: the
// counters of the day's slots it found the time free in, and the type's
// notice and window to apply again at the confirm.
type claimedSlot struct {
	gens slots.Generations
	typ  availability.AppointmentType
}

// claimedSlots maps the hold ids this process claimed to what their claim
// read. It starts over when full: a forgotten hold's confirm reads the
// day's slots as before.
type claimedSlots struct {
	mu sync.Mutex
	m  map[string]claimedSlot
}

const claimedSlotsSize = 8192

func (c *claimedSlots) put(holdID string, cs claimedSlot) {
	if len(cs.gens.Keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= claimedSlotsSize {
		c.m = make(map[string]claimedSlot)
	}
	c.m[holdID] = cs
}

// take returns and forgets what the claim of holdID read.
func (c *claimedSlots) take(holdID string) (claimedSlot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs, ok := c.m[holdID]
	delete(c.m, holdID)
	return cs, ok
}

// inWindow reports whether start is still within the type's notice and
// booking window at now, as the day's slots are trimmed when read.
func inWindow(t availability.AppointmentType, start, now time.Time) bool {
	if start.Before(now.Add(t.MinNotice)) {
		return false
	}
	return t.MaxAdvance <= 0 || !start.After(now.Add(t.MaxAdvance))
}
