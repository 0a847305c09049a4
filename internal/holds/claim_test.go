package holds

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
)

func TestClaimStoresTheHoldWithItsTTLAndIndexes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	before := time.Now()

	h := f.claim("client-a", f.start)

	if clinic, ok := ParseHoldID(h.HoldID); !ok || clinic != f.clinic {
		t.Fatalf("hold id %q does not encode clinic %s", h.HoldID, f.clinic)
	}
	want := Hold{
		HoldID: h.HoldID, ClientID: "client-a", ClinicID: f.clinic, AppointmentTypeID: f.atid, SpecialistID: f.sp,
		Start: f.start, End: f.start.Add(30 * time.Minute), ExpiresAt: h.ExpiresAt, KeepUntil: h.KeepUntil,
		BufferBefore: 5 * time.Minute, BufferAfter: 10 * time.Minute,
	}
	if h != want {
		t.Fatalf("claim returned %+v, want %+v", h, want)
	}
	if d := h.ExpiresAt.Sub(before); d < 29*time.Second || d > 31*time.Second {
		t.Fatalf("expires %s after the claim, want about 30s", d)
	}
	if d := h.KeepUntil.Sub(before); d < DefaultMaxLife-time.Second || d > DefaultMaxLife+time.Second {
		t.Fatalf("kept until %s after the claim, want about %s", d, DefaultMaxLife)
	}

	got, ok := f.heldBy(f.start)
	if !ok || got != h {
		t.Fatalf("HeldBy = %+v, %v; want the claimed hold", got, ok)
	}
	for _, key := range []string{h.key(), clientKey(f.clinic, "client-a")} {
		if pttl := f.rdb.PTTL(ctx, key).Val(); pttl <= 0 || pttl > 30*time.Second {
			t.Fatalf("PTTL %s = %s, want (0, 30s]", key, pttl)
		}
	}
	if score := f.rdb.ZScore(ctx, expiryKey(f.clinic), h.HoldID).Val(); int64(score) != h.ExpiresAt.UnixMilli() {
		t.Fatalf("expiry score %v, want %d", score, h.ExpiresAt.UnixMilli())
	}
	if meta, expiry, client := f.indexed(h); !meta || !expiry || !client {
		t.Fatalf("indexed: meta %v expiry %v client %v", meta, expiry, client)
	}
	if !f.rdb.SIsMember(ctx, clinicsKey, f.clinic.String()).Val() {
		t.Fatal("clinic not registered in holds:clinics")
	}

	active, err := f.s.Active(ctx, f.clinic)
	if err != nil || len(active) != 1 || active[0] != h {
		t.Fatalf("Active = %+v, %v; want [the hold]", active, err)
	}
	busy, err := f.s.ActiveHolds(ctx, f.clinic)
	wantBusy := availability.Busy{SpecialistID: f.sp, Start: h.Start, End: h.End, BufferBefore: 5 * time.Minute, BufferAfter: 10 * time.Minute}
	if err != nil || len(busy) != 1 || busy[0] != wantBusy {
		t.Fatalf("ActiveHolds = %+v, %v; want [%+v]", busy, err, wantBusy)
	}
}

func TestPayloadUsesTheDocumentedFieldNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	h := f.claim("client-a", f.start)

	raw := f.rdb.Get(t.Context(), h.key()).Val()
	var fields map[string]any
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"holdId": h.HoldID, "clientId": "client-a", "clinicId": f.clinic.String(),
		"appointmentTypeId": f.atid.String(), "specialistId": f.sp.String(),
		"slotStartDate": "2030-03-15T09:00:00Z", "slotEndDate": "2030-03-15T09:30:00Z",
		"holdExpiresAt":   h.ExpiresAt.Format(time.RFC3339Nano),
		"holdKeepUntil":   h.KeepUntil.Format(time.RFC3339Nano),
		"bufferBeforeMin": 5.0, "bufferAfterMin": 10.0,
	}
	if len(fields) != len(want) {
		t.Fatalf("payload %s has fields %v, want %v", raw, fields, want)
	}
	for k, v := range want {
		if fields[k] != v {
			t.Errorf("payload %s = %v, want %v", k, fields[k], v)
		}
	}
	if meta := f.rdb.HGet(t.Context(), metaKey(f.clinic), h.HoldID).Val(); meta != raw {
		t.Fatalf("meta payload %s differs from the key's %s", meta, raw)
	}
}

func TestClaimOfOwnSlotReturnsTheSameHoldAndDuplicatesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	sub := f.subscribe(ClinicChannel(f.clinic))

	first := f.claim("client-a", f.start)
	again := f.claim("client-a", f.start) // quota 1 is already used by first: the re-click must not be ErrQuota

	if again != first {
		t.Fatalf("re-claim returned %+v, want %+v", again, first)
	}
	if n := f.rdb.HLen(ctx, metaKey(f.clinic)).Val(); n != 1 {
		t.Fatalf("%d meta entries, want 1", n)
	}
	if n := f.rdb.ZCard(ctx, expiryKey(f.clinic)).Val(); n != 1 {
		t.Fatalf("%d expiry entries, want 1", n)
	}
	if n := f.rdb.SCard(ctx, clientKey(f.clinic, "client-a")).Val(); n != 1 {
		t.Fatalf("%d client set members, want 1", n)
	}
	evs := sub.upToNow()
	if len(evs) != 1 || evs[0].Event.Type != EventHold {
		t.Fatalf("events %+v, want one hold event", evs)
	}
}

func TestClaimOfAnotherClientsSlotIsHeldErrorWithRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	first := f.claim("client-a", f.start)

	_, err := f.s.Claim(t.Context(), f.req("client-b", f.start))
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("err = %v, want *HeldError", err)
	}
	if held.RetryAfter <= 25*time.Second || held.RetryAfter > 30*time.Second {
		t.Fatalf("RetryAfter = %s, want the remaining TTL (~30s)", held.RetryAfter)
	}
	if held.Hold != first {
		t.Fatalf("HeldError.Hold = %+v, want %+v", held.Hold, first)
	}
	if got, _ := f.heldBy(f.start); got != first {
		t.Fatalf("slot now held by %+v, want the first hold", got)
	}
}

func TestClaimRejectsMalformedRequests(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	cases := map[string]func(*ClaimRequest){
		"empty client":       func(r *ClaimRequest) { r.ClientID = "" },
		"huge client":        func(r *ClaimRequest) { r.ClientID = string(make([]byte, 201)) },
		"nil clinic":         func(r *ClaimRequest) { r.ClinicID = uuid.Nil },
		"nil type":           func(r *ClaimRequest) { r.AppointmentTypeID = uuid.Nil },
		"nil specialist":     func(r *ClaimRequest) { r.SpecialistID = uuid.Nil },
		"end before start":   func(r *ClaimRequest) { r.End = r.Start.Add(-time.Minute) },
		"empty slot":         func(r *ClaimRequest) { r.End = r.Start },
		"negative buffer":    func(r *ClaimRequest) { r.BufferAfter = -time.Minute },
		"zero start and end": func(r *ClaimRequest) { r.Start, r.End = time.Time{}, time.Time{} },
	}
	for name, mutate := range cases {
		r := f.req("client-a", f.start)
		mutate(&r)
		if _, err := f.s.Claim(t.Context(), r); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestQuotaCountsLiveHoldsOfTheSameTypeOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	first := f.claim("client-a", f.slot(0))

	if _, err := f.s.Claim(ctx, f.req("client-a", f.slot(1))); !errors.Is(err, ErrQuota) {
		t.Fatalf("second hold of the type: err = %v, want ErrQuota", err)
	}
	other := f.req("client-a", f.slot(1))
	other.AppointmentTypeID = uuid.New()
	if _, err := f.s.Claim(ctx, other); err != nil {
		t.Fatalf("hold of another type: %v", err)
	}
	if _, err := f.s.Claim(ctx, f.req("client-b", f.slot(3))); err != nil {
		t.Fatalf("another client's hold: %v", err)
	}
	if ok, err := f.s.Release(ctx, first.HoldID, "client-a"); !ok || err != nil {
		t.Fatalf("release = %v, %v", ok, err)
	}
	if _, err := f.s.Claim(ctx, f.req("client-a", f.slot(2))); err != nil {
		t.Fatalf("after releasing, the quota should be free: %v", err)
	}
}

func TestQuotaBelowOneCountsAsOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	r := f.req("client-a", f.slot(0))
	r.Quota = 0
	if _, err := f.s.Claim(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	r.Start, r.End = f.slot(1), f.slot(2)
	if _, err := f.s.Claim(t.Context(), r); !errors.Is(err, ErrQuota) {
		t.Fatalf("err = %v, want ErrQuota", err)
	}
}

func TestQuotaAndActiveFollowTheStoresClock(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	f.claim("client-a", f.slot(0))

	// An hour later by the store's clock every score is in the past: the
	// hold no longer counts, though its key (on Redis' clock) still exists.
	f.s.now = func() time.Time { return time.Now().Add(time.Hour) }
	if active, err := f.s.Active(ctx, f.clinic); err != nil || len(active) != 0 {
		t.Fatalf("Active = %+v, %v; want none", active, err)
	}
	if _, err := f.s.Claim(ctx, f.req("client-a", f.slot(1))); err != nil {
		t.Fatalf("claim with the old hold expired by score: %v", err)
	}
}

func TestActiveListsOnlyThisClinicsLiveHoldsInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	g := newFixture(t, 30*time.Second) // another clinic
	ctx := t.Context()
	later := f.claim("client-a", f.slot(3))
	earlier := f.claim("client-b", f.slot(1))
	g.claim("client-c", g.slot(2))

	active, err := f.s.Active(ctx, f.clinic)
	if err != nil || len(active) != 2 || active[0] != earlier || active[1] != later {
		t.Fatalf("Active = %+v, %v; want [earlier later]", active, err)
	}
	if active, err := f.s.Active(ctx, uuid.New()); err != nil || len(active) != 0 {
		t.Fatalf("unknown clinic has holds %+v (%v)", active, err)
	}
}

func TestHeldByAnUnheldSlotIsFalse(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	f.claim("client-a", f.slot(0))
	if h, ok := f.heldBy(f.slot(1)); ok {
		t.Fatalf("free slot held by %+v", h)
	}
}

// The claim goes with the clinic's registration in one pipeline, as
// EVALSHA: after Redis forgets its scripts (a restart, SCRIPT FLUSH) a
// claim still works, and the clinic is registered for the sweeper either way.
func TestClaimAfterRedisForgotTheScript(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	if err := f.rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	h := f.claim("client-a", f.start)
	if got, ok, err := f.s.HeldBy(ctx, f.clinic, f.atid, f.sp, f.start); err != nil || !ok || got.HoldID != h.HoldID {
		t.Fatalf("held by %+v (%v, %v), want %s", got, ok, err, h.HoldID)
	}
	if ok, err := f.rdb.SIsMember(ctx, clinicsKey, f.clinic.String()).Result(); err != nil || !ok {
		t.Fatalf("clinic registered for the sweeper: %v, %v", ok, err)
	}
}
