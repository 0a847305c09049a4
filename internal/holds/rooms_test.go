package holds

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

// roomReq is f.req for a type that needs one of rooms, with specialist sp.
func (f *fixture) roomReq(client string, sp uuid.UUID, start time.Time, rooms ...uuid.UUID) ClaimRequest {
	r := f.req(client, start)
	r.SpecialistID, r.Rooms = sp, rooms
	return r
}

// roomMembers is the room index of room, for the test's clinic.
func (f *fixture) roomMembers(room uuid.UUID) []string {
	f.t.Helper()
	f.t.Cleanup(func() { f.rdb.Del(f.t.Context(), roomKey(f.clinic, room)) })
	return f.rdb.ZRange(f.t.Context(), roomKey(f.clinic, room), 0, -1).Val()
}

func TestClaimTakesARoomWithItsSpecialist(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	a, b, c := f.sp, uuid.New(), uuid.New()
	r1, r2 := uuid.New(), uuid.New()
	sub := f.subscribe(ClinicChannel(f.clinic))

	first, err := f.s.Claim(ctx, f.roomReq("client-a", a, f.start, r1, r2))
	if err != nil || first.ResourceID != r1 {
		t.Fatalf("first claim = %+v, %v; want the first room %s", first, err, r1)
	}
	// Another specialist, another type, the same time: the first room is
	// held, the second is given, and the payload, the event and the read
	// all say so.
	other := f.roomReq("client-b", b, f.start, r1, r2)
	other.AppointmentTypeID = uuid.New()
	second, err := f.s.Claim(ctx, other)
	if err != nil || second.ResourceID != r2 {
		t.Fatalf("second claim = %+v, %v; want the second room %s", second, err, r2)
	}
	if got, ok, _ := f.s.HeldBy(ctx, f.clinic, other.AppointmentTypeID, b, f.start); !ok || got.ResourceID != r2 {
		t.Fatalf("the stored hold = %+v, %v; want it with room %s", got, ok, r2)
	}
	evs := sub.upToNow()
	if len(evs) != 2 || evs[0].Event.ResourceID != r1 || evs[1].Event.ResourceID != r2 {
		t.Fatalf("events %+v, want the two holds with their rooms", evs)
	}
	busy, err := f.s.ActiveHolds(ctx, f.clinic)
	if err != nil || len(busy) != 2 {
		t.Fatalf("active %+v, %v", busy, err)
	}
	for _, h := range busy {
		if h.ResourceID == uuid.Nil {
			t.Fatalf("an active hold without its room: %+v", h)
		}
	}

	// Every room held: a third specialist is refused as at a held slot,
	// naming a room's hold, and nothing is written for it.
	_, err = f.s.Claim(ctx, f.roomReq("client-c", c, f.start, r1, r2))
	var he *HeldError
	if !errors.As(err, &he) || he.RetryAfter <= 0 || he.Hold.ResourceID == uuid.Nil {
		t.Fatalf("third claim: %v (%+v), want a *HeldError naming a room's hold", err, he)
	}
	if _, ok, _ := f.s.HeldBy(ctx, f.clinic, f.atid, c, f.start); ok {
		t.Fatal("the refused claim left a hold")
	}
	if m1, m2 := f.roomMembers(r1), f.roomMembers(r2); len(m1) != 1 || len(m2) != 1 {
		t.Fatalf("room indexes %v and %v, want one hold each", m1, m2)
	}

	// The same room at an adjacent time is free: rooms have no buffers.
	next, err := f.s.Claim(ctx, f.roomReq("client-c", c, f.start.Add(30*time.Minute), r1))
	if err != nil || next.ResourceID != r1 {
		t.Fatalf("the next half hour = %+v, %v; want room %s", next, err, r1)
	}
	// Overlapping by a quarter of an hour is not.
	if _, err := f.s.Claim(ctx, f.roomReq("client-d", uuid.New(), f.start.Add(15*time.Minute), r1)); !errors.Is(err, ErrHeld) {
		t.Fatalf("an overlapping time of the room: %v, want ErrHeld", err)
	}
	// A client's own hold of the room does not stand in its way (as with
	// a specialist, the quota counts its holds).
	own := f.roomReq("client-a", c, f.start.Add(-15*time.Minute), r1)
	own.AppointmentTypeID = uuid.New()
	if _, err := f.s.Claim(ctx, own); err != nil {
		t.Fatalf("the client's own room: %v", err)
	}
}

// "Any specialist": the pair is chosen together, a held room refuses
// every candidate, a free room is taken with the first free specialist.
func TestClaimAnyChoosesSpecialistAndRoomTogether(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	a, b := f.sp, uuid.New()
	room, spare := uuid.New(), uuid.New()
	f.claimWith("client-z", a) // a is held, without a room (another type's hold)

	h, err := f.s.ClaimAny(ctx, f.roomReq("client-a", a, f.start, room, spare), []uuid.UUID{a, b})
	if err != nil || h.SpecialistID != b || h.ResourceID != room {
		t.Fatalf("any = %+v, %v; want specialist b with the first room", h, err)
	}
	_, err = f.s.ClaimAny(ctx, f.roomReq("client-b", a, f.start, room), []uuid.UUID{uuid.New(), uuid.New()})
	if !errors.Is(err, ErrHeld) {
		t.Fatalf("free specialists, the only room held: %v, want ErrHeld", err)
	}
}

// Heartbeats keep the room held past the claim's TTL; a release frees it
// at once; a lapsed hold frees it (before and after its sweep); Keep
// makes the room index live as long as the hold.
func TestTheRoomIndexFollowsTheHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10*time.Second)
	ctx := t.Context()
	t0 := time.Now().Add(2 * time.Minute)
	now := f.clock(t0)
	room := uuid.New()
	claim := func(client string) (Hold, error) {
		return f.s.Claim(ctx, f.roomReq(client, uuid.New(), f.start, room))
	}

	h, err := claim("client-a")
	if err != nil {
		t.Fatal(err)
	}
	// Heartbeated at 8 s, the hold lives to 18 s: at 15 s the room is held.
	*now = t0.Add(8 * time.Second)
	f.age(h, time.Second)
	if _, err := f.s.Heartbeat(ctx, h.HoldID, "client-a"); err != nil {
		t.Fatal(err)
	}
	*now = t0.Add(15 * time.Second)
	if _, err := claim("client-b"); !errors.Is(err, ErrHeld) {
		t.Fatalf("after a heartbeat: %v, want ErrHeld", err)
	}
	// Released: the room is free at once, for anyone.
	if ok, err := f.s.Release(ctx, h.HoldID, "client-a"); !ok || err != nil {
		t.Fatalf("release: %v %v", ok, err)
	}
	b, err := claim("client-b")
	if err != nil || b.ResourceID != room {
		t.Fatalf("after the release: %+v, %v", b, err)
	}
	if m := f.roomMembers(room); len(m) != 1 {
		t.Fatalf("room index %v, want the new hold alone (the released one pruned)", m)
	}

	// Lapsed (its expiry passed on the store's clock, its key gone), not
	// yet swept: the room is free; the sweep then finds the lapsed hold
	// and the new one keeps the room.
	f.lapse(b)
	*now = t0.Add(30 * time.Second)
	c, err := claim("client-c")
	if err != nil || c.ResourceID != room {
		t.Fatalf("after the lapse: %+v, %v", c, err)
	}
	f.hideFromGlobalSweepers()
	if n, err := f.s.SweepClinic(ctx, f.clinic); n != 1 || err != nil {
		t.Fatalf("sweep = %d, %v; want the lapsed hold", n, err)
	}
	if _, err := claim("client-d"); !errors.Is(err, ErrHeld) {
		t.Fatalf("after the sweep: %v, want the room still held by the new hold", err)
	}
	if m := f.roomMembers(room); len(m) != 1 {
		t.Fatalf("room index %v, want the live hold alone", m)
	}

	// Keep carries the room index as far as the hold, and a minute more.
	until := now.Add(time.Hour)
	if _, err := f.s.Keep(ctx, c.HoldID, "client-c", until); err != nil {
		t.Fatal(err)
	}
	if ttl := f.rdb.PTTL(ctx, roomKey(f.clinic, room)).Val(); ttl < time.Hour {
		t.Fatalf("the room index lives %s, want at least the kept hour", ttl)
	}
}

// Twelve clients at a barrier on one time of the one room, with three
// specialists: one hold, eleven refusals.
func TestTwelveClientsOneRoomThreeSpecialistsOneHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	room := uuid.New()
	sps := []uuid.UUID{f.sp, uuid.New(), uuid.New()}
	errs := testkit.Race(12, func(i int) error {
		_, err := f.s.Claim(ctx, f.roomReq(fmt.Sprintf("client-%d", i), sps[i%3], f.start, room))
		return err
	})
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrHeld):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d holds, want 1", wins)
	}
	if m := f.roomMembers(room); len(m) != 1 {
		t.Fatalf("room index %v, want one hold", m)
	}
}

func TestClaimRefusesBadRooms(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	for _, rooms := range [][]uuid.UUID{{uuid.Nil}, make([]uuid.UUID, maxRooms+1)} {
		if _, err := f.s.Claim(t.Context(), f.roomReq("client-a", f.sp, f.start, rooms...)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%d rooms: %v, want ErrInvalid", len(rooms), err)
		}
	}
}
