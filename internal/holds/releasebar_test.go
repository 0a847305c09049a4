package holds

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

// release lets go of h as its owner, and fails the test unless it did.
func (f *fixture) release(h Hold) {
	f.t.Helper()
	if ok, err := f.s.Release(f.t.Context(), h.HoldID, h.ClientID); err != nil || !ok {
		f.t.Fatalf("release: %v, %v", ok, err)
	}
}

// inMs is t as the scripts see it, in whole milliseconds.
func inMs(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

func TestReleaseBarsItsNetworkUntilTheHoldsEndOfLife(t *testing.T) {
	t.Parallel()

	t.Run("AClaimFromTheSameNetworkIsRefusedUntilKeepUntil", func(t *testing.T) {
		t.Parallel()
		f, now := reclaimFixture(t)
		r := f.addrReq("client-a", "2001:db8:1:2::1")
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		*now = now.Add(2 * time.Second)
		f.release(h)

		_, err = f.claimAlone(r)
		wantReclaimError(t, err, h.KeepUntil.Sub(inMs(*now)))
		// Another client id, another address of the same /64: the same network.
		_, err = f.claimAlone(f.addrReq("client-c", "2001:db8:1:2:ffff::9"))
		wantReclaimError(t, err, h.KeepUntil.Sub(inMs(*now)))

		*now = h.KeepUntil.Add(-time.Millisecond)
		_, err = f.claimAlone(r)
		wantReclaimError(t, err, time.Millisecond)
		*now = h.KeepUntil
		if _, err := f.claimAlone(r); err != nil {
			t.Fatalf("claim at the end of the released hold's life: %v", err)
		}
	})

	t.Run("AnotherNetworkTakesTheReleasedTimeAtOnce", func(t *testing.T) {
		t.Parallel()
		f, _ := reclaimFixture(t)
		h, err := f.claimAlone(f.addrReq("client-a", "203.0.113.7"))
		if err != nil {
			t.Fatal(err)
		}
		f.release(h)
		// The releaser asks first, and still the competitor gets the time.
		if _, err := f.claimAlone(f.addrReq("client-a", "203.0.113.7")); !errors.Is(err, ErrReclaimTooSoon) {
			t.Fatalf("the releaser's claim: %v, want ErrReclaimTooSoon", err)
		}
		won, err := f.claimAlone(f.addrReq("client-b", "198.51.100.9"))
		if err != nil || won.ClientID != "client-b" {
			t.Fatalf("the competitor's claim: %+v, %v", won, err)
		}
	})
}

// Release and claim again, one after the other or racing, never keep a
// time past the life of the first hold.
func TestReleaseAndReclaimNeverRenewAHold(t *testing.T) {
	t.Parallel()

	t.Run("ReleaseAndClaimInALoopCannotKeepATimePastItsLife", func(t *testing.T) {
		t.Parallel()
		f, now := reclaimFixture(t) // a life of 10 s
		r := f.addrReq("client-a", "203.0.113.7")
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		held, refused := []Hold{h}, 0
		for i := 1; i <= 25; i++ {
			*now = now.Add(time.Second)
			last := held[len(held)-1]
			if _, ok := f.heldBy(last.Start); ok {
				f.release(last)
			}
			// A fresh client id each time, as a script would send.
			again, err := f.claimAlone(f.addrReq(fmt.Sprintf("client-%d", i), "203.0.113.7"))
			if err != nil {
				wantReclaimError(t, err, last.KeepUntil.Sub(inMs(*now)))
				refused++
				continue
			}
			if now.Before(last.KeepUntil) {
				t.Fatalf("cycle %d: a new life at %s, before the last one ended at %s", i, now, last.KeepUntil)
			}
			held = append(held, again)
		}
		// 25 s of trying gives three lives, each begun where the last ended.
		if len(held) != 3 || refused != 23 {
			t.Fatalf("%d holds and %d refusals in 25 cycles, want 3 and 23", len(held), refused)
		}
	})

	t.Run("ClaimsRacingTheReleaseNeverRenewIt", func(t *testing.T) {
		t.Parallel()
		f, _ := reclaimFixture(t)
		h, err := f.claimAlone(f.addrReq("client-a", "203.0.113.7"))
		if err != nil {
			t.Fatal(err)
		}
		// Every claim meets either the hold or the bar: none falls
		// between the release and its bar.
		errs := testkit.Race(9, func(i int) error {
			if i == 0 {
				_, err := f.s.Release(t.Context(), h.HoldID, "client-a")
				return err
			}
			r := f.addrReq(fmt.Sprintf("client-%d", i), "203.0.113.7")
			r.AddressQuota = 20
			_, err := f.s.Claim(t.Context(), r)
			return err
		})
		if errs[0] != nil {
			t.Fatalf("release: %v", errs[0])
		}
		for i, err := range errs[1:] {
			if !errors.Is(err, ErrHeld) && !errors.Is(err, ErrReclaimTooSoon) {
				t.Fatalf("claim %d racing the release: %v, want ErrHeld or ErrReclaimTooSoon", i+1, err)
			}
		}
		f.hideFromGlobalSweepers()
	})
}

// What a release does not bar: another specialist, an early lapse, the
// server's own withdrawal, a hold without an address, a longer cool-off.
func TestReleaseBarsNothingElse(t *testing.T) {
	t.Parallel()

	t.Run("AClaimForAnySpecialistSkipsTheBarredOne", func(t *testing.T) {
		t.Parallel()
		f, _ := reclaimFixture(t)
		a, b := f.sp, uuid.New()
		r := f.addrReq("client-a", "203.0.113.7")
		h, err := f.s.ClaimAny(t.Context(), r, []uuid.UUID{a, b})
		if err != nil || h.SpecialistID != a {
			t.Fatalf("first claim: %+v, %v; want specialist a", h, err)
		}
		f.release(h)
		again, err := f.s.ClaimAny(t.Context(), r, []uuid.UUID{a, b})
		if err != nil || again.SpecialistID != b {
			t.Fatalf("claim after the release: %+v, %v; want specialist b", again, err)
		}
		f.release(again)
		_, err = f.s.ClaimAny(t.Context(), r, []uuid.UUID{a, b})
		if !errors.Is(err, ErrReclaimTooSoon) {
			t.Fatalf("both barred: %v, want ErrReclaimTooSoon", err)
		}
		f.hideFromGlobalSweepers()
	})

	t.Run("AnEarlyLapseStillBarsNothing", func(t *testing.T) {
		t.Parallel()
		f, now := reclaimFixture(t)
		r := f.addrReq("client-a", "203.0.113.7")
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		// The laptop slept: no heartbeat, no release. "Hold it again".
		f.lapse(h)
		*now = h.ExpiresAt.Add(time.Millisecond)
		if _, err := f.claimAlone(r); err != nil {
			t.Fatalf("holding again after an early lapse: %v", err)
		}
		if f.reclaimKeyExists(r, "203.0.113.7") {
			t.Fatal("an early lapse left a bar")
		}
	})

	t.Run("WithdrawBarsNothing", func(t *testing.T) {
		t.Parallel()
		f, _ := reclaimFixture(t)
		r := f.addrReq("client-a", "203.0.113.7")
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := f.s.Withdraw(t.Context(), h.HoldID, "client-a"); err != nil || !ok {
			t.Fatalf("withdraw: %v, %v", ok, err)
		}
		if _, err := f.claimAlone(r); err != nil {
			t.Fatalf("claim after a withdrawal: %v", err)
		}
	})

	t.Run("AHoldClaimedWithoutAnAddressBarsNothing", func(t *testing.T) {
		t.Parallel()
		f, _ := reclaimFixture(t)
		r := f.req("client-a", f.slot(0))
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		f.release(h)
		if _, err := f.claimAlone(r); err != nil {
			t.Fatalf("re-claim: %v", err)
		}
	})

	t.Run("ABarNeverShortensALongerCoolOff", func(t *testing.T) {
		t.Parallel()
		f, now := reclaimFixture(t)
		r := f.addrReq("client-a", "203.0.113.7")
		k := reclaimKey(holdKey(r.ClinicID, r.AppointmentTypeID, r.SpecialistID, r.Start), "203.0.113.7")
		h, err := f.claimAlone(r)
		if err != nil {
			t.Fatal(err)
		}
		// A cool-off of an earlier hold that runs past this one's life.
		long := h.KeepUntil.Add(time.Hour)
		if err := f.rdb.Set(t.Context(), k, long.UnixMilli(), time.Hour+time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		f.release(h)
		_, err = f.claimAlone(r)
		wantReclaimError(t, err, long.Sub(inMs(*now)))
	})
}
