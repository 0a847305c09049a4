package checkout

// A few claims of a time at a time from this instance: when many patients
// click one time at once, the first claims go to Redis and the others
// wait for their answers, which the live view then shows, so most of them
// are refused from memory instead of each asking Redis.

import (
	"context"
	"slices"
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

// ClaimLine lets the claims of one time through a few at a time: as many
// at once as the live view shows specialists free there (one when it
// cannot tell), so a time five specialists offer is claimed five times in
// one round trip, while the claims behind them wait to be refused from
// the view.
type ClaimLine struct {
	mu   sync.Mutex
	busy map[claimKey]*lane
	// wait is the longest a claim waits for the ones before it; past it,
	// it goes to Redis all the same (Redis decides either way) unless the
	// view refuses it then.
	wait time.Duration
}

// lane is one time's claims under way, and the claims waiting for room.
type lane struct {
	inside int
	// queue are the claims waiting, first come first. A claim that leaves
	// wakes the first of them only: it asks the view again for them all,
	// since one leave makes room for at most one more claim, and wakes
	// the next when there is room for more, or every one of them when the
	// view now refuses the time (each may have its own answer: a claim of
	// the caller's own hold is not refused from the view).
	queue []chan struct{}
}

// wakeFirst lets the first waiting claim look again.
func (ln *lane) wakeFirst() {
	if len(ln.queue) > 0 {
		ln.queue[0] <- struct{}{}
		ln.queue = ln.queue[1:]
	}
}

// wakeAll lets every waiting claim look again.
func (ln *lane) wakeAll() {
	for _, w := range ln.queue {
		w <- struct{}{}
	}
	ln.queue = nil
}

// NewClaimLine is a line in which a claim waits at most wait for the one
// before it.
func NewClaimLine(wait time.Duration) *ClaimLine {
	return &ClaimLine{busy: map[claimKey]*lane{}, wait: wait}
}

// Enter returns once no other claim of req's time from this instance is
// under way (see enter), with leave to call when the claim is answered and
// shown in the live view; or refused's error, once the claim before it
// has made the view show the time taken.
func (l *ClaimLine) Enter(ctx context.Context, req HoldRequest, refused func() error) (leave func(), err error) {
	return l.enter(ctx, keyOf(req), refused)
}

// EnterRoom is Enter for a time up to room claims of which may be under
// way at once (the specialists the view shows free there). When a claim
// before it leaves, the first claim waiting asks recheck again: its error
// (the view now shows the time taken) is returned at once, and every
// other claim waiting asks in turn; else the room it gives is the new
// bound, and the next claim waiting asks when there is room for more.
func (l *ClaimLine) EnterRoom(ctx context.Context, req HoldRequest, room int, recheck func() (int, error)) (leave func(), err error) {
	return l.enterRoom(ctx, keyOf(req), room, recheck)
}

func keyOf(req HoldRequest) claimKey {
	return claimKey{typeID: req.AppointmentTypeID, specialist: req.SpecialistID, start: req.Start.UnixMilli()}
}

// enter returns once no other claim of k from this instance is under way
// (or after l.wait, or when ctx ends), with leave to call when the claim
// is answered and shown in the live view. Each time the claim before it
// ends, refused is asked first: its error (the view now shows the time
// taken) is returned at once, without taking the line.
func (l *ClaimLine) enter(ctx context.Context, k claimKey, refused func() error) (leave func(), err error) {
	return l.enterRoom(ctx, k, 1, func() (int, error) { return 1, refused() })
}

// enterRoom returns once fewer than room claims of k from this instance
// are under way (room below 1 counts as 1), or after l.wait (with
// recheck's error, if it has one then), or when ctx ends.
func (l *ClaimLine) enterRoom(ctx context.Context, k claimKey, room int, recheck func() (int, error)) (leave func(), err error) {
	var timeout <-chan time.Time
	var wake chan struct{} // buffered: a wake is never lost, nor blocks
	woken := false
	for {
		l.mu.Lock()
		ln := l.busy[k]
		if ln == nil {
			ln = &lane{}
			l.busy[k] = ln
		}
		if ln.inside < max(room, 1) {
			ln.inside++
			if ln.inside < room {
				ln.wakeFirst() // room for more: the next looks too
			}
			l.mu.Unlock()
			return func() { l.leave(k, ln) }, nil
		}
		if wake == nil {
			wake = make(chan struct{}, 1)
		}
		if woken {
			ln.queue = append([]chan struct{}{wake}, ln.queue...) // still first
		} else {
			ln.queue = append(ln.queue, wake)
		}
		l.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(l.wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-timeout:
			// Past its bound a claim asks the view once more before it
			// goes to Redis: the claims ahead may have been answered
			// without this one being woken yet.
			l.giveUp(k, ln, wake)
			if _, err := recheck(); err != nil {
				return func() {}, err
			}
			return func() {}, nil
		case <-ctx.Done():
			l.giveUp(k, ln, wake)
			return func() {}, nil
		}
		woken = true
		if room, err = recheck(); err != nil {
			l.mu.Lock()
			if cur := l.busy[k]; cur != nil {
				cur.wakeAll()
				l.forget(k, cur)
			}
			l.mu.Unlock()
			return func() {}, err
		}
	}
}

// giveUp takes a claim that stops waiting out of ln's queue; one woken
// meanwhile passes its wake on, so no room goes unlooked at.
func (l *ClaimLine) giveUp(k claimKey, ln *lane, wake chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(ln.queue, wake); i >= 0 {
		ln.queue = slices.Delete(ln.queue, i, i+1)
		l.forget(k, ln)
		return
	}
	select {
	case <-wake:
		if cur := l.busy[k]; cur != nil {
			cur.wakeFirst()
		}
	default:
	}
}

// leave lets the first claim waiting on k look again.
func (l *ClaimLine) leave(k claimKey, ln *lane) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln.inside--
	ln.wakeFirst()
	l.forget(k, ln)
}

// forget drops k's lane once nothing is under way or waiting there.
func (l *ClaimLine) forget(k claimKey, ln *lane) {
	if ln.inside == 0 && len(ln.queue) == 0 && l.busy[k] == ln {
		delete(l.busy, k)
	}
}
