package holds

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests that call the global Sweep or RunSweeper are not parallel: they
// sweep every clinic in the shared database, and must not expire another
// running test's holds under it. (Go runs all non-parallel tests before the
// parallel ones.)

func TestSweepReleasesAnExpiredHoldExactlyOnceAcrossConcurrentSweepers(t *testing.T) {
	const ttl = time.Second
	f := newFixture(t, ttl)
	ctx := t.Context()
	sub := f.subscribe(Channel(f.atid), ClinicChannel(f.clinic))

	expiring := f.claim("client-a", f.slot(0))
	kept := f.claim("client-b", f.slot(1))
	time.Sleep(500 * time.Millisecond)
	if _, err := f.s.Heartbeat(ctx, kept.HoldID, "client-b"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(650 * time.Millisecond) // expiring is past its TTL; kept is not

	var failed atomic.Int32
	race(5, func(int) error {
		if _, err := f.s.Sweep(ctx); err != nil {
			failed.Add(1)
			t.Errorf("sweep: %v", err)
		}
		return nil
	})
	if failed.Load() > 0 {
		t.FailNow()
	}

	// Check the heartbeated hold at once, while it is certainly live.
	if meta, expiry, client := f.indexed(kept); !meta || !expiry || !client {
		t.Fatalf("heartbeated hold was swept: meta %v expiry %v client %v", meta, expiry, client)
	}
	if _, ok := f.heldBy(f.slot(1)); !ok {
		t.Fatal("heartbeated hold is gone")
	}
	if meta, expiry, client := f.indexed(expiring); meta || expiry || client {
		t.Fatalf("swept hold still indexed: meta %v expiry %v client %v", meta, expiry, client)
	}

	// Sweep counts every clinic's holds, so count this clinic's by its
	// events: exactly one release, on each channel, for the expired hold.
	perChannel := map[string]int{}
	for _, r := range sub.drain(300 * time.Millisecond) {
		ev := r.Event
		if ev.Type != EventRelease {
			continue // the claims' and the heartbeat's events
		}
		if ev != published(EventRelease, expiring, ReasonExpired) {
			t.Fatalf("release event %+v, want the expired hold %+v", ev, expiring)
		}
		perChannel[r.Channel]++
	}
	if perChannel[Channel(f.atid)] != 1 || perChannel[ClinicChannel(f.clinic)] != 1 || len(perChannel) != 2 {
		t.Fatalf("release events per channel %v, want exactly one on each", perChannel)
	}

	// The quota (1) of the expired hold's client is free again.
	if _, err := f.s.Claim(ctx, f.req("client-a", f.slot(2))); err != nil {
		t.Fatalf("claim after the sweep: %v", err)
	}
}

func TestConcurrentClinicSweepsReturnEachExpiredHoldOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 200*time.Millisecond)
	ctx := t.Context()
	for i := range 4 {
		f.claim(fmt.Sprintf("client-%d", i), f.slot(i))
	}
	f.hideFromGlobalSweepers()
	time.Sleep(400 * time.Millisecond)

	var total atomic.Int64
	race(5, func(int) error {
		n, err := f.s.SweepClinic(ctx, f.clinic)
		if err != nil {
			t.Errorf("sweep: %v", err)
		}
		total.Add(int64(n))
		return nil
	})
	if got := total.Load(); got != 4 {
		t.Fatalf("concurrent sweeps released %d holds in total, want 4", got)
	}
	if n := f.rdb.HLen(ctx, metaKey(f.clinic)).Val(); n != 0 {
		t.Fatalf("%d meta entries left, want 0", n)
	}
}

func TestSweepIgnoresLiveHoldsAndDropsOrphanIndexEntries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	h := f.claim("client-a", f.start)
	// An index entry without a payload (never written by this package).
	f.rdb.ZAdd(ctx, expiryKey(f.clinic), redis.Z{Score: 1, Member: newHoldID(f.clinic)})

	if n, err := f.s.SweepClinic(ctx, f.clinic); n != 0 || err != nil {
		t.Fatalf("sweep = %d, %v; want 0", n, err)
	}
	if n := f.rdb.ZCard(ctx, expiryKey(f.clinic)).Val(); n != 1 {
		t.Fatalf("%d expiry entries, want only the live hold's", n)
	}
	if meta, expiry, client := f.indexed(h); !meta || !expiry || !client {
		t.Fatal("sweep touched a live hold")
	}
}

func TestRunSweeperAnnouncesExpiryAndStopsWithItsContext(t *testing.T) {
	f := newFixture(t, 200*time.Millisecond)
	sub := f.subscribe(ClinicChannel(f.clinic))
	h := f.claim("client-a", f.start)
	if ev := sub.next(time.Second).Event; ev.Type != EventHold {
		t.Fatalf("first event %+v, want hold", ev)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		f.s.RunSweeper(ctx, 50*time.Millisecond)
		close(done)
	}()

	ev := sub.next(2 * time.Second).Event
	if ev.Type != EventRelease || ev.Reason != ReasonExpired || ev.HoldID != h.HoldID {
		t.Fatalf("event %+v, want the hold's expired release", ev)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("RunSweeper did not stop with its context")
	}
}
