package holds

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/ratelimit"
)

// counter is a limit of n per minute under the fixture clinic's hash tag.
func (f *fixture) counter(n int) ratelimit.Counter {
	f.t.Helper()
	l := ratelimit.New(f.rdb, "test-"+uuid.NewString(), n, time.Minute, nil)
	return l.CounterIn(f.clinic.String(), "198.51.100.9")
}

// wantLimited asserts a *LimitedError naming counter i with a wait within
// the minute's window.
func wantLimited(t *testing.T, err error, i int) {
	t.Helper()
	var lim *LimitedError
	if !errors.As(err, &lim) || lim.Counter != i || lim.RetryAfter <= 0 || lim.RetryAfter > time.Minute {
		t.Fatalf("err = %v (%+v), want counter %d over its limit", err, lim, i)
	}
}

// A claim counts its limits in its own step, whatever its answer, and
// over one of them is refused without claiming or counting the rest.
func TestClaimCountsItsLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	first, second := f.counter(2), f.counter(100)
	req := func(client string, i int) ClaimRequest {
		r := f.req(client, f.slot(i))
		r.Counts = []ratelimit.Counter{first, second}
		return r
	}
	if _, err := f.s.Claim(ctx, req("client-a", 0)); err != nil {
		t.Fatal(err)
	}
	// Refused (the slot is held), and counted all the same.
	if _, err := f.s.Claim(ctx, req("client-b", 0)); !errors.Is(err, ErrHeld) {
		t.Fatalf("err = %v, want ErrHeld", err)
	}
	_, err := f.s.Claim(ctx, req("client-c", 1))
	wantLimited(t, err, 0)
	if _, ok := f.heldBy(f.slot(1)); ok {
		t.Fatal("a claim over its limit took the slot")
	}
	if n := f.rdb.Get(ctx, first.Key).Val(); n != "3" {
		t.Fatalf("the first counter reads %q, want 3", n)
	}
	if n := f.rdb.Get(ctx, second.Key).Val(); n != "2" {
		t.Fatalf("the second counter reads %q, want 2: a refused claim counts no further", n)
	}
	if pttl := f.rdb.PTTL(ctx, first.Key).Val(); pttl <= 0 || pttl > time.Minute {
		t.Fatalf("the counter lives %s, want its window", pttl)
	}
	// Refused before its step (invalid): counted apart.
	bad := req("client-d", 2)
	bad.Address = "not-an-address"
	_, err = f.s.Claim(ctx, bad)
	wantLimited(t, err, 0)
	if n := f.rdb.Get(ctx, first.Key).Val(); n != "4" {
		t.Fatalf("the first counter reads %q, want 4", n)
	}
}

// A heartbeat counts its limits in its own step: gone or not, first
// the first; the heartbeat of a hold over a limit changes nothing. A
// heartbeat that is counted still publishes its event in its step.
func TestHeartbeatCountsItsLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	h := f.claim("client-a", f.start)
	address, hold := f.counter(3), f.counter(2)
	sub := f.subscribe(ClinicChannel(f.clinic))
	beat, err := f.s.Heartbeat(ctx, h.HoldID, "client-a", address, hold)
	if err != nil {
		t.Fatal(err)
	}
	if ev := sub.next(5 * time.Second).Event; ev.Type != EventHeartbeat || !ev.ExpiresAt.Equal(beat.ExpiresAt) {
		t.Fatalf("event %+v, want the heartbeat's", ev)
	}
	// Published by the script: nothing else follows.
	if more := sub.upToNow(); len(more) != 0 {
		t.Fatalf("more events: %+v", more)
	}
	if _, err := f.s.Heartbeat(ctx, h.HoldID, "a-stranger", address, hold); !errors.Is(err, ErrGone) {
		t.Fatalf("a stranger's beat: %v, want ErrGone", err)
	}
	_, err = f.s.Heartbeat(ctx, h.HoldID, "client-a", address, hold)
	wantLimited(t, err, 1)
	_, err = f.s.Heartbeat(ctx, h.HoldID, "client-a", address, hold)
	wantLimited(t, err, 0)
	if a, b := f.rdb.Get(ctx, address.Key).Val(), f.rdb.Get(ctx, hold.Key).Val(); a != "4" || b != "3" {
		t.Fatalf("counters read %s and %s, want 4 and 3", a, b)
	}
	// A hold the store cannot find is counted apart.
	unknown := newHoldID(f.clinic)
	_, err = f.s.Heartbeat(ctx, unknown, "client-a", address, hold)
	wantLimited(t, err, 0)
	if a := f.rdb.Get(ctx, address.Key).Val(); a != "5" {
		t.Fatalf("the address counter reads %s, want 5", a)
	}
}

// ActiveReading reads the clinic's keys it is given with its live holds,
// "" for a missing key, as Active lists them.
func TestActiveReadingReadsKeysWithTheHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	f.claim("client-a", f.slot(0))
	f.claim("client-b", f.slot(1))
	set := "counter:{" + f.clinic.String() + "}:set"
	if err := f.rdb.Set(ctx, set, "7", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.rdb.Del(context.Background(), set) })
	hs, vals, err := f.s.ActiveReading(ctx, f.clinic, []string{set, "counter:{" + f.clinic.String() + "}:missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 2 || vals[0] != "7" || vals[1] != "" {
		t.Fatalf("values %q, want [7 \"\"]", vals)
	}
	want, err := f.s.Active(ctx, f.clinic)
	if err != nil || len(want) != 2 || !slices.Equal(hs, want) {
		t.Fatalf("holds %+v, want Active's %+v (%v)", hs, want, err)
	}
}
