package testkit

import (
	"sync"
	"time"
)

// Clock is a settable clock for the services that take one (the job
// queue's TimeGenerator, the outbox's and the waitlist's time): the real
// time until a test sets or advances it, then frozen where it was put.
// Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now *time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	if t := c.NowOrNil(); t != nil {
		return *t
	}
	return time.Now()
}

// NowOrNil is the time set, or nil while the clock is the real one
// (River's TimeGenerator).
func (c *Clock) NowOrNil() *time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now == nil {
		return nil
	}
	t := *c.now
	return &t
}

// Set freezes the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = &t
}

// Advance moves the clock on by d from where it is (from the real time if
// it was never set), and freezes it there.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := time.Now()
	if c.now != nil {
		t = *c.now
	}
	t = t.Add(d)
	c.now = &t
}
