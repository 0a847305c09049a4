package holds

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

// fixture is one test's own clinic, type and specialist on the shared test
// Redis: unique ids keep parallel tests (and earlier runs) apart.
type fixture struct {
	t      *testing.T
	rdb    redis.UniversalClient
	s      *Store
	clinic uuid.UUID
	atid   uuid.UUID
	sp     uuid.UUID
	start  time.Time // a slot start; slot(i) gives others
}

func newFixture(t *testing.T, ttl time.Duration) *fixture {
	t.Helper()
	rdb := testkit.Redis(t)
	f := &fixture{
		t:      t,
		rdb:    rdb,
		s:      NewStore(rdb, ttl, nil),
		clinic: uuid.New(),
		atid:   uuid.New(),
		sp:     uuid.New(),
		start:  time.Date(2030, 3, 15, 9, 0, 0, 0, time.UTC),
	}
	t.Cleanup(f.cleanup)
	return f
}

// cleanup removes what this test's clinic left in the shared database, so
// repeated runs do not grow holds:clinics or leave holds for later sweeps.
func (f *fixture) cleanup() {
	ctx := context.Background()
	meta, _ := f.rdb.HGetAll(ctx, metaKey(f.clinic)).Result()
	keys := []string{metaKey(f.clinic), expiryKey(f.clinic), specialistKey(f.clinic, f.sp), registeredKey(f.clinic)}
	for _, raw := range meta {
		if h, err := decodeHold(raw); err == nil {
			keys = append(keys, h.key(), clientKey(h.ClinicID, h.ClientID))
		}
	}
	f.rdb.Del(ctx, keys...)
	f.rdb.SRem(ctx, clinicsKey, f.clinic.String())
}

// hideFromGlobalSweepers takes the clinic out of holds:clinics, so that
// Sweep in other test processes sharing the database (or this binary's
// non-parallel sweep tests) cannot release its holds: a test that counts
// what its own SweepClinic calls release needs to be the only sweeper.
// Call it after the last claim (a claim registers the clinic again).
func (f *fixture) hideFromGlobalSweepers() {
	f.t.Helper()
	if err := f.rdb.SRem(f.t.Context(), clinicsKey, f.clinic.String()).Err(); err != nil {
		f.t.Fatal(err)
	}
}

// slot(i) is an hour after slot(i-1): the 30-minute slots of req with
// their buffers (5 and 10 minutes) do not overlap, so different clients
// can hold them side by side.
func (f *fixture) slot(i int) time.Time { return f.start.Add(time.Duration(i) * time.Hour) }

func (f *fixture) req(client string, start time.Time) ClaimRequest {
	return ClaimRequest{
		ClientID:          client,
		ClinicID:          f.clinic,
		AppointmentTypeID: f.atid,
		SpecialistID:      f.sp,
		Start:             start,
		End:               start.Add(30 * time.Minute),
		BufferBefore:      5 * time.Minute,
		BufferAfter:       10 * time.Minute,
		Quota:             1,
	}
}

func (f *fixture) claim(client string, start time.Time) Hold {
	f.t.Helper()
	h, err := f.s.Claim(f.t.Context(), f.req(client, start))
	if err != nil {
		f.t.Fatalf("claim %s %s: %v", client, start, err)
	}
	return h
}

func (f *fixture) heldBy(start time.Time) (Hold, bool) {
	f.t.Helper()
	h, ok, err := f.s.HeldBy(f.t.Context(), f.clinic, f.atid, f.sp, start)
	if err != nil {
		f.t.Fatalf("held by: %v", err)
	}
	return h, ok
}

// indexed reports whether the hold is in the meta hash, the expiry index
// and its client's set.
func (f *fixture) indexed(h Hold) (meta, expiry, client bool) {
	f.t.Helper()
	ctx := f.t.Context()
	meta = f.rdb.HExists(ctx, metaKey(f.clinic), h.HoldID).Val()
	expiry = f.rdb.ZScore(ctx, expiryKey(f.clinic), h.HoldID).Err() == nil
	client = f.rdb.SIsMember(ctx, clientKey(f.clinic, h.ClientID), h.HoldID).Val()
	return meta, expiry, client
}

// subscription collects events from channels, remembering which channel
// each came on.
type subscription struct {
	t        *testing.T
	pub      redis.Cmdable // where the store publishes the fixture clinic's events
	channels []string
	ps       *redis.PubSub
	ch       <-chan *redis.Message
}

type received struct {
	Channel string
	Event   Event
}

func (f *fixture) subscribe(channels ...string) *subscription {
	f.t.Helper()
	ps := f.rdb.Subscribe(context.Background(), channels...)
	f.t.Cleanup(func() { _ = ps.Close() })
	// Wait for every subscription to be confirmed, or early events are lost.
	for range channels {
		if _, err := ps.Receive(f.t.Context()); err != nil {
			f.t.Fatalf("subscribe: %v", err)
		}
	}
	sub := &subscription{t: f.t, pub: f.s.publisher(f.t.Context(), f.clinic), channels: channels, ps: ps, ch: ps.Channel()}
	// On a Redis Cluster, events published on another node before the
	// subscription (the test's own claim) may still be on their way to
	// this one: read past them, so a subscription hears only what follows.
	sub.upToNow()
	return sub
}

// next returns the next event, failing the test after timeout.
func (s *subscription) next(timeout time.Duration) received {
	s.t.Helper()
	select {
	case m := <-s.ch:
		var ev Event
		if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
			s.t.Fatalf("event %q: %v", m.Payload, err)
		}
		return received{Channel: m.Channel, Event: ev}
	case <-time.After(timeout):
		s.t.Fatalf("no event within %s", timeout)
		return received{}
	}
}

// eventMarker is the type of the marker events upToNow publishes.
const eventMarker = "test-marker"

// upToNow returns every event published on the subscription's channels
// before the call, without waiting to see that nothing more comes: it
// publishes a marker on each channel and reads up to the markers. Redis
// delivers one subscription's messages in the order they were published,
// so whatever an earlier call published arrives before them. (On a Redis
// Cluster that holds for messages published on one node: the markers go
// where the store publishes the clinic's events.)
func (s *subscription) upToNow() []received {
	s.t.Helper()
	marker, err := json.Marshal(Event{Type: eventMarker})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, ch := range s.channels {
		if err := s.pub.Publish(s.t.Context(), ch, marker).Err(); err != nil {
			s.t.Fatal(err)
		}
	}
	var out []received
	for seen := 0; seen < len(s.channels); {
		r := s.next(5 * time.Second)
		if r.Event.Type == eventMarker {
			seen++
			continue
		}
		out = append(out, r)
	}
	return out
}

// clock gives the store a clock the test moves, from start on. Redis still
// expires keys on its own clock: a test that needs a key gone waits for it
// (waitLapsed), one that needs it kept gives the store a long TTL.
func (f *fixture) clock(start time.Time) *time.Time {
	now := start
	f.s.now = func() time.Time { return now }
	return &now
}

// waitLapsed waits (real time) until the slot's hold key is gone.
func (f *fixture) waitLapsed(start time.Time) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := f.heldBy(start); !ok {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatal("the hold did not lapse")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lapse makes h lapse now, as Redis would at the end of its TTL: its key
// and its client set expire in a millisecond (tests keep TTLs of seconds,
// so nothing else can lapse before the test means it to), and the test
// waits until the key is gone.
func (f *fixture) lapse(h Hold) {
	f.t.Helper()
	f.age(h, time.Millisecond)
	f.waitLapsed(h.Start)
	// The client set was aged a moment after the key: wait for it too.
	testkit.WaitFor(f.t, 5*time.Second, "the client set to expire", func() bool {
		return f.rdb.Exists(f.t.Context(), clientKey(h.ClinicID, h.ClientID)).Val() == 0
	})
}

// age sets what Redis has left of h's key and its client set to left, as
// its clock would show after the rest of the TTL: a heartbeat extends only
// a key with less than a TTL left.
func (f *fixture) age(h Hold, left time.Duration) {
	f.t.Helper()
	for _, k := range []string{h.key(), clientKey(h.ClinicID, h.ClientID)} {
		if err := f.rdb.PExpire(f.t.Context(), k, left).Err(); err != nil {
			f.t.Fatal(err)
		}
	}
}
