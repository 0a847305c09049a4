package waitlist_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/holds"
)

// A page watching the clinic hears the freed time held before it hears
// the cancellation: at no moment does the time look free.
func TestFreedTimeIsHeldBeforeTheCancelIsAnnounced(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(9, 10, 0)
	b := r.book(t, start, "first@example.org")
	r.join(t, "waiting@example.org", start)

	sub := r.rdb.Subscribe(ctx, holds.ClinicChannel(r.clinic.ID))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	r.cancel(t, b.Booking)
	var got []string
	for len(got) < 2 {
		msg, err := sub.ReceiveTimeout(ctx, 5*time.Second)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		m, ok := msg.(*redis.Message)
		if !ok {
			continue
		}
		var ev holds.Event
		if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type)
	}
	if got[0] != holds.EventHold || got[1] != holds.EventCancel {
		t.Fatalf("events after the cancel: %v, want hold then cancel", got)
	}
}
