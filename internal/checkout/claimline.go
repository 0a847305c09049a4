package checkout

// One claim of a time at a time from this instance: when many patients
// click one time at once, the first claim goes to Redis and the others
// wait for its answer, which the live view then shows, so most of them
// are refused from memory instead of each asking Redis.

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
)

// claimKey is what one claim asks for: a type's time, with one specialist
// or any.
type claimKey struct {
	typeID, specialist uuid.UUID
	start              int64 // unix milliseconds
}

// ClaimLine lets the claims of one time through one after another.
type ClaimLine struct {
	mu   sync.Mutex
	busy map[claimKey]chan struct{}
	// wait is the longest a claim waits for the one before it; past it,
	// it goes to Redis all the same (Redis decides either way).
	wait time.Duration
}

// NewClaimLine is a line in which a claim waits at most wait for the one
// before it.
func NewClaimLine(wait time.Duration) *ClaimLine {
	return &ClaimLine{busy: map[claimKey]chan struct{}{}, wait: wait}
}

// Enter returns once no other claim of req's time from this instance is
// under way (see enter), with leave to call when the claim is answered and
// shown in the live view; or refused's error, once the claim before it
// has made the view show the time taken.
func (l *ClaimLine) Enter(ctx context.Context, req HoldRequest, refused func() error) (leave func(), err error) {
	return l.enter(ctx, claimKey{typeID: req.AppointmentTypeID, specialist: req.SpecialistID, start: req.Start.UnixMilli()}, refused)
}

// enter returns once no other claim of k from this instance is under way
// (or after l.wait, or when ctx ends), with leave to call when the claim
// is answered and shown in the live view. Each time the claim before it
// ends, refused is asked first: its error (the view now shows the time
// taken) is returned at once, without taking the line.
func (l *ClaimLine) enter(ctx context.Context, k claimKey, refused func() error) (leave func(), err error) {
	var timeout <-chan time.Time
	for {
		l.mu.Lock()
		ch, ok := l.busy[k]
		if !ok {
			ch = make(chan struct{})
			l.busy[k] = ch
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.busy, k)
				l.mu.Unlock()
				close(ch)
			}, nil
		}
		l.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(l.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ch:
		case <-timeout:
			return func() {}, nil
		case <-ctx.Done():
			return func() {}, nil
		}
		if err := refused(); err != nil {
			return func() {}, err
		}
	}
}
