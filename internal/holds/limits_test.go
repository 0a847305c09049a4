package holds

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

func TestAddressQuota(t *testing.T) {
	t.Parallel()

	t.Run("FiftyClientsFromOneAddressGetExactlyTheQuota", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 30*time.Second)
		const n, quota = 50, 4
		errs := make([]error, n)
		testkit.Together(n, func(i int) {
			r := f.req(fmt.Sprintf("client-%d", i), f.slot(i))
			r.Address, r.AddressQuota = "203.0.113.7", quota
			_, errs[i] = f.s.Claim(t.Context(), r)
		})
		won, refused := 0, 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, ErrAddressQuota):
				refused++
			default:
				t.Errorf("client-%d: %v", i, err)
			}
		}
		if won != quota || refused != n-quota {
			t.Fatalf("%d holds and %d ErrAddressQuota, want %d and %d", won, refused, quota, n-quota)
		}
	})

	t.Run("EachAddressHasItsOwnAndAnIPv6SlashSixtyFourIsOne", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 30*time.Second)
		claim := func(i int, addr string) error {
			r := f.req(fmt.Sprintf("client-%d", i), f.slot(i))
			r.Address, r.AddressQuota = addr, 1
			_, err := f.s.Claim(t.Context(), r)
			return err
		}
		if err := claim(0, "198.51.100.1"); err != nil {
			t.Fatal(err)
		}
		if err := claim(1, "198.51.100.2"); err != nil {
			t.Fatalf("another IPv4 address: %v", err)
		}
		if err := claim(2, "2001:db8:1:2::1"); err != nil {
			t.Fatal(err)
		}
		if err := claim(3, "2001:db8:1:2:ffff::9"); !errors.Is(err, ErrAddressQuota) {
			t.Fatalf("same /64: err = %v, want ErrAddressQuota", err)
		}
		if err := claim(4, "2001:db8:1:3::1"); err != nil {
			t.Fatalf("another /64: %v", err)
		}
		if err := claim(5, "::ffff:198.51.100.1"); !errors.Is(err, ErrAddressQuota) {
			t.Fatalf("a mapped IPv4 address is the IPv4 address: err = %v, want ErrAddressQuota", err)
		}
		if err := claim(6, ""); err != nil {
			t.Fatalf("no address, no address limit: %v", err)
		}
		if err := claim(7, "not-an-address"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v, want ErrInvalid", err)
		}
	})

	t.Run("AReleasedHoldNoLongerCounts", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 30*time.Second)
		r := f.req("client-a", f.slot(0))
		r.Address, r.AddressQuota = "192.0.2.9", 1
		h, err := f.s.Claim(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		r2 := f.req("client-b", f.slot(1))
		r2.Address, r2.AddressQuota = r.Address, 1
		if _, err := f.s.Claim(t.Context(), r2); !errors.Is(err, ErrAddressQuota) {
			t.Fatalf("err = %v, want ErrAddressQuota", err)
		}
		if _, err := f.s.Release(t.Context(), h.HoldID, "client-a"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Claim(t.Context(), r2); err != nil {
			t.Fatalf("after the release: %v", err)
		}
	})
}

func TestHeartbeatsKeepAHoldNoLongerThanItsMaxLife(t *testing.T) {
	t.Parallel()

	t.Run("ExtendsToTheLimitThenAnswersGone", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 30*time.Second)
		f.s.SetMaxLife(2 * time.Minute)
		t0 := time.Now()
		f.s.now = func() time.Time { return t0 }
		h := f.claim("client-a", f.slot(0))
		if want := msTime(t0.Add(2 * time.Minute).UnixMilli()); !h.KeepUntil.Equal(want) {
			t.Fatalf("KeepUntil %s, want %s", h.KeepUntil, want)
		}

		// A heartbeat extends only a key with less than a full TTL left in
		// Redis (real time): one in the claim's own millisecond would not.
		f.age(h, 10*time.Second)
		f.s.now = func() time.Time { return t0.Add(60 * time.Second) }
		got, err := f.s.Heartbeat(t.Context(), h.HoldID, "client-a")
		if err != nil || !got.ExpiresAt.Equal(msTime(t0.Add(90*time.Second).UnixMilli())) {
			t.Fatalf("heartbeat within the limit: %v, expires %s", err, got.ExpiresAt)
		}
		// (Redis counts the key's TTL in real time, so this only shows
		// that a heartbeat never carries the hold past its limit; the next
		// test sees it lapse.)
		f.age(h, 5*time.Second)
		f.s.now = func() time.Time { return t0.Add(110 * time.Second) }
		got, err = f.s.Heartbeat(t.Context(), h.HoldID, "client-a")
		if err != nil || got.ExpiresAt.After(h.KeepUntil) {
			t.Fatalf("heartbeat near the limit: %v, expires %s, after %s", err, got.ExpiresAt, h.KeepUntil)
		}
		f.s.now = func() time.Time { return t0.Add(2 * time.Minute) }
		if _, err := f.s.Heartbeat(t.Context(), h.HoldID, "client-a"); !errors.Is(err, ErrGone) {
			t.Fatalf("heartbeat at the limit: err = %v, want ErrGone", err)
		}
		// A confirm at the last moment still gets its pin, briefly.
		f.s.now = func() time.Time { return t0.Add(119 * time.Second) }
		pinned, err := f.s.Pin(t.Context(), h.HoldID, "client-a", 30*time.Second)
		if err != nil || !pinned.ExpiresAt.Equal(msTime(t0.Add(149*time.Second).UnixMilli())) {
			t.Fatalf("pin near the limit: %v, expires %s", err, pinned.ExpiresAt)
		}
	})

	t.Run("TheHoldThenExpiresAndItsReleaseIsPublished", testHoldLapsesAtItsMaxLife)
}

// Heartbeats on the store's clock every ten seconds of a two-minute life
// carry a hold to its KeepUntil and no further: the last one is capped
// there, the one at KeepUntil is gone, and Redis lets the key lapse when
// the capped beat said (real time, six seconds here, with generous
// margins); the sweep then announces the expiry. No step depends on how
// fast the machine is: each beat's key is aged first (a heartbeat extends
// only a key with less than its new life left), with seconds to spare.
//
// Mutations: extend without its cap at KeepUntil (exp = limit): the
// beats near the end carry the expiry past KeepUntil. The extend script
// never extending (extended = false): the first beat's expiry does not
// move.
func testHoldLapsesAtItsMaxLife(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	f.s.SetMaxLife(2 * time.Minute)
	t0 := time.Now()
	now := f.clock(t0)
	sub := f.subscribe(Channel(f.atid))
	h := f.claim("client-a", f.slot(0))
	if ev := sub.next(5 * time.Second); ev.Event.Type != EventHold {
		t.Fatalf("first event %+v, want the hold", ev.Event)
	}
	keep := h.KeepUntil
	beat := func(at time.Time, left time.Duration) (Hold, error) {
		f.age(h, left)
		*now = at
		return f.s.Heartbeat(t.Context(), h.HoldID, "client-a")
	}
	for at := 10 * time.Second; at < 2*time.Minute; at += 10 * time.Second {
		got, err := beat(t0.Add(at), 5*time.Second)
		if err != nil {
			t.Fatalf("heartbeat %s after the claim, within the max life: %v", at, err)
		}
		if want := msTime(min(t0.Add(at+30*time.Second).UnixMilli(), keep.UnixMilli())); !got.ExpiresAt.Equal(want) {
			t.Fatalf("heartbeat %s after the claim: expires %s, want %s", at, got.ExpiresAt, want)
		}
	}
	// Six seconds before KeepUntil: capped there, the key lives 6 s.
	got, err := beat(keep.Add(-6*time.Second), 4*time.Second)
	if err != nil || !got.ExpiresAt.Equal(keep) {
		t.Fatalf("heartbeat 6 s before the max life: %v, expires %s, want %s", err, got.ExpiresAt, keep)
	}
	for _, at := range []time.Time{keep, keep.Add(time.Minute)} {
		*now = at
		if _, err := f.s.Heartbeat(t.Context(), h.HoldID, "client-a"); !errors.Is(err, ErrGone) {
			t.Fatalf("heartbeat %s after the max life: err = %v, want ErrGone", at.Sub(keep), err)
		}
	}
	f.hideFromGlobalSweepers()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := f.heldBy(f.slot(0)); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hold outlived its max life by 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	*now = keep.Add(time.Second)
	if n, err := f.s.SweepClinic(t.Context(), f.clinic); err != nil || n != 1 {
		t.Fatalf("sweep: %d released, %v; want the one hold", n, err)
	}
	released := 0
	for _, r := range sub.upToNow() {
		if r.Event.Type == EventRelease && r.Event.HoldID == h.HoldID {
			if r.Event.Reason != ReasonExpired {
				t.Fatalf("release reason %q, want %q", r.Event.Reason, ReasonExpired)
			}
			released++
		}
	}
	if released != 1 {
		t.Fatalf("%d release events for the hold, want 1", released)
	}
}

func TestOverlappingHoldsOfOneSpecialist(t *testing.T) {
	t.Parallel()

	// req is a hold of type atid from start for d, without buffers.
	req := func(f *fixture, client string, atid uuid.UUID, start time.Time, d time.Duration) ClaimRequest {
		r := f.req(client, start)
		r.AppointmentTypeID, r.End = atid, start.Add(d)
		r.BufferBefore, r.BufferAfter = 0, 0
		return r
	}

	t.Run("TwoTypesClaimedTogetherGiveOneHold", func(t *testing.T) {
		t.Parallel()
		for round := range 20 {
			f := newFixture(t, 30*time.Second)
			other := uuid.New()
			reqs := []ClaimRequest{
				req(f, "client-a", f.atid, f.start, 30*time.Minute),
				req(f, "client-b", other, f.start.Add(15*time.Minute), time.Hour),
			}
			errs := make([]error, 2)
			testkit.Together(2, func(i int) { _, errs[i] = f.s.Claim(t.Context(), reqs[i]) })
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, ErrHeld):
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if won != 1 {
				t.Fatalf("round %d: %d holds, want 1 (errors %v)", round, won, errs)
			}
		}
	})

	t.Run("BuffersCountAndTheBlockingHoldIsNamed", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 30*time.Second)
		first := f.claim("client-a", f.slot(0)) // occupies 08:55-09:40
		_, err := f.s.Claim(t.Context(), f.req("client-b", f.slot(0).Add(35*time.Minute)))
		var held *HeldError
		if !errors.As(err, &held) || held.Hold.HoldID != first.HoldID || held.RetryAfter <= 0 {
			t.Fatalf("err = %v, want a HeldError naming %s", err, first.HoldID)
		}
		// 09:45 with its 5 minutes before starts at 09:40: it touches, and may.
		if _, err := f.s.Claim(t.Context(), f.req("client-b", f.slot(0).Add(45*time.Minute))); err != nil {
			t.Fatalf("touching hold: %v", err)
		}
	})

	t.Run("OwnHoldsOtherSpecialistsAndReleasedHoldsDoNotBlock", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, 30*time.Second)
		f.claim("client-a", f.start)
		own := req(f, "client-a", uuid.New(), f.start, time.Hour)
		if _, err := f.s.Claim(t.Context(), own); err != nil {
			t.Fatalf("the client's own overlapping hold: %v", err)
		}
		elsewhere := req(f, "client-b", uuid.New(), f.start, time.Hour)
		elsewhere.SpecialistID = uuid.New()
		if _, err := f.s.Claim(t.Context(), elsewhere); err != nil {
			t.Fatalf("another specialist: %v", err)
		}
		blocked := req(f, "client-c", uuid.New(), f.start.Add(10*time.Minute), time.Hour)
		if _, err := f.s.Claim(t.Context(), blocked); !errors.Is(err, ErrHeld) {
			t.Fatalf("err = %v, want ErrHeld", err)
		}
		for _, h := range f.s.mustActive(t, f.clinic) {
			if h.ClientID == "client-a" {
				if _, err := f.s.Release(t.Context(), h.HoldID, "client-a"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := f.s.Claim(t.Context(), blocked); err != nil {
			t.Fatalf("after the releases: %v", err)
		}
	})
}

func (s *Store) mustActive(t *testing.T, clinicID uuid.UUID) []Hold {
	t.Helper()
	hs, err := s.Active(t.Context(), clinicID)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}
