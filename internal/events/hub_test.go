package events_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/testkit"
)

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
