package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
