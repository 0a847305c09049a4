package holds

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/testkit"
)

// A pinned hold outlives its missing heartbeats, up to its longest life
// and no further; a stranger cannot pin it.
func TestPinUntilOutlivesHeartbeatsUpToKeepUntil(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Second)
	ctx := t.Context()
	h := f.claimFor("patient", 3*time.Second)

	if _, err := f.s.PinUntil(ctx, h.HoldID, "stranger", time.Now().Add(2*time.Second)); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("a stranger's pin: %v, want ErrNotOwner", err)
	}
	pinned, err := f.s.PinUntil(ctx, h.HoldID, "patient", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !pinned.ExpiresAt.Equal(h.KeepUntil) {
		t.Fatalf("pinned to %s, want its KeepUntil %s", pinned.ExpiresAt, h.KeepUntil)
	}
	time.Sleep(1500 * time.Millisecond) // past the TTL, no heartbeat
	if _, ok := f.heldBy(f.start); !ok {
		t.Fatal("the pinned hold lapsed without heartbeats before its longest life")
	}
	f.waitLapsed(f.start)
	if time.Now().Before(h.KeepUntil) {
		t.Fatalf("lapsed at %s, before its KeepUntil %s", time.Now(), h.KeepUntil)
	}
	if _, err := f.s.PinUntil(ctx, h.HoldID, "patient", time.Now().Add(time.Minute)); !errors.Is(err, ErrExpired) {
		t.Fatalf("pinning a lapsed hold: %v, want ErrExpired", err)
	}
}

// Pins that count a place of one allowance, released together, count
// exactly as many as it allows; a pin that is refused (a stranger's, a
// lapsed hold's) counts nothing; and each pin still pins its hold.
func TestPinCountingCountsAtMostTheAllowanceAndOnlyWhenItPins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Second)
	ctx := t.Context()
	const n, limit = 12, 5
	count := ratelimit.Planned{Key: "ratelimit:test:{" + f.clinic.String() + "}|net:1", Limit: limit, WindowMS: 60000}
	t.Cleanup(func() { f.rdb.Del(context.Background(), count.Key) })
	hs := make([]Hold, n)
	for i := range hs {
		hs[i] = f.claim(fmt.Sprintf("patient%d", i), f.slot(i))
	}
	if _, err := f.s.PinCounting(ctx, PinRequest{HoldID: hs[0].HoldID, ClientID: "stranger", Pin: time.Minute, Count: count}); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("a stranger's pin: %v, want ErrNotOwner", err)
	}
	var mu sync.Mutex
	counted := 0
	errs := testkit.Race(n, func(i int) error {
		p, err := f.s.PinCounting(context.Background(), PinRequest{HoldID: hs[i].HoldID, ClientID: hs[i].ClientID, Pin: time.Minute, Count: count})
		if err == nil && p.Counted {
			mu.Lock()
			counted++
			mu.Unlock()
		}
		if err == nil && !p.Hold.ExpiresAt.After(hs[i].ExpiresAt) {
			err = fmt.Errorf("pinned to %s, not past %s", p.Hold.ExpiresAt, hs[i].ExpiresAt)
		}
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if counted != limit {
		t.Fatalf("%d pins counted a place, want %d", counted, limit)
	}
	if got := f.rdb.Get(ctx, count.Key).Val(); got != fmt.Sprint(limit) {
		t.Fatalf("the counter is %q, want %d", got, limit)
	}
}
