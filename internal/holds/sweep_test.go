package holds

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

// The tests that call the global Sweep or RunSweeper are not parallel: they
// sweep every clinic in the shared database, and must not expire another
// running test's holds under it. (Go runs all non-parallel tests before the
// parallel ones.)

// Expiry here is decided on the store's clock, which the test moves; only
// the expired hold's key must really be gone, and the test waits for that.
// The clock starts two minutes ahead of real time, so that no sweeper of
// another test (on the real clock) counts these holds as expired first.
func TestSweepReleasesAnExpiredHoldExactlyOnceAcrossConcurrentSweepers(t *testing.T) {
	f := newFixture(t, time.Minute)
	ctx := t.Context()
	t0 := time.Now().Add(2 * time.Minute)
	now := f.clock(t0)
	sub := f.subscribe(Channel(f.atid), ClinicChannel(f.clinic))

	// expired: its key (written with a short TTL) lapses in real time.
	short := NewStore(f.rdb, 100*time.Millisecond, nil)
	short.now = f.s.now
	expired, err := short.Claim(ctx, f.req("client-a", f.slot(0)))
	if err != nil {
		t.Fatal(err)
	}
	// lingering: its score runs out at t0+1m, its key lives a real minute,
	// as when the store's clock runs ahead of Redis's. It also keeps
	// client-a's set alive, so that the sweep must take expired out of it.
	other := f.req("client-a", f.slot(3))
	other.AppointmentTypeID = uuid.New()
	lingering, err := f.s.Claim(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	// beaten: heartbeated at t0+90s, after a sweeper read it as a candidate.
	beaten := f.claim("client-b", f.slot(1))
	f.waitLapsed(expired.Start)

	*now = t0.Add(90 * time.Second)
	stale, err := f.rdb.ZRangeByScore(ctx, expiryKey(f.clinic), expiredRange(*now)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != 3 {
		t.Fatalf("candidates %v, want the three holds", stale)
	}
	f.age(beaten, 30*time.Second) // the heartbeat extends only a key with less than a TTL left
	beat, err := f.s.Heartbeat(ctx, beaten.HoldID, "client-b")
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(150 * time.Second).UnixMilli(); beat.ExpiresAt.UnixMilli() != want {
		t.Fatalf("heartbeat moved the expiry to %s, want %s", beat.ExpiresAt, msTime(want))
	}

	// Global sweeps, and sweeps of candidates read before the heartbeat.
	var failed atomic.Int32
	testkit.Race(6, func(i int) error {
		var err error
		if i%2 == 0 {
			_, err = f.s.Sweep(ctx)
		} else {
			_, err = f.s.sweepClinic(ctx, f.clinic, *now, stale)
		}
		if err != nil {
			failed.Add(1)
			t.Errorf("sweep: %v", err)
		}
		return nil
	})
	if failed.Load() > 0 {
		t.FailNow()
	}

	for name, h := range map[string]Hold{"heartbeated": beaten, "lingering": lingering} {
		if meta, expiry, client := f.indexed(h); !meta || !expiry || !client {
			t.Fatalf("%s hold was swept: meta %v expiry %v client %v", name, meta, expiry, client)
		}
	}
	if _, ok := f.heldBy(beaten.Start); !ok {
		t.Fatal("heartbeated hold is gone")
	}
	if meta, expiry, client := f.indexed(expired); meta || expiry || client {
		t.Fatalf("swept hold still indexed: meta %v expiry %v client %v", meta, expiry, client)
	}

	// Sweep counts every clinic's holds, so count this clinic's by its
	// events: exactly one release, on each channel, for the expired hold.
	perChannel := map[string]int{}
	for _, r := range sub.upToNow() {
		ev := r.Event
		if ev.Type != EventRelease {
			continue // the claims' and the heartbeat's events
		}
		if ev != published(EventRelease, expired, ReasonExpired) {
			t.Fatalf("release event %+v, want the expired hold %+v", ev, expired)
		}
		perChannel[r.Channel]++
	}
	if perChannel[Channel(f.atid)] != 1 || perChannel[ClinicChannel(f.clinic)] != 1 || len(perChannel) != 2 {
		t.Fatalf("release events per channel %v, want exactly one on each", perChannel)
	}
}

func TestConcurrentClinicSweepsReturnEachExpiredHoldOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100*time.Millisecond)
	ctx := t.Context()
	t0 := time.Now().Add(2 * time.Minute) // ahead of other tests' sweepers
	now := f.clock(t0)
	for i := range 4 {
		f.claim(fmt.Sprintf("client-%d", i), f.slot(i))
	}
	f.hideFromGlobalSweepers()
	for i := range 4 {
		f.waitLapsed(f.slot(i))
	}
	*now = t0.Add(time.Second)

	var total atomic.Int64
	testkit.Race(5, func(int) error {
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
	// Two minutes ahead of real time: only this store's sweeper, none of
	// another test, finds the hold expired.
	f.s.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
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

	ev := sub.next(5 * time.Second).Event
	if ev.Type != EventRelease || ev.Reason != ReasonExpired || ev.HoldID != h.HoldID {
		t.Fatalf("event %+v, want the hold's expired release", ev)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunSweeper did not stop with its context")
	}
}
