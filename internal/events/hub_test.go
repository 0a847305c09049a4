package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

const wait = 5 * time.Second

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// redisNamed is a client of the test Redis whose connections carry name,
// so a test can find (and cut) exactly its own connections.
func redisNamed(t *testing.T, name string) redis.UniversalClient {
	t.Helper()
	base := testkit.Redis(t).(*redis.Client).Options()
	opt := *base
	opt.ClientName = name
	c := redis.NewClient(&opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// running is a hub on the test Redis whose Run loop runs until the end of
// the test, once it is subscribed.
func running(t *testing.T, rdb redis.UniversalClient, m *events.Metrics) *events.Hub {
	t.Helper()
	if rdb == nil {
		rdb = testkit.Redis(t)
	}
	h := events.NewHub(rdb, quietLog, m)
	ctx, cancel := context.WithCancel(context.Background())
	go h.Run(ctx)
	t.Cleanup(cancel) // TestHubRunReturnsOnceItsContextEnds checks that this stops it
	select {
	case <-h.Ready():
	case <-time.After(wait):
		t.Fatal("hub not ready")
	}
	return h
}

func holdEvent(clinicID, typeID uuid.UUID, n int) *holds.Event {
	return &holds.Event{Type: holds.EventHold, Hold: holds.Hold{
		HoldID: fmt.Sprintf("h%03d", n), ClinicID: clinicID, AppointmentTypeID: typeID,
		Start: time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute),
	}}
}

// recv is the next item of s, failing after d.
func recv(t *testing.T, s *events.Sub, d time.Duration, what string) events.Item {
	t.Helper()
	select {
	case it := <-s.C:
		return it
	case <-s.Done():
		// Items queued before the end still count.
		select {
		case it := <-s.C:
			return it
		default:
		}
		t.Fatalf("subscription ended (%s) while waiting for %s", s.Reason(), what)
	case <-time.After(d):
		t.Fatalf("nothing within %s while waiting for %s", d, what)
	}
	return events.Item{}
}

// settled returns once every hub has handled what was published to Redis
// before the call. A hub reads its one subscription in Redis's order, so
// when a marker published now reaches a hub, every earlier message (an
// event, a stream's "open" notice) has been handled by it: this replaces
// waiting a while to see that nothing happens.
func settled(t *testing.T, rdb redis.UniversalClient, hubs ...*events.Hub) {
	t.Helper()
	ctx := context.Background()
	clinic := uuid.New()
	markers := make([]*events.Sub, len(hubs))
	for i, h := range hubs {
		markers[i] = h.Subscribe(ctx, []string{events.ClinicKey(clinic)}, "", 1)
		defer h.Unsubscribe(markers[i])
	}
	raw, err := json.Marshal(holdEvent(clinic, uuid.New(), 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Publish(ctx, holds.ClinicChannel(clinic), raw).Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range markers {
		recv(t, s, wait, "the marker")
	}
}

func ended(t *testing.T, s *events.Sub, reason string) {
	t.Helper()
	select {
	case <-s.Done():
		if s.Reason() != reason {
			t.Fatalf("ended with %q, want %q", s.Reason(), reason)
		}
	case <-time.After(wait):
		t.Fatalf("still open, want it ended with %q", reason)
	}
}

func open(t *testing.T, s *events.Sub, what string) {
	t.Helper()
	select {
	case <-s.Done():
		t.Fatalf("%s ended (%s), want it open", what, s.Reason())
	default:
	}
	if s.Reason() != "" {
		t.Fatalf("%s has reason %q while open", what, s.Reason())
	}
}

func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			total := 0.0
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
			return total
		}
	}
	return 0
}

func TestHubCutsASlowSubscriberWithoutDelayingAFastOne(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := events.NewHub(testkit.Redis(t), quietLog, events.NewMetrics(reg))
	ctx := context.Background()
	clinic, typ := uuid.New(), uuid.New()
	slow := h.Subscribe(ctx, []string{events.TypeKey(typ)}, "", 2) // never read
	fast := h.Subscribe(ctx, []string{events.TypeKey(typ)}, "", 64)
	byClinic := h.Subscribe(ctx, []string{events.ClinicKey(clinic)}, "", 64)

	got := make(chan []string, 2)
	read := func(s *events.Sub) {
		var ids []string
		for len(ids) < 50 {
			select {
			case it := <-s.C:
				ids = append(ids, it.Event.HoldID)
			case <-time.After(wait):
				got <- ids
				return
			}
		}
		got <- ids
	}
	go read(fast)
	go read(byClinic)

	// The slow subscriber never reads: a Publish that waited for it would
	// never return. The deadline only bounds that hang.
	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range 50 {
			h.Publish(holdEvent(clinic, typ, i))
		}
	}()
	select {
	case <-published:
	case <-time.After(wait):
		t.Fatal("publishing 50 events did not return: Publish must never wait for a subscriber")
	}
	for range 2 {
		ids := <-got
		if len(ids) != 50 {
			t.Fatalf("a fast subscriber got %d of 50 events", len(ids))
		}
		for i, id := range ids {
			if id != fmt.Sprintf("h%03d", i) {
				t.Fatalf("event %d is %s: out of order", i, id)
			}
		}
	}
	open(t, fast, "fast subscriber")
	open(t, byClinic, "clinic subscriber")

	ended(t, slow, events.ReasonSendFailed)
	// What it had buffered is still there, and nothing after the cut.
	if n := len(slow.C); n != 2 {
		t.Fatalf("slow subscriber holds %d items, want its 2 buffered", n)
	}
	if c := h.Counts(); c["type"] != 1 || c["clinic"] != 1 {
		t.Fatalf("open subscriptions %v: the cut one must be removed", c)
	}
	if n := counter(t, reg, "clinic_events_delivered_total"); n != 102 {
		t.Fatalf("delivered %v, want 50+50+2", n)
	}
}

func TestHubShutdownEndsEverySubscriptionWithServerShutdownAndRefusesNewOnes(t *testing.T) {
	t.Parallel()
	h := running(t, nil, nil)
	ctx := context.Background()
	clinic, typ := uuid.New(), uuid.New()
	subs := []*events.Sub{
		h.Subscribe(ctx, []string{events.TypeKey(typ)}, "", 4),
		h.Subscribe(ctx, []string{events.ClinicKey(clinic)}, "", 4),
		h.Subscribe(ctx, []string{events.TypeKey(typ)}, "client-"+uuid.NewString(), 4),
	}
	h.Shutdown()
	for _, s := range subs {
		ended(t, s, events.ReasonServerShutdown)
	}
	if c := h.Counts(); len(c) != 0 {
		t.Fatalf("subscriptions left after shutdown: %v", c)
	}
	late := h.Subscribe(ctx, []string{events.TypeKey(typ)}, "client-"+uuid.NewString(), 4)
	select {
	case <-late.Done():
	default:
		t.Fatal("a subscription after shutdown must come back already ended")
	}
	if late.Reason() != events.ReasonServerShutdown {
		t.Fatalf("late subscription reason %q", late.Reason())
	}
	h.Publish(holdEvent(clinic, typ, 1)) // reaches no one, blocks nothing
	if len(late.C) != 0 {
		t.Fatal("an ended subscription got an event")
	}
}

func TestHubSecondSubscriptionOfAClientReplacesTheFirst(t *testing.T) {
	t.Parallel()
	h := running(t, nil, nil)
	ctx := context.Background()
	typ := uuid.New()
	client := "client-" + uuid.NewString()
	bystander := h.Subscribe(ctx, []string{events.TypeKey(typ)}, "client-"+uuid.NewString(), 4)
	anonymous := h.Subscribe(ctx, []string{events.TypeKey(typ)}, "", 4)
	rdb := testkit.Redis(t)
	first := h.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4)
	settled(t, rdb, h) // its announcement has gone round
	second := h.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4)
	ended(t, first, events.ReasonReplaced)
	settled(t, rdb, h) // the second's own announcement has come back
	open(t, second, "the replacing subscription")
	open(t, bystander, "another client's subscription")
	open(t, anonymous, "a subscription without client")
	if first.ConnID() == second.ConnID() || first.ConnID() == "" {
		t.Fatal("every subscription has its own connection id")
	}
	if c := h.Counts(); c["type"] != 3 {
		t.Fatalf("open subscriptions %v, want 3", c)
	}
}

// A browser that reconnects at once opens its new stream before the hub
// has read the announcement of the old one; that late announcement must
// not end the new stream, which is the client's one stream now.
func TestHubStaleAnnouncementOfAReplacedStreamDoesNotEndItsSuccessor(t *testing.T) {
	t.Parallel()
	rdb := testkit.Redis(t)
	h := running(t, rdb, nil)
	ctx := context.Background()
	typ := uuid.New()
	for i := range 30 {
		client := fmt.Sprintf("quick-%d-%s", i, uuid.NewString())
		first := h.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4)
		second := h.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4)
		ended(t, first, events.ReasonReplaced)
		settled(t, rdb, h) // both announcements have come back
		open(t, second, fmt.Sprintf("round %d: the newer subscription", i))
		h.Unsubscribe(second)
		second.End()
	}
}

func TestHubRunDispatchesRedisEventsToTypeAndClinicSubscriptions(t *testing.T) {
	t.Parallel()
	rdb := testkit.Redis(t)
	h := running(t, rdb, nil)
	ctx := context.Background()
	clinic, typ, otherType := uuid.New(), uuid.New(), uuid.New()
	byType := h.Subscribe(ctx, []string{events.TypeKey(typ)}, "", 8)
	byClinic := h.Subscribe(ctx, []string{events.ClinicKey(clinic)}, "", 8)
	byOtherType := h.Subscribe(ctx, []string{events.TypeKey(otherType)}, "", 8)
	otherClinic := uuid.New()
	byOtherClinic := h.Subscribe(ctx, []string{events.ClinicKey(otherClinic)}, "", 8)

	ev := holdEvent(clinic, typ, 7)
	ev.ClientID = "owner-" + uuid.NewString()
	ev.ExpiresAt = time.Now().Add(30 * time.Second).Truncate(time.Millisecond)
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Publish(ctx, holds.ClinicChannel(clinic), raw).Err(); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*events.Sub{"type": byType, "clinic": byClinic} {
		it := recv(t, s, wait, name+" subscription's event")
		if it.Resync || it.Event == nil {
			t.Fatalf("%s: got %+v, want the event", name, it)
		}
		got := it.Event
		if got.Type != holds.EventHold || got.HoldID != ev.HoldID || got.ClinicID != clinic || got.AppointmentTypeID != typ ||
			!got.Start.Equal(ev.Start) || !got.ExpiresAt.Equal(ev.ExpiresAt) {
			t.Fatalf("%s: got %+v, want %+v", name, got, ev)
		}
		if got.ClientID != "" || got.ClientHash != holds.ClientHash(ev.ClientID) {
			t.Fatalf("%s: the owner travels as its hash only: id %q hash %q", name, got.ClientID, got.ClientHash)
		}
	}

	// The store publishes each event on the type's channel and the clinic's:
	// each subscription still gets it once.
	store := holds.NewStore(rdb, time.Minute, quietLog)
	second := holdEvent(clinic, typ, 8)
	if err := store.Publish(ctx, *second); err != nil {
		t.Fatal(err)
	}
	marker := holdEvent(clinic, otherType, 9)
	if err := store.Publish(ctx, *marker); err != nil {
		t.Fatal(err)
	}
	if it := recv(t, byType, wait, "second event"); it.Event.HoldID != second.HoldID {
		t.Fatalf("type subscription got %s, want %s", it.Event.HoldID, second.HoldID)
	}
	for _, want := range []string{second.HoldID, marker.HoldID} {
		if it := recv(t, byClinic, wait, want); it.Event.HoldID != want {
			t.Fatalf("clinic subscription got %s, want %s (each event once, in order)", it.Event.HoldID, want)
		}
	}
	if it := recv(t, byOtherType, wait, "marker"); it.Event.HoldID != marker.HoldID {
		t.Fatalf("another type's subscription got %s: only its own type's events reach it", it.Event.HoldID)
	}
	// Nothing else came: the next item of each subscription is the last
	// event published, one its keys match.
	last := holdEvent(clinic, typ, 10)
	lastOther := holdEvent(otherClinic, otherType, 11)
	for _, ev := range []*holds.Event{last, lastOther} {
		if err := store.Publish(ctx, *ev); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]struct {
		s    *events.Sub
		want string
	}{
		"type": {byType, last.HoldID}, "clinic": {byClinic, last.HoldID},
		"other type": {byOtherType, lastOther.HoldID}, "other clinic": {byOtherClinic, lastOther.HoldID},
	} {
		if it := recv(t, c.s, wait, "the last event"); it.Event == nil || it.Event.HoldID != c.want {
			t.Fatalf("%s subscription got %+v before the last event %s", name, it, c.want)
		}
	}
}

func TestHubReplacesAClientsStreamAcrossInstances(t *testing.T) {
	t.Parallel()
	rdb := testkit.Redis(t)
	a := running(t, testkit.Redis(t), nil)
	b := running(t, testkit.Redis(t), nil)
	ctx := context.Background()
	typ := uuid.New()

	t.Run("AStreamOnBEndsTheClientsStreamOnA", func(t *testing.T) {
		client := "roaming-" + uuid.NewString()
		onA := a.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4)
		settled(t, rdb, a, b) // onA's announcement has gone round
		onB := b.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4)
		ended(t, onA, events.ReasonReplaced)
		settled(t, rdb, a, b) // onB's too
		open(t, onB, "the stream on B")
	})

	// Two tabs of one browser open at the same moment on two instances:
	// one of them must stay, whichever Redis ordered last.
	t.Run("SimultaneousOpensLeaveOneStream", func(t *testing.T) {
		for i := range 10 {
			client := fmt.Sprintf("twin-%d-%s", i, uuid.NewString())
			var onA, onB *events.Sub
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); onA = a.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4) }()
			go func() { defer wg.Done(); onB = b.Subscribe(ctx, []string{events.TypeKey(typ)}, client, 4) }()
			wg.Wait()
			settled(t, rdb, a, b) // both hubs have had both announcements
			alive := 0
			for _, s := range []*events.Sub{onA, onB} {
				select {
				case <-s.Done():
					if s.Reason() != events.ReasonReplaced {
						t.Fatalf("round %d: ended with %q", i, s.Reason())
					}
				default:
					alive++
				}
			}
			if alive != 1 {
				t.Fatalf("round %d: %d streams of the client left open, want exactly 1", i, alive)
			}
			for _, s := range []*events.Sub{onA, onB} {
				s.End()
			}
			a.Unsubscribe(onA)
			b.Unsubscribe(onB)
		}
	})
}

// killPubSub cuts the Redis connections named name that hold a (p)subscription.
func killPubSub(t *testing.T, name string) int {
	t.Helper()
	admin := testkit.Redis(t)
	ctx := context.Background()
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] != name || (f["psub"] == "0" && f["sub"] == "0") {
			continue
		}
		if err := admin.Do(ctx, "CLIENT", "KILL", "ID", f["id"]).Err(); err != nil {
			t.Fatal(err)
		}
		killed++
	}
	return killed
}

func TestHubResyncsEverySubscriptionWhenTheRedisSubscriptionComesBack(t *testing.T) {
	t.Parallel()
	name := "hubtest-" + uuid.NewString()[:8]
	rdb := redisNamed(t, name)
	reg := prometheus.NewRegistry()
	h := running(t, rdb, events.NewMetrics(reg))
	ctx := context.Background()
	clinic, typ := uuid.New(), uuid.New()
	byType := h.Subscribe(ctx, []string{events.TypeKey(typ)}, "", 8)
	byClinic := h.Subscribe(ctx, []string{events.ClinicKey(clinic)}, "", 8)

	if n := killPubSub(t, name); n != 1 {
		t.Fatalf("found %d subscribed connections of the hub, want its one", n)
	}
	for name, s := range map[string]*events.Sub{"type": byType, "clinic": byClinic} {
		if it := recv(t, s, wait, name+" resync"); !it.Resync {
			t.Fatalf("%s: got %+v, want a resync request", name, it)
		}
	}
	// And events flow again.
	raw, _ := json.Marshal(holdEvent(clinic, typ, 1))
	if err := testkit.Redis(t).Publish(ctx, holds.ClinicChannel(clinic), raw).Err(); err != nil {
		t.Fatal(err)
	}
	if it := recv(t, byType, wait, "event after reconnect"); it.Event == nil || it.Event.HoldID != "h001" {
		t.Fatalf("got %+v after reconnect", it)
	}
	if v := counter(t, reg, "clinic_events_redis_connected"); v != 1 {
		t.Fatalf("redis connected gauge %v after reconnect", v)
	}
}

// gate is a TCP proxy to the test Redis that can hold back everything
// Redis sends, so a test controls exactly when a subscriber can wake.
type gate struct {
	addr   string
	mu     sync.Mutex
	closed bool
	held   chan struct{} // closed while traffic flows
}

func newGate(t *testing.T, target string) *gate {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{addr: l.Addr().String(), held: make(chan struct{})}
	close(g.held)
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		_ = l.Close()
		g.open()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			go func() { _, _ = io.Copy(out, in) }()
			go func() {
				buf := make([]byte, 32*1024)
				for {
					n, err := out.Read(buf)
					if n > 0 {
						g.mu.Lock()
						h := g.held
						g.mu.Unlock()
						<-h
						if _, werr := in.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						_ = in.Close()
						return
					}
				}
			}()
		}
	}()
	return g
}

// hold stops what Redis sends from reaching the clients; open lets it through.
func (g *gate) hold() {
	g.mu.Lock()
	g.held = make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) open() {
	g.mu.Lock()
	select {
	case <-g.held:
	default:
		close(g.held)
	}
	g.mu.Unlock()
}

func TestHubRunReturnsOnceItsContextEnds(t *testing.T) {
	t.Parallel()
	opt := *testkit.Redis(t).(*redis.Client).Options()
	g := newGate(t, opt.Addr)
	opt.Addr = g.addr
	rdb := redis.NewClient(&opt)
	t.Cleanup(func() { _ = rdb.Close() })

	h := events.NewHub(rdb, quietLog, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	select {
	case <-h.Ready():
	case <-time.After(wait):
		t.Fatal("hub not ready")
	}
	// Nothing reaches the subscriber any more: only the end of its
	// context can stop Run now.
	g.hold()
	cancel()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatalf("Run is still blocked in Receive %s after its context ended", wait)
	}
}
