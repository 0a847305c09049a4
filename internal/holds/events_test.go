package holds

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

func TestChannelNames(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("550e8400-e29b-41d4-a716-446655440000")
	if got := Channel(id); got != "holds:events:{550e8400-e29b-41d4-a716-446655440000}" {
		t.Errorf("Channel = %s", got)
	}
	if got := ClinicChannel(id); got != "holds:events:clinic:{550e8400-e29b-41d4-a716-446655440000}" {
		t.Errorf("ClinicChannel = %s", got)
	}
}

// expectOnBothChannels reads the next two events and checks they are the
// same event, once on the type's channel and once on the clinic's.
func expectOnBothChannels(t *testing.T, f *fixture, sub *subscription) Event {
	t.Helper()
	a, b := sub.next(2*time.Second), sub.next(2*time.Second)
	if a.Event != b.Event {
		t.Fatalf("the two channels carried different events: %+v and %+v", a.Event, b.Event)
	}
	got := map[string]bool{a.Channel: true, b.Channel: true}
	if !got[Channel(f.atid)] || !got[ClinicChannel(f.clinic)] {
		t.Fatalf("event came on %s and %s, want the type's and the clinic's channel", a.Channel, b.Channel)
	}
	return a.Event
}

func TestHoldHeartbeatAndReleaseArePublishedOnBothChannels(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	ctx := t.Context()
	sub := f.subscribe(Channel(f.atid), ClinicChannel(f.clinic))

	h := f.claim("client-a", f.start)
	if ev := expectOnBothChannels(t, f, sub); ev != published(EventHold, h, "") {
		t.Fatalf("hold event %+v, want %+v", ev, published(EventHold, h, ""))
	}

	beat, err := f.s.Heartbeat(ctx, h.HoldID, "client-a")
	if err != nil {
		t.Fatal(err)
	}
	if ev := expectOnBothChannels(t, f, sub); ev != published(EventHeartbeat, beat, "") {
		t.Fatalf("heartbeat event %+v, want %+v", ev, published(EventHeartbeat, beat, ""))
	}

	if _, err := f.s.Release(ctx, h.HoldID, "client-a"); err != nil {
		t.Fatal(err)
	}
	want := published(EventRelease, beat, ReasonReleased)
	if ev := expectOnBothChannels(t, f, sub); ev != want {
		t.Fatalf("release event %+v, want %+v", ev, want)
	}

	// Failed operations publish nothing (each fails as it should, not
	// for want of Redis).
	if released, err := f.s.Release(ctx, h.HoldID, "client-a"); released || err != nil {
		t.Fatalf("second release: %v, %v; want false, nil", released, err)
	}
	if _, err := f.s.Heartbeat(ctx, h.HoldID, "client-a"); !errors.Is(err, ErrGone) {
		t.Fatalf("heartbeat of a released hold: %v, want ErrGone", err)
	}
	other := f.claim("client-b", f.slot(1))
	expectOnBothChannels(t, f, sub)
	if _, err := f.s.Claim(ctx, f.req("client-c", f.slot(1))); !errors.Is(err, ErrHeld) { // held by b
		t.Fatalf("claim of b's slot: %v, want ErrHeld", err)
	}
	if again, err := f.s.Claim(ctx, f.req("client-b", f.slot(1))); err != nil || again.HoldID != other.HoldID { // a re-click
		t.Fatalf("b's re-click: %+v, %v; want b's hold", again, err)
	}
	if _, err := f.s.Claim(ctx, f.req("client-b", f.slot(2))); !errors.Is(err, ErrQuota) { // over b's quota of one
		t.Fatalf("b's second hold: %v, want ErrQuota", err)
	}
	if _, err := f.s.Release(ctx, other.HoldID, "client-c"); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("c's release of b's hold: %v, want ErrNotOwner", err)
	}
	if evs := sub.upToNow(); len(evs) != 0 {
		t.Fatalf("failed operations published %+v", evs)
	}
}

func TestPublishedConfirmCarriesWhatTheCallerFilledIn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30*time.Second)
	sub := f.subscribe(Channel(f.atid), ClinicChannel(f.clinic))
	ev := Event{Type: EventConfirm, Hold: Hold{
		ClinicID: f.clinic, AppointmentTypeID: f.atid, SpecialistID: f.sp,
		Start: f.start, End: f.start.Add(30 * time.Minute),
	}}
	if err := f.s.Publish(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	if got := expectOnBothChannels(t, f, sub); got != ev {
		t.Fatalf("confirm event %+v, want %+v", got, ev)
	}
	if err := f.s.Publish(t.Context(), Event{Type: EventCancel}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("event without a clinic: err = %v, want ErrInvalid", err)
	}
}

// watchedHold is a fixture with a hold of client-a on f.start, watched on
// both of its channels, its "hold" event already seen.
func watchedHold(t *testing.T) (*fixture, *subscription, Hold) {
	t.Helper()
	f := newFixture(t, 30*time.Second)
	sub := f.subscribe(Channel(f.atid), ClinicChannel(f.clinic))
	h := f.claim("client-a", f.start)
	expectOnBothChannels(t, f, sub)
	return f, sub, h
}

// A booked hold leaves the index and its booking is announced in the same
// step; a plain Consume (a hold lost to another booking) announces nothing.
func TestConsumeBookedPublishesTheConfirm(t *testing.T) {
	t.Parallel()
	f, sub, h := watchedHold(t)
	ctx := t.Context()

	booked := Hold{HoldID: h.HoldID, ClientID: "client-a", ClinicID: f.clinic, AppointmentTypeID: f.atid,
		SpecialistID: h.SpecialistID, Start: h.Start, End: h.End}
	if err := f.s.ConsumeBooked(ctx, booked); err != nil {
		t.Fatal(err)
	}
	if ev, want := expectOnBothChannels(t, f, sub), published(EventConfirm, booked, ""); ev != want {
		t.Fatalf("confirm event %+v, want %+v", ev, want)
	}
	if hs, err := f.s.Active(ctx, f.clinic); err != nil || len(hs) != 0 {
		t.Fatalf("live holds after the booking: %+v, %v", hs, err)
	}
	if _, ok, err := f.s.HeldBy(ctx, f.clinic, f.atid, h.SpecialistID, h.Start); ok || err != nil {
		t.Fatalf("the slot is still held (%v)", err)
	}

	lost := f.claim("client-b", f.slot(1))
	expectOnBothChannels(t, f, sub)
	if err := f.s.Consume(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if evs := sub.upToNow(); len(evs) != 0 {
		t.Fatalf("Consume published %+v", evs)
	}
}

// afterFirstHGet runs fn once, right after the client's first HGET: a
// heartbeat's read of the hold, before its script runs.
type afterFirstHGet struct {
	once *sync.Once
	fn   func()
}

func (a afterFirstHGet) DialHook(next redis.DialHook) redis.DialHook { return next }
func (a afterFirstHGet) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (a afterFirstHGet) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "hget" {
			a.once.Do(a.fn)
		}
		return err
	}
}

// The heartbeat's event, published by its script, tells the hold's real
// expiry: extended, kept (pinned for longer), and changed by someone else
// between the heartbeat's read and its script.
func TestHeartbeatEventTellsTheHoldAsItIs(t *testing.T) {
	t.Parallel()
	f, sub, h := watchedHold(t)
	ctx := t.Context()
	check := func(beat Hold, wantExpiry time.Time) {
		t.Helper()
		if !beat.ExpiresAt.Equal(wantExpiry) {
			t.Fatalf("heartbeat returned expiry %s, want %s", beat.ExpiresAt, wantExpiry)
		}
		if ev, want := expectOnBothChannels(t, f, sub), published(EventHeartbeat, beat, ""); ev != want {
			t.Fatalf("heartbeat event %+v, want %+v", ev, want)
		}
	}

	beat, err := f.s.Heartbeat(ctx, h.HoldID, "client-a")
	if err != nil {
		t.Fatal(err)
	}
	if beat.ExpiresAt.Before(h.ExpiresAt) {
		t.Fatalf("extended to %s from %s", beat.ExpiresAt, h.ExpiresAt)
	}
	check(beat, beat.ExpiresAt)

	pinned, err := f.s.Pin(ctx, h.HoldID, "client-a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	beat, err = f.s.Heartbeat(ctx, h.HoldID, "client-a")
	if err != nil {
		t.Fatal(err)
	}
	check(beat, pinned.ExpiresAt)

	var repinned Hold
	rdb := testkit.Redis(t)
	rdb.AddHook(afterFirstHGet{once: &sync.Once{}, fn: func() {
		if repinned, err = f.s.Pin(ctx, h.HoldID, "client-a", 2*time.Minute); err != nil {
			t.Error(err)
		}
	}})
	beat, err = NewStore(rdb, 30*time.Second, nil).Heartbeat(ctx, h.HoldID, "client-a")
	if err != nil {
		t.Fatal(err)
	}
	check(beat, repinned.ExpiresAt)
}

func TestEventJSONIsFlatWithTypeAndReason(t *testing.T) {
	t.Parallel()
	ev := Event{Type: EventRelease, Reason: ReasonExpired, Hold: Hold{
		HoldID: "h1", ClientID: "c1", ClinicID: uuid.New(), AppointmentTypeID: uuid.New(), SpecialistID: uuid.New(),
		Start:       time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC),
		End:         time.Date(2030, 1, 2, 9, 30, 0, 0, time.UTC),
		ExpiresAt:   time.Date(2030, 1, 2, 8, 0, 30, 123e6, time.UTC),
		BufferAfter: 15 * time.Minute,
	}}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{
		"type": "release", "reason": "expired", "holdId": "h1", "clientHash": ClientHash("c1"), "clientId": nil,
		"slotStartDate": "2030-01-02T09:00:00Z", "holdExpiresAt": "2030-01-02T08:00:30.123Z",
		"bufferBeforeMin": 0.0, "bufferAfterMin": 15.0,
	} {
		if fields[k] != v {
			t.Errorf("%s = %v, want %v (in %s)", k, fields[k], v, b)
		}
	}
	var back Event
	if want := published(ev.Type, ev.Hold, ev.Reason); json.Unmarshal(b, &back) != nil || back != want {
		t.Fatalf("round trip = %+v; want %+v", back, want)
	}

	// A confirm with only some fields leaves the rest out.
	b, _ = json.Marshal(Event{Type: EventConfirm, Hold: Hold{ClinicID: ev.ClinicID}})
	fields = nil
	_ = json.Unmarshal(b, &fields)
	for _, k := range []string{"holdId", "clientId", "specialistId", "slotStartDate", "holdExpiresAt", "reason"} {
		if _, ok := fields[k]; ok {
			t.Errorf("confirm event %s carries an empty %s", b, k)
		}
	}
}

// published is an event as it comes off the wire: the owner's client id
// replaced by its hash.
func published(typ string, h Hold, reason string) Event {
	hash := ClientHash(h.ClientID)
	h.ClientID = ""
	return Event{Type: typ, Hold: h, Reason: reason, ClientHash: hash}
}
