package holds

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A claim that asks refuses a client in its cooldown for the type, its own
// hold of the slot included, and writes nothing; other clients, other
// types and claims that do not ask are not bound by it.
func TestClaimRefusesDuringTheCooldownWhenAsked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	booking := uuid.New()
	t.Cleanup(func() {
		f.rdb.Del(ctx, cooldownKey(f.clinic, "client-a", f.atid), cooldownReverseKey(f.clinic, booking))
	})
	own := f.claim("client-a", f.slot(0))
	if err := f.s.SetCooldown(ctx, f.clinic, "client-a", f.atid, booking, time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, start := range []time.Time{f.slot(0), f.slot(1)} {
		req := f.req("client-a", start)
		req.Cooldown = true
		_, err := f.s.Claim(ctx, req)
		var cooling *CooldownError
		if !errors.As(err, &cooling) || !errors.Is(err, ErrCooldown) {
			t.Fatalf("claim of %s in the cooldown: %v, want a *CooldownError", start, err)
		}
		if cooling.RetryAfter <= 59*time.Minute || cooling.RetryAfter > time.Hour {
			t.Fatalf("retry after %s, want the cooldown's ~1h", cooling.RetryAfter)
		}
	}
	if h, ok := f.heldBy(f.slot(1)); ok {
		t.Fatalf("a refused claim left a hold: %+v", h)
	}
	if h, ok := f.heldBy(f.slot(0)); !ok || h.HoldID != own.HoldID {
		t.Fatalf("the client's own hold changed: %+v (%v)", h, ok)
	}

	other := f.req("client-b", f.slot(2))
	other.Cooldown = true
	if _, err := f.s.Claim(ctx, other); err != nil {
		t.Fatalf("another client: %v", err)
	}
	otherType := f.req("client-a", f.slot(3))
	otherType.AppointmentTypeID, otherType.Cooldown = uuid.New(), true
	if _, err := f.s.Claim(ctx, otherType); err != nil {
		t.Fatalf("another type: %v", err)
	}
	if err := f.s.ClearCooldown(ctx, f.clinic, booking); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Claim(ctx, f.req("client-a", f.slot(0))); err != nil {
		t.Fatalf("the own hold without the check: %v", err)
	}
}

// A booked hold spent with a cooldown starts it in the same step, as
// SetCooldown would: found by the claim, lifted by ClearCooldown through
// the booking. Without a cooldown nothing of one is written.
func TestConsumeBookedCoolingStartsTheCooldown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	booking, plain := uuid.New(), uuid.New()
	t.Cleanup(func() {
		f.rdb.Del(ctx, cooldownKey(f.clinic, "client-a", f.atid), cooldownReverseKey(f.clinic, booking),
			cooldownKey(f.clinic, "client-b", f.atid), cooldownReverseKey(f.clinic, plain))
	})
	h := f.claim("client-a", f.slot(0))
	if err := f.s.ConsumeBookedCooling(ctx, h, booking, time.Hour); err != nil {
		t.Fatal(err)
	}
	if meta, expiry, client := f.indexed(h); meta || expiry || client {
		t.Fatalf("spent hold still indexed: meta %v expiry %v client %v", meta, expiry, client)
	}
	if _, ok := f.heldBy(f.slot(0)); ok {
		t.Fatal("spent hold still held")
	}
	d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid)
	if err != nil || d <= 59*time.Minute || d > time.Hour {
		t.Fatalf("cooldown %s (%v), want ~1h", d, err)
	}
	if got := f.rdb.Get(ctx, cooldownKey(f.clinic, "client-a", f.atid)).Val(); got != booking.String() {
		t.Fatalf("cooldown names %q, want the booking", got)
	}
	if err := f.s.ClearCooldown(ctx, f.clinic, booking); err != nil {
		t.Fatal(err)
	}
	if d, err := f.s.CooldownRemaining(ctx, f.clinic, "client-a", f.atid); err != nil || d != 0 {
		t.Fatalf("cooldown %s left after clearing (%v)", d, err)
	}

	g := f.claim("client-b", f.slot(1))
	if err := f.s.ConsumeBookedCooling(ctx, g, plain, 0); err != nil {
		t.Fatal(err)
	}
	if n := f.rdb.Exists(ctx, cooldownKey(f.clinic, "client-b", f.atid), cooldownReverseKey(f.clinic, plain)).Val(); n != 0 {
		t.Fatalf("%d cooldown keys written without a cooldown", n)
	}
}
