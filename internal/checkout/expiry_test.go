package checkout_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// afterScript is a go-redis hook that runs fn once, right after the first
// script call (EVAL/EVALSHA) that names arg and answers "ok", before the
// caller sees the answer: a server instance stalled just after that step.
type afterScript struct {
	arg  string
	once sync.Once
	fn   func()
}

func (a *afterScript) DialHook(next redis.DialHook) redis.DialHook { return next }

func (a *afterScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (a *afterScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); err != nil || (name != "evalsha" && name != "eval") {
			return err
		}
		named := false
		for _, x := range cmd.Args() {
			if s, ok := x.(string); ok && s == a.arg {
				named = true
			}
		}
		if c, ok := cmd.(*redis.Cmd); ok && named {
			if res, err := c.Slice(); err == nil && len(res) > 0 && res[0] == "ok" {
				a.once.Do(a.fn)
			}
		}
		return err
	}
}

// A confirm whose hold's TTL runs out while it runs: between the pin and
// the insert the hold's own expiry passes and a sweep runs. The pin keeps
// the hold alive through both, so the sweep releases nothing and no other
// client can hold the slot meanwhile; the booking then consumes the hold,
// and no release of it is ever announced. (A confirm that finds its hold
// already gone at the pin is refused cleanly, HOLD_EXPIRED, and books
// nothing; that case is tried again on another slot.)
//
// Mutation: confirm pins for a millisecond instead of PinFor (no pin):
// the sweep releases the hold and announces it, another client holds the
// slot, and the confirm books it all the same.
func TestAConfirmRacingItsHoldsExpiry(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	e := newEnv(t, ttl, testkit.ClinicOptions{Specialists: 1})
	ev := subscribe(t, e.rdb, holds.Channel(e.typeID(0)))
	for attempt := range 3 {
		start := e.monday(10+attempt, 0)
		client := newClient()
		h := e.hold(e.typeID(0), start, uuid.Nil, client)

		var swept int
		var sweepErr, otherErr error
		stall := &afterScript{arg: h.HoldID, fn: func() {
			// The pin is done, the insert not yet begun: the hold's own
			// TTL runs out, a sweeper comes by, another patient tries.
			time.Sleep(time.Until(h.ExpiresAt.Add(300 * time.Millisecond)))
			swept, sweepErr = e.holds.SweepClinic(context.Background(), e.clinic.ID)
			_, otherErr = e.tryHold(e.typeID(0), start, newClient())
		}}
		slow := testkit.Redis(t)
		slow.AddHook(stall)
		two := wire(e.pool, slow, ttl)

		_, err := e.withServices(two).confirm(h, e.typeID(0), client)
		if apperr.CodeOf(err) == "HOLD_EXPIRED" {
			// Gone before its pin (a very slow start): refused, nothing booked.
			if n := e.confirmedAt(e.specialist(0), start); n != 0 {
				t.Fatalf("attempt %d: HOLD_EXPIRED, yet %d bookings", attempt, n)
			}
			continue
		}
		if err != nil {
			t.Fatalf("attempt %d: confirm: %v", attempt, err)
		}
		if sweepErr != nil || swept != 0 {
			t.Fatalf("a sweep past the hold's TTL while its confirm ran released %d hold(s) (%v), want none: the pin keeps it", swept, sweepErr)
		}
		wantCode(t, otherErr, "SLOT_HELD", apperr.Locked)
		e.wantBookedAndNeverReleased(ev, h)
		return
	}
	t.Fatal("every hold expired before its confirm could pin it")
}

// withServices is e with other services (another instance's).
func (e *env) withServices(s services) *env {
	c := *e
	c.services = s
	return &c
}

// wantBookedAndNeverReleased asserts that h's slot is booked once, that h
// is spent, and that h was announced as held and confirmed but never as
// released, not even by a later sweep.
func (e *env) wantBookedAndNeverReleased(ev *events, h holds.Hold) {
	e.t.Helper()
	if n := e.confirmedAt(h.SpecialistID, h.Start); n != 1 {
		e.t.Fatalf("%d bookings of the slot, want 1", n)
	}
	if a := e.active(); len(a) != 0 {
		e.t.Fatalf("live holds after the confirm: %+v", a)
	}
	_, err := e.tryHold(h.AppointmentTypeID, h.Start, newClient())
	wantCode(e.t, err, apperr.CodeSlotTaken, apperr.Conflict)
	seen := ev.until(5*time.Second, func(evs []holds.Event) bool {
		return len(evs) > 0 && evs[len(evs)-1].Type == holds.EventConfirm && evs[len(evs)-1].HoldID == h.HoldID
	})
	if _, err := e.holds.SweepClinic(context.Background(), e.clinic.ID); err != nil {
		e.t.Fatal(err)
	}
	seen = append(seen, ev.until(500*time.Millisecond, func([]holds.Event) bool { return false })...)
	confirmed := false
	for _, x := range seen {
		if x.HoldID != h.HoldID {
			continue
		}
		switch x.Type {
		case holds.EventRelease:
			e.t.Fatalf("the hold was announced released (%s) though it booked; events %+v", x.Reason, seen)
		case holds.EventConfirm:
			confirmed = true
		}
	}
	if !confirmed {
		e.t.Fatalf("no confirm event for the hold; events %+v", seen)
	}
}
