package holds

import (
	"errors"
	"testing"
	"time"
)

// The store's clock decides expiries; Redis's key TTLs are set by age.
func TestHeartbeatMovesTheExpiryForward(t *testing.T) {
	t.Parallel()
	const ttl = time.Minute
	f := newFixture(t, ttl)
	ctx := t.Context()
	t0 := time.Now()
	now := f.clock(t0)
	h := f.claim("client-a", f.start)

	*now = t0.Add(30 * time.Second)
	f.age(h, 30*time.Second)
	beat, err := f.s.Heartbeat(ctx, h.HoldID, "client-a")
	if err != nil {
		t.Fatal(err)
	}
	if want := msTime(t0.Add(90 * time.Second).UnixMilli()); !beat.ExpiresAt.Equal(want) {
		t.Fatalf("heartbeat moved the expiry to %s, want %s", beat.ExpiresAt, want)
	}
	want := h
	want.ExpiresAt = beat.ExpiresAt
	if beat != want {
		t.Fatalf("heartbeat returned %+v, want %+v", beat, want)
	}
	if got, _ := f.heldBy(f.start); got != beat {
		t.Fatalf("key payload %+v, want %+v", got, beat)
	}
	if meta := f.rdb.HGet(ctx, metaKey(f.clinic), h.HoldID).Val(); meta != f.rdb.Get(ctx, h.key()).Val() {
		t.Fatalf("meta payload %s differs from the key's", meta)
	}
	if score := f.rdb.ZScore(ctx, expiryKey(f.clinic), h.HoldID).Val(); int64(score) != beat.ExpiresAt.UnixMilli() {
		t.Fatalf("expiry score %v, want %d", score, beat.ExpiresAt.UnixMilli())
	}
	// Both had 30 s left; a full TTL again, give or take a slow machine.
	if pttl := f.rdb.PTTL(ctx, h.key()).Val(); pttl < ttl-10*time.Second {
		t.Fatalf("hold key PTTL %s after heartbeat, want ~%s", pttl, ttl)
	}
	if pttl := f.rdb.PTTL(ctx, clientKey(f.clinic, "client-a")).Val(); pttl < ttl-10*time.Second {
		t.Fatalf("client set PTTL %s after heartbeat, want ~%s", pttl, ttl)
	}

	*now = t0.Add(75 * time.Second) // past the original expiry, before the new one
	if active, err := f.s.Active(ctx, f.clinic); err != nil || len(active) != 1 || active[0] != beat {
		t.Fatalf("Active = %+v, %v: the heartbeated hold expired at its original time", active, err)
	}
}

func TestHeartbeatOfAnotherClientOrAnExpiredHoldIsGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	h := f.claim("client-a", f.start)

	// Another client's heartbeat is refused and leaves the hold as it was:
	// aged to 10 s, a heartbeat that extended before checking the owner
	// would give it a full TTL again (the test fails if the owner check
	// moves after the extension, or is dropped).
	f.age(h, 10*time.Second)
	if _, err := f.s.Heartbeat(ctx, h.HoldID, "client-b"); !errors.Is(err, ErrGone) {
		t.Fatalf("non-owner heartbeat: err = %v, want ErrGone", err)
	}
	if pttl := f.rdb.PTTL(ctx, h.key()).Val(); pttl > 10*time.Second {
		t.Fatalf("hold key PTTL %s after another client's heartbeat, want at most the 10 s it had", pttl)
	}
	if score := f.rdb.ZScore(ctx, expiryKey(f.clinic), h.HoldID).Val(); int64(score) != h.ExpiresAt.UnixMilli() {
		t.Fatalf("expiry score %v after another client's heartbeat, want the claim's %d", score, h.ExpiresAt.UnixMilli())
	}
	if got, _ := f.heldBy(f.start); got != h {
		t.Fatalf("slot held by %+v after another client's heartbeat, want %+v", got, h)
	}
	for _, id := range []string{"", "nonsense", newHoldID(f.clinic)} {
		if _, err := f.s.Heartbeat(ctx, id, "client-a"); !errors.Is(err, ErrGone) {
			t.Fatalf("heartbeat of %q: err = %v, want ErrGone", id, err)
		}
	}
	f.lapse(h)
	if _, err := f.s.Heartbeat(ctx, h.HoldID, "client-a"); !errors.Is(err, ErrGone) {
		t.Fatalf("heartbeat after expiry: err = %v, want ErrGone", err)
	}
	if _, ok := f.heldBy(f.start); ok {
		t.Fatal("heartbeat revived an expired hold")
	}
}

func TestHeartbeatDoesNotTouchAHoldThatReplacedAnExpiredOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	old := f.claim("client-a", f.start)
	f.lapse(old)
	f.s = NewStore(f.rdb, 30*time.Second, nil)
	fresh := f.claim("client-a", f.start) // same client, same slot, new hold; old's meta is still unswept

	if fresh.HoldID == old.HoldID {
		t.Fatal("expired hold came back instead of a new one")
	}
	if _, err := f.s.Heartbeat(ctx, old.HoldID, "client-a"); !errors.Is(err, ErrGone) {
		t.Fatalf("heartbeat of the expired hold: err = %v, want ErrGone", err)
	}
	if got, _ := f.heldBy(f.start); got != fresh {
		t.Fatalf("slot held by %+v, want the fresh hold", got)
	}
}

func TestPinExtendsToAtLeastThePin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2*time.Second)
	ctx := t.Context()
	h := f.claim("client-a", f.start)

	pinned, err := f.s.Pin(ctx, h.HoldID, "client-a", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(pinned.ExpiresAt); d < 9*time.Second || d > 10*time.Second {
		t.Fatalf("pinned hold expires in %s, want ~10s", d)
	}
	if pttl := f.rdb.PTTL(ctx, h.key()).Val(); pttl < 9*time.Second {
		t.Fatalf("pinned key PTTL %s, want ~10s", pttl)
	}
	if pttl := f.rdb.PTTL(ctx, clientKey(f.clinic, "client-a")).Val(); pttl < 9*time.Second {
		t.Fatalf("client set PTTL %s, want ~10s", pttl)
	}
	if score := f.rdb.ZScore(ctx, expiryKey(f.clinic), h.HoldID).Val(); int64(score) != pinned.ExpiresAt.UnixMilli() {
		t.Fatalf("expiry score %v, want %d", score, pinned.ExpiresAt.UnixMilli())
	}

	// A shorter pin, or a heartbeat, must not shorten it.
	again, err := f.s.Pin(ctx, h.HoldID, "client-a", time.Second)
	if err != nil || again != pinned {
		t.Fatalf("shorter pin = %+v, %v; want the hold unchanged", again, err)
	}
	if beat, err := f.s.Heartbeat(ctx, h.HoldID, "client-a"); err != nil || beat != pinned {
		t.Fatalf("heartbeat = %+v, %v; want the pinned hold unchanged", beat, err)
	}
	if pttl := f.rdb.PTTL(ctx, h.key()).Val(); pttl < 9*time.Second {
		t.Fatalf("PTTL after heartbeat %s, want the pin kept", pttl)
	}
}

func TestPinChecksOwnerAndLiveness(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	h := f.claim("client-a", f.start)

	if _, err := f.s.Pin(ctx, h.HoldID, "client-b", time.Minute); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("pin by another client: err = %v, want ErrNotOwner", err)
	}
	if _, err := f.s.Pin(ctx, "garbage", "client-a", time.Minute); !errors.Is(err, ErrExpired) {
		t.Fatalf("pin of garbage: err = %v, want ErrExpired", err)
	}
	if _, err := f.s.Pin(ctx, newHoldID(f.clinic), "client-a", time.Minute); !errors.Is(err, ErrExpired) {
		t.Fatalf("pin of unknown hold: err = %v, want ErrExpired", err)
	}
	f.lapse(h)
	if _, err := f.s.Pin(ctx, h.HoldID, "client-a", time.Minute); !errors.Is(err, ErrExpired) {
		t.Fatalf("pin after expiry: err = %v, want ErrExpired", err)
	}
}
