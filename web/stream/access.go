package stream

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// accessCheckTimeout bounds one access query, and how long a stream waits
// for its answer: a saturated pool must not stall the streams.
const accessCheckTimeout = 1500 * time.Millisecond

// accessCache shares access checks between the streams of this instance:
// every stream asks every AccessCheckEvery, but the streams of one key (the
// boards of one clinic, the tabs of one session) cost one query per ttl
// between them, and a key's check runs once however many streams ask at
// the same moment.
//
// It fails open: a query that errs or is too slow keeps the streams; only
// a definite no (revoked, signed out, disabled) ends them.
type accessCache struct {
	ttl, timeout time.Duration
	log          *slog.Logger

	mu        sync.Mutex
	entries   map[string]*accessEntry
	lastSweep time.Time

	failing atomic.Bool // the last check failed: warn once per run of failures
}

type accessEntry struct {
	ok      bool
	checked time.Time     // zero until the first check returns
	running chan struct{} // non-nil while a check runs; closed when it ends
}

// newAccessCache keeps answers for ttl. With ttl a little under the
// streams' AccessCheckEvery, a stream's own next tick always finds its
// key's answer stale: no stream sees an answer more than one tick old.
func newAccessCache(ttl time.Duration, log *slog.Logger) *accessCache {
	return &accessCache{ttl: ttl, timeout: accessCheckTimeout, log: log, entries: map[string]*accessEntry{}}
}

// AccessKey is a cache key made of kind and parts; secrets among the parts
// are hashed, so the map holds no tokens.
func AccessKey(kind, public, secret string) string {
	if secret == "" {
		return kind + ":" + public + ":"
	}
	sum := sha256.Sum256([]byte(secret))
	return kind + ":" + public + ":" + string(sum[:])
}

// Allowed is check's answer for key, at most ttl old. check gets a context
// that ends after the cache's timeout; it returns an error when it could
// not tell, which counts as allowed. A caller that waits longer than the
// timeout (or than ctx) for a running check is allowed too.
func (a *accessCache) Allowed(ctx context.Context, key string, check func(context.Context) (bool, error)) bool {
	now := time.Now()
	a.mu.Lock()
	a.sweep(now)
	e := a.entries[key]
	if e == nil {
		e = &accessEntry{ok: true}
		a.entries[key] = e
	}
	if !e.checked.IsZero() && now.Sub(e.checked) < a.ttl {
		ok := e.ok
		a.mu.Unlock()
		return ok
	}
	if e.running == nil {
		e.running = make(chan struct{})
		go a.run(e, check)
	}
	running := e.running
	a.mu.Unlock()

	wait := time.NewTimer(a.timeout)
	defer wait.Stop()
	select {
	case <-running:
		a.mu.Lock()
		defer a.mu.Unlock()
		return e.ok
	case <-wait.C:
	case <-ctx.Done():
	}
	return true
}

// run makes e's check. It runs on its own: a check stuck past its timeout
// (scs's Store.Find takes no context) holds no stream, and the streams of
// its key wait for this one instead of starting more.
func (a *accessCache) run(e *accessEntry, check func(context.Context) (bool, error)) {
	began := time.Now() // the answer is as old as the question
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	ok, err := check(ctx)
	cancel()
	if err != nil {
		ok = true
		if a.failing.CompareAndSwap(false, true) {
			a.log.Warn("stream access check failed; streams are kept", "err", err)
		} else {
			a.log.Debug("stream access check failed", "err", err)
		}
	} else {
		a.failing.Store(false)
	}
	a.mu.Lock()
	e.ok, e.checked = ok, began
	close(e.running)
	e.running = nil
	a.mu.Unlock()
}

// sweep drops the entries no stream has asked about for a few ttls (their
// streams have ended), at most once per ttl, so the map stays the size of
// the keys in use. a.mu is held.
func (a *accessCache) sweep(now time.Time) {
	if now.Sub(a.lastSweep) < a.ttl {
		return
	}
	a.lastSweep = now
	for k, e := range a.entries {
		if e.running == nil && now.Sub(e.checked) > 3*a.ttl {
			delete(a.entries, k)
		}
	}
}
