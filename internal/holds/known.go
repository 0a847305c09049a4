package holds

// The holds this process claimed or extended, remembered so that a
// heartbeat or a pin names its hold's keys without reading its payload
// first (see "Declared keys" in the package doc).

import (
	"context"
	"sync"
)

// knownHolds maps hold ids to the hold as this process last saw it. Of a
// payload, only the expiry and the KeepUntil ever change, and the
// expiry is never read from here; the extend script refuses a remembered
// KeepUntil that is no longer the hold's ('stale'), so a hold the server
// kept longer from another process is read again. It starts over when
// full: a forgotten hold is read from Redis as before.
type knownHolds struct {
	mu sync.Mutex
	m  map[string]Hold
}

const knownHoldsSize = 8192

func (k *knownHolds) get(holdID string) (Hold, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	h, ok := k.m[holdID]
	return h, ok
}

func (k *knownHolds) put(h Hold) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= knownHoldsSize {
		k.m = make(map[string]Hold)
	}
	k.m[h.HoldID] = h
}

func (k *knownHolds) forget(holdID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, holdID)
}

// recall is a hold's payload from memory when this process knows the hold
// (fresh false), else as lookup reads it (fresh true).
func (s *Store) recall(ctx context.Context, holdID string) (h Hold, fresh, ok bool, err error) {
	if h, ok := s.known.get(holdID); ok {
		if clinicID, valid := ParseHoldID(holdID); valid && clinicID == h.ClinicID {
			return h, false, true, nil
		}
	}
	h, ok, err = s.lookup(ctx, holdID)
	return h, true, ok, err
}
