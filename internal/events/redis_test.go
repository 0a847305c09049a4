package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
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

	testkit.CutSubscription(t, name) // the hub's one subscriber
	for name, s := range map[string]*events.Sub{"type": byType, "clinic": byClinic} {
		if it := recv(t, s, wait, name+" resync"); !it.Resync {
			t.Fatalf("%s: got %+v, want a resync request", name, it)
		}
	}
	// And events flow again.
	raw, err := json.Marshal(holdEvent(clinic, typ, 1))
	if err != nil {
		t.Fatal(err)
	}
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
