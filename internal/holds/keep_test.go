package holds

import (
	"errors"
	"testing"
	"time"
)

// claimFor claims f.start for client with a life of its own, as the
// server claims the holds it keeps.
func (f *fixture) claimFor(client string, life time.Duration) Hold {
	f.t.Helper()
	req := f.req(client, f.start)
	req.Life = life
	h, err := f.s.Claim(f.t.Context(), req)
	if err != nil {
		f.t.Fatalf("claim: %v", err)
	}
	return h
}

// A hold the server keeps past its claim's life can still be pinned for
// its booking: Keep carries its KeepUntil along, which bounds a pin.
//
// Mutation: Keep leaving KeepUntil at the claim's (claim + life): the pin
// after it is refused as expired.
func TestKeepCarriesTheKeepUntilSoAPinStillWorks(t *testing.T) {
	t.Parallel()
	const life = time.Minute
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	t0 := time.Now()
	now := f.clock(t0)
	h := f.claimFor("waitlist:a", life)
	if want := msTime(t0.Add(life).UnixMilli()); !h.KeepUntil.Equal(want) {
		t.Fatalf("claimed KeepUntil %s, want %s", h.KeepUntil, want)
	}
	sub := f.subscribe(ClinicChannel(f.clinic))

	until := t0.Add(3 * life)
	kept, err := f.s.Keep(ctx, h.HoldID, "waitlist:a", until)
	if err != nil {
		t.Fatal(err)
	}
	// Past the claim's KeepUntil and the pin it allowed, before Keep's.
	*now = t0.Add(2 * life)
	pinned, err := f.s.Pin(ctx, h.HoldID, "waitlist:a", 30*time.Second)
	if err != nil {
		t.Fatalf("pin after the claim's life: %v", err)
	}

	want := msTime(until.UnixMilli())
	if !kept.ExpiresAt.Equal(want) || !kept.KeepUntil.Equal(want) {
		t.Fatalf("kept hold expires %s, keep-until %s; want both %s", kept.ExpiresAt, kept.KeepUntil, want)
	}
	if got, _ := f.heldBy(f.start); got != kept {
		t.Fatalf("key payload %+v, want %+v", got, kept)
	}
	if meta := f.rdb.HGet(ctx, metaKey(f.clinic), h.HoldID).Val(); meta != f.rdb.Get(ctx, h.key()).Val() {
		t.Fatalf("meta payload %s differs from the key's", meta)
	}
	evs := sub.upToNow()
	if len(evs) != 1 || evs[0].Event.Type != EventHeartbeat || evs[0].Event.Hold.ClientID != "" ||
		!evs[0].Event.ExpiresAt.Equal(want) || !evs[0].Event.KeepUntil.Equal(want) {
		t.Fatalf("events %+v, want one heartbeat to %s", evs, want)
	}

	if pinned != kept {
		t.Fatalf("pin changed the hold to %+v; want %+v (it lasts longer than the pin)", pinned, kept)
	}
}

// Keep never lowers a KeepUntil, however its text compares: a time on the
// second is written without a fraction, and sorts after one with a
// fraction as plain text.
//
// Mutation: the script comparing the payload's times as they are written:
// the second Keep lowers the KeepUntil.
func TestKeepNeverLowersTheKeepUntil(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	t0 := time.Now().Truncate(time.Second)
	f.clock(t0)
	h := f.claimFor("waitlist:a", time.Minute)

	far := t0.Add(3*time.Minute + 500*time.Millisecond)
	if _, err := f.s.Keep(ctx, h.HoldID, "waitlist:a", far); err != nil {
		t.Fatal(err)
	}
	again, err := f.s.Keep(ctx, h.HoldID, "waitlist:a", t0.Add(3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !again.KeepUntil.Equal(msTime(far.UnixMilli())) || !again.ExpiresAt.Equal(msTime(far.UnixMilli())) {
		t.Fatalf("a shorter Keep left expiry %s, keep-until %s; want both %s", again.ExpiresAt, again.KeepUntil, far)
	}
}

// A hold that lasts longer than Keep asks (pinned) keeps its expiry, and
// its key its TTL, but its KeepUntil still reaches Keep's time.
func TestKeepRaisesTheKeepUntilOfAHoldThatLastsLonger(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	t0 := time.Now()
	now := f.clock(t0)
	h := f.claimFor("waitlist:a", 10*time.Second)

	*now = t0.Add(9 * time.Second)
	pinned, err := f.s.Pin(ctx, h.HoldID, "waitlist:a", time.Minute) // to t0+69s, past its KeepUntil
	if err != nil {
		t.Fatal(err)
	}
	kept, err := f.s.Keep(ctx, h.HoldID, "waitlist:a", t0.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !kept.ExpiresAt.Equal(pinned.ExpiresAt) {
		t.Fatalf("Keep moved the expiry from %s to %s", pinned.ExpiresAt, kept.ExpiresAt)
	}
	if want := msTime(t0.Add(30 * time.Second).UnixMilli()); !kept.KeepUntil.Equal(want) {
		t.Fatalf("KeepUntil %s, want %s", kept.KeepUntil, want)
	}
	if pttl := f.rdb.PTTL(ctx, h.key()).Val(); pttl < 50*time.Second {
		t.Fatalf("hold key PTTL %s after Keep, want the pin's ~60s kept", pttl)
	}
	if got, _ := f.heldBy(f.start); got != kept {
		t.Fatalf("key payload %+v, want %+v", got, kept)
	}
}

// Keep refuses another client's hold and one that is gone.
func TestKeepChecksOwnerAndLiveness(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	h := f.claimFor("waitlist:a", 200*time.Millisecond)
	until := time.Now().Add(time.Minute)

	if _, err := f.s.Keep(ctx, h.HoldID, "waitlist:b", until); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("Keep by another client: err = %v, want ErrNotOwner", err)
	}
	f.waitLapsed(f.start)
	if _, err := f.s.Keep(ctx, h.HoldID, "waitlist:a", until); !errors.Is(err, ErrExpired) {
		t.Fatalf("Keep after the lapse: err = %v, want ErrExpired", err)
	}
	if _, ok := f.heldBy(f.start); ok {
		t.Fatal("Keep revived a lapsed hold")
	}
}
