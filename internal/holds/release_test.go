package holds

import (
	"errors"
	"testing"
	"time"
)

func TestReleaseIsOwnerOnlyAndIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	h := f.claim("client-a", f.start)

	if ok, err := f.s.Release(ctx, h.HoldID, "client-b"); ok || !errors.Is(err, ErrNotOwner) {
		t.Fatalf("release by another client = %v, %v; want false, ErrNotOwner", ok, err)
	}
	if got, ok := f.heldBy(f.start); !ok || got != h {
		t.Fatal("another client's release removed the hold")
	}

	if ok, err := f.s.Release(ctx, h.HoldID, "client-a"); !ok || err != nil {
		t.Fatalf("release = %v, %v; want true, nil", ok, err)
	}
	if ok, err := f.s.Release(ctx, h.HoldID, "client-a"); ok || err != nil {
		t.Fatalf("second release = %v, %v; want false, nil", ok, err)
	}
	if _, ok := f.heldBy(f.start); ok {
		t.Fatal("released slot is still held")
	}
	if meta, expiry, client := f.indexed(h); meta || expiry || client {
		t.Fatalf("released hold still indexed: meta %v expiry %v client %v", meta, expiry, client)
	}
	for _, id := range []string{"", "garbage", newHoldID(f.clinic)} {
		if ok, err := f.s.Release(ctx, id, "client-a"); ok || err != nil {
			t.Fatalf("release of %q = %v, %v; want false, nil", id, ok, err)
		}
	}
}

func TestReleaseOfAnExpiredHoldLeavesItToTheSweeper(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 200*time.Millisecond)
	ctx := t.Context()
	// Ahead of real time, so that no other test's sweeper takes the hold
	// before it is hidden from them.
	t0 := time.Now().Add(2 * time.Minute)
	now := f.clock(t0)
	h := f.claim("client-a", f.start)
	f.hideFromGlobalSweepers()
	f.waitLapsed(f.start)
	*now = t0.Add(time.Second)

	if ok, err := f.s.Release(ctx, h.HoldID, "client-a"); ok || err != nil {
		t.Fatalf("release of an expired hold = %v, %v; want false, nil", ok, err)
	}
	if n, err := f.s.SweepClinic(ctx, f.clinic); n != 1 || err != nil {
		t.Fatalf("sweep = %d, %v; want the expired hold", n, err)
	}
}

func TestConsumeRemovesTheHoldSilently(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	h := f.claim("client-a", f.start)
	pinned, err := f.s.Pin(ctx, h.HoldID, "client-a", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sub := f.subscribe(Channel(f.atid), ClinicChannel(f.clinic))

	if err := f.s.Consume(ctx, pinned); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.heldBy(f.start); ok {
		t.Fatal("consumed slot still held")
	}
	if meta, expiry, client := f.indexed(h); meta || expiry || client {
		t.Fatalf("consumed hold still indexed: meta %v expiry %v client %v", meta, expiry, client)
	}
	if active, err := f.s.Active(ctx, f.clinic); err != nil || len(active) != 0 {
		t.Fatalf("Active after consume = %+v, %v", active, err)
	}
	if evs := sub.upToNow(); len(evs) != 0 {
		t.Fatalf("consume published %+v", evs)
	}
	if err := f.s.Consume(ctx, pinned); err != nil {
		t.Fatalf("second consume: %v", err)
	}
}

func TestConsumeAfterExpiryStillClearsTheIndexButNotANewerHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 200*time.Millisecond)
	ctx := t.Context()
	old := f.claim("client-a", f.start)
	f.waitLapsed(f.start)
	f.s = NewStore(f.rdb, 30*time.Second, nil)
	fresh := f.claim("client-b", f.start)

	if err := f.s.Consume(ctx, old); err != nil {
		t.Fatal(err)
	}
	if meta, expiry, client := f.indexed(old); meta || expiry || client {
		t.Fatalf("consumed hold still indexed: meta %v expiry %v client %v", meta, expiry, client)
	}
	if got, ok := f.heldBy(f.start); !ok || got != fresh {
		t.Fatalf("consume of the old hold removed the newer one: %+v %v", got, ok)
	}
	// Nothing left for the sweeper to announce about the consumed hold.
	if n, err := f.s.SweepClinic(ctx, f.clinic); n != 0 || err != nil {
		t.Fatalf("sweep after consume = %d, %v; want 0", n, err)
	}
}
