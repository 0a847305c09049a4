package checkout_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// sweepers runs n stores' SweepClinic for the clinic every 100 ms until the
// test ends, as n server instances would. (The global Sweep would also
// sweep other test binaries' clinics in the shared Redis and steal the
// expiries their tests count.)
func (e *env) sweepers(n int, ttl time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		s := holds.NewStore(testkit.Redis(e.t), ttl, quietLogger)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if _, err := s.SweepClinic(ctx, e.clinic.ID); err != nil && ctx.Err() == nil {
						e.t.Errorf("sweep: %v", err)
					}
				}
			}
		}()
	}
	e.t.Cleanup(func() { cancel(); wg.Wait() })
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	// Heartbeats every 500 ms keep holds of a 3 s TTL: a heartbeat may come
	// 2.5 s late on a loaded machine before the hold lapses under it.
	const ttl = 3 * time.Second

	t.Run("KeepsAHoldAlivePastItsTTL", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, ttl, testkit.ClinicOptions{Specialists: 1})
		ev := subscribe(t, e.rdb, holds.Channel(e.typeID(0)))
		e.sweepers(2, ttl)
		start := e.monday(10, 0)
		client := newClient()
		h := e.hold(e.typeID(0), start, uuid.Nil, client)

		began := time.Now()
		last := h.ExpiresAt
		for time.Since(began) < ttl+time.Second {
			time.Sleep(500 * time.Millisecond)
			hb, err := e.co.Heartbeat(t.Context(), h.HoldID, client)
			if err != nil {
				t.Fatalf("heartbeat after %s: %v", time.Since(began).Round(time.Millisecond), err)
			}
			if hb.HoldID != h.HoldID || !hb.ExpiresAt.After(last) {
				t.Fatalf("heartbeat gave %+v, want the hold with a later expiry than %s", hb, last)
			}
			last = hb.ExpiresAt
			_, err = e.tryHold(e.typeID(0), start, newClient())
			wantCode(t, err, "SLOT_HELD", apperr.Locked)
		}
		if held, ok, err := e.holds.HeldBy(t.Context(), e.clinic.ID, e.typeID(0), e.specialist(0), start); err != nil || !ok || held.HoldID != h.HoldID {
			t.Fatalf("after %s of heartbeats the slot is held by %+v (%v, %v), want %s", time.Since(began), held, ok, err, h.HoldID)
		}
		if n := releases(ev.until(300*time.Millisecond, func([]holds.Event) bool { return false }), h.HoldID, holds.ReasonExpired); n != 0 {
			t.Fatalf("%d expiry events for a heartbeated hold", n)
		}
		e.mustConfirm(h)
	})

	t.Run("WithoutHeartbeatTheHoldExpiresAndIsAnnouncedOnce", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, ttl, testkit.ClinicOptions{Specialists: 1})
		ev := subscribe(t, e.rdb, holds.Channel(e.typeID(0)))
		e.sweepers(2, ttl)
		start := e.monday(10, 0)
		client := newClient()
		h := e.hold(e.typeID(0), start, uuid.Nil, client)

		seen := ev.until(5*ttl, func(evs []holds.Event) bool { return releases(evs, h.HoldID, holds.ReasonExpired) > 0 })
		if releases(seen, h.HoldID, holds.ReasonExpired) != 1 {
			t.Fatalf("no expiry event within %s; events %+v", 5*ttl, seen)
		}
		// Both sweepers get several more turns: no second announcement.
		seen = append(seen, ev.until(800*time.Millisecond, func([]holds.Event) bool { return false })...)
		if n := releases(seen, h.HoldID, holds.ReasonExpired); n != 1 {
			t.Fatalf("%d expiry events with two sweepers, want exactly 1", n)
		}
		for _, x := range seen {
			if x.Type == holds.EventRelease && x.HoldID == h.HoldID && (x.Start != h.Start || x.SpecialistID != h.SpecialistID) {
				t.Fatalf("expiry event %+v does not describe the hold %+v", x, h)
			}
		}

		_, err := e.co.Heartbeat(t.Context(), h.HoldID, client)
		wantCode(t, err, "HOLD_GONE", apperr.Gone)
		_, err = e.confirm(h, e.typeID(0), client)
		wantCode(t, err, "HOLD_EXPIRED", apperr.Gone)
		if a := e.active(); len(a) != 0 {
			t.Fatalf("live holds after expiry: %+v", a)
		}
		e.hold(e.typeID(0), start, uuid.Nil, newClient()) // the slot is free for someone else
	})
}

// TestHeartbeatRefusals: a heartbeat that is not the hold owner's, or
// names no hold, changes nothing.
func TestHeartbeatRefusals(t *testing.T) {
	t.Parallel()

	t.Run("AnotherClientsHeartbeatIsGoneAndChangesNothing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		h := e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, newClient())
		_, err := e.co.Heartbeat(t.Context(), h.HoldID, newClient())
		wantCode(t, err, "HOLD_GONE", apperr.Gone)
		if a := e.active(); len(a) != 1 || !a[0].ExpiresAt.Equal(h.ExpiresAt) {
			t.Fatalf("holds after a stranger's heartbeat: %+v", a)
		}
	})

	t.Run("MalformedIdsAreInvalid", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		for _, tc := range []struct{ holdID, client, field string }{
			{"", newClient(), "holdId"},
			{"not-a-hold", newClient(), "holdId"},
			{"h" + fmt.Sprintf("%052d", 0), newClient(), "holdId"}, // nil clinic
			{"h" + uuidHex(e.clinic.ID) + "00112233445566778899", "", "clientId"},
			{"h" + uuidHex(e.clinic.ID) + "00112233445566778899", "has space", "clientId"},
		} {
			_, err := e.co.Heartbeat(t.Context(), tc.holdID, tc.client)
			if ae := wantCode(t, err, "INVALID_ARGUMENT", apperr.Invalid); ae.Field() != tc.field {
				t.Fatalf("heartbeat(%q, %q) names %q, want %q", tc.holdID, tc.client, ae.Field(), tc.field)
			}
		}
	})
}

func uuidHex(id uuid.UUID) string { return fmt.Sprintf("%x", id[:]) }
