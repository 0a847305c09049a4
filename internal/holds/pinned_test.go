package holds

import (
	"errors"
	"testing"
	"time"
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
