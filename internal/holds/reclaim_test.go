package holds

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// reclaimFixture is a fixture whose holds live 5 s without a heartbeat
// and at most 10 s, with a one-minute re-claim cool-off, on a clock the
// test moves. Redis still expires keys in real time: tests make a hold
// lapse with f.lapse, never by waiting out its TTL.
func reclaimFixture(t *testing.T) (*fixture, *time.Time) {
	t.Helper()
	f := newFixture(t, 5*time.Second)
	f.s.SetMaxLife(10 * time.Second)
	f.s.SetReclaimCoolOff(time.Minute)
	now := time.Now()
	f.s.now = func() time.Time { return now }
	return f, &now
}

// addrReq is f.req from an address, with an address quota.
func (f *fixture) addrReq(client, addr string) ClaimRequest {
	r := f.req(client, f.slot(0))
	r.Address, r.AddressQuota = addr, 2
	return r
}

// claimAlone claims, then hides the clinic from other sweepers: a foreign
// sweep on the real clock would start a cool-off of its own length.
func (f *fixture) claimAlone(r ClaimRequest) (Hold, error) {
	f.t.Helper()
	h, err := f.s.Claim(f.t.Context(), r)
	f.hideFromGlobalSweepers()
	return h, err
}

// beatToTheEnd heartbeats h just before its KeepUntil, so its last
// expiry is the end of its longest life, as a page beating every 10 s
// leaves it.
func (f *fixture) beatToTheEnd(h Hold, now *time.Time) {
	f.t.Helper()
	*now = h.KeepUntil.Add(-3 * time.Second)
	// Redis keeps the key's real TTL: a heartbeat extends only a hold with
	// less than the 3 s it would give left, so the claim's key is aged to
	// 2 s (seconds before it could lapse on a loaded machine).
	f.age(h, 2*time.Second)
	beaten, err := f.s.Heartbeat(f.t.Context(), h.HoldID, h.ClientID)
	if err != nil {
		f.t.Fatalf("heartbeat before the end: %v", err)
	}
	if !beaten.ExpiresAt.Equal(h.KeepUntil) {
		f.t.Fatalf("beaten to %s, want its KeepUntil %s", beaten.ExpiresAt, h.KeepUntil)
	}
}

func (f *fixture) reclaimKeyExists(r ClaimRequest, network string) bool {
	f.t.Helper()
	k := reclaimKey(holdKey(r.ClinicID, r.AppointmentTypeID, r.SpecialistID, r.Start), network)
	n, err := f.rdb.Exists(f.t.Context(), k).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return n == 1
}

func wantReclaimError(t *testing.T, err error, retryAfter time.Duration) {
	t.Helper()
	var re *ReclaimError
	if !errors.As(err, &re) || !errors.Is(err, ErrReclaimTooSoon) {
		t.Fatalf("err = %v, want a ReclaimError", err)
	}
	if re.RetryAfter != retryAfter {
		t.Fatalf("retry after %s, want %s", re.RetryAfter, retryAfter)
	}
}

func TestReclaimCoolOff(t *testing.T) {
	t.Parallel()

	t.Run("AHoldSweptAtItsKeepUntilBarsItsNetworkUntilTheCoolOffEnds", testSweptAtKeepUntilBarsTheNetwork)

	t.Run("AClaimBeforeTheSweepStartsTheCoolOffItself", testAClaimBeforeTheSweepStartsTheCoolOff)

	t.Run("AHoldThatLapsedBeforeItsMaxLifeCanBeHeldAgainAtOnce", func(t *testing.T) {
		t.Parallel()
		f, now := reclaimFixture(t)
		r := f.addrReq("client-a", "203.0.113.7")
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		// No heartbeats: the page was closed, or the laptop slept. Its
		// "hold it again" must work, before the sweep and after it.
		f.lapse(h)
		*now = h.ExpiresAt.Add(time.Millisecond)
		again, err := f.claimAlone(r)
		if err != nil {
			t.Fatalf("holding again before the sweep: %v", err)
		}
		// The laptop sleeps again; this time the sweep comes first.
		f.lapse(again)
		*now = again.ExpiresAt.Add(time.Millisecond)
		if n, err := f.s.SweepClinic(t.Context(), f.clinic); err != nil || n != 2 {
			t.Fatalf("sweep: %d, %v; want both holds", n, err)
		}
		if _, err := f.claimAlone(r); err != nil {
			t.Fatalf("holding again after it: %v", err)
		}
		if f.reclaimKeyExists(r, "203.0.113.7") {
			t.Fatal("an early lapse left a cool-off")
		}
	})

	t.Run("ABookedHoldLeavesNoCoolOff", testABookedHoldLeavesNoCoolOff)

	t.Run("AHoldClaimedWithoutAnAddressGetsNone", func(t *testing.T) {
		t.Parallel()
		f, now := reclaimFixture(t)
		r := f.req("client-a", f.slot(0))
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		f.lapse(h)
		*now = h.ExpiresAt.Add(time.Millisecond)
		if n, err := f.s.SweepClinic(t.Context(), f.clinic); err != nil || n != 1 {
			t.Fatalf("sweep: %d, %v; want the hold", n, err)
		}
		if _, err := f.claimAlone(r); err != nil {
			t.Fatalf("re-claim: %v", err)
		}
	})
}

func testAClaimBeforeTheSweepStartsTheCoolOff(t *testing.T) {
	t.Parallel()
	f, now := reclaimFixture(t)
	r := f.addrReq("client-a", "203.0.113.7")
	h, err := f.claimAlone(r)
	if err != nil {
		t.Fatal(err)
	}
	f.beatToTheEnd(h, now)
	f.lapse(h)
	*now = h.KeepUntil.Add(time.Millisecond)
	_, err = f.claimAlone(r)
	wantReclaimError(t, err, time.Minute-time.Millisecond)
	if !f.reclaimKeyExists(r, "203.0.113.7") {
		t.Fatal("no cool-off key after the refused claim")
	}
	// Mapped or not, it is the same IPv4 address.
	_, err = f.claimAlone(f.addrReq("client-c", "::ffff:203.0.113.7"))
	wantReclaimError(t, err, time.Minute-time.Millisecond)

	// The lapsed hold is still announced by the sweep.
	if n, err := f.s.SweepClinic(t.Context(), f.clinic); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v; want the hold", n, err)
	}
	if _, err := f.claimAlone(f.addrReq("client-b", "198.51.100.9")); err != nil {
		t.Fatalf("another client from another network: %v", err)
	}
}

func testABookedHoldLeavesNoCoolOff(t *testing.T) {
	t.Parallel()
	f, now := reclaimFixture(t)
	r := f.addrReq("client-a", "203.0.113.7")
	h, err := f.claimAlone(r)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := f.s.Pin(t.Context(), h.HoldID, "client-a", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// The booking commits just as the pin runs out.
	f.lapse(pinned)
	*now = pinned.ExpiresAt.Add(time.Millisecond)
	if err := f.s.ConsumeBooked(t.Context(), pinned); err != nil {
		t.Fatal(err)
	}
	if n, err := f.s.SweepClinic(t.Context(), f.clinic); err != nil || n != 0 {
		t.Fatalf("sweep: %d, %v; want nothing", n, err)
	}
	if _, err := f.claimAlone(r); err != nil {
		t.Fatalf("claim after the booking: %v", err)
	}
	if f.reclaimKeyExists(r, "203.0.113.7") {
		t.Fatal("a booking left a cool-off")
	}
}

func testSweptAtKeepUntilBarsTheNetwork(t *testing.T) {
	t.Parallel()
	f, now := reclaimFixture(t)
	sub := f.subscribe(ClinicChannel(f.clinic))
	r := f.addrReq("client-a", "2001:db8:1:2::1")
	h, err := f.claimAlone(r)
	if err != nil {
		t.Fatal(err)
	}
	if h.network != "2001:db8:1:2::/64" {
		t.Fatalf("hold's network %q", h.network)
	}
	if ev := sub.next(2 * time.Second); ev.Event.Type != EventHold || ev.Event.network != "" {
		t.Fatalf("hold event %+v: want one without the network", ev.Event)
	}

	f.beatToTheEnd(h, now)
	*now = h.KeepUntil
	if _, err := f.s.Heartbeat(t.Context(), h.HoldID, "client-a"); !errors.Is(err, ErrGone) {
		t.Fatalf("heartbeat at KeepUntil: err = %v, want ErrGone", err)
	}
	f.lapse(h)
	if n, err := f.s.SweepClinic(t.Context(), f.clinic); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v; want the hold", n, err)
	}
	until := h.KeepUntil.Add(time.Minute) // its lapse plus the cool-off

	*now = now.Add(time.Millisecond)
	_, err = f.claimAlone(r)
	wantReclaimError(t, err, until.Sub(*now))
	sameNet := f.addrReq("client-a", "2001:db8:1:2:ffff::9")
	_, err = f.claimAlone(sameNet)
	wantReclaimError(t, err, until.Sub(*now))

	other, err := f.claimAlone(f.addrReq("client-b", "198.51.100.9"))
	if err != nil {
		t.Fatalf("another client from another network: %v", err)
	}
	if _, err := f.s.Release(t.Context(), other.HoldID, "client-b"); err != nil {
		t.Fatal(err)
	}

	*now = until.Add(-time.Millisecond)
	_, err = f.claimAlone(r)
	wantReclaimError(t, err, time.Millisecond)
	*now = until
	if _, err := f.claimAlone(r); err != nil {
		t.Fatalf("after the cool-off: %v", err)
	}
}

// A hold written before KeepUntil existed has none; it must not be kept
// by heartbeats for ever.
func TestAHoldWithoutKeepUntilLapsesWithinATTL(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 300*time.Millisecond)
	h := f.claim("client-a", f.slot(0))
	f.hideFromGlobalSweepers()

	// Rewrite the payload as the older code wrote it.
	ctx := t.Context()
	var p map[string]any
	if err := json.Unmarshal([]byte(f.rdb.Get(ctx, h.key()).Val()), &p); err != nil {
		t.Fatal(err)
	}
	delete(p, "holdKeepUntil")
	old, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.rdb.Set(ctx, h.key(), old, redis.KeepTTL).Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.rdb.HSet(ctx, metaKey(f.clinic), h.HoldID, old).Err(); err != nil {
		t.Fatal(err)
	}

	if _, err := f.s.Heartbeat(ctx, h.HoldID, "client-a"); !errors.Is(err, ErrGone) {
		t.Fatalf("heartbeat of an old hold: err = %v, want ErrGone", err)
	}
	f.waitLapsed(f.slot(0))
	if n, err := f.s.SweepClinic(ctx, f.clinic); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v; want the old hold", n, err)
	}
}
