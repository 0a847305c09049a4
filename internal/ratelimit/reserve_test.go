package ratelimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/testkit"
)

// Reservations made at once never exceed the limit, refusals count
// nothing, and a reservation given back frees its place.
func TestReserveAtOnceAndGiveBack(t *testing.T) {
	l := ratelimit.New(testkit.Redis(t), "test-"+uuid.NewString(), 3, time.Hour, quiet)
	ctx := context.Background()
	var got atomic.Int32
	var kept [20]ratelimit.Reservation
	testkit.Together(20, func(i int) {
		r, ok, wait, err := l.Reserve(ctx, "k")
		if err != nil {
			t.Error(err)
		}
		if ok {
			got.Add(1)
			kept[i] = r
		} else if wait <= 0 || wait > time.Hour {
			t.Errorf("refused with wait %s", wait)
		}
	})
	if got.Load() != 3 {
		t.Fatalf("%d reservations of 20 at once, want 3", got.Load())
	}
	for _, r := range kept {
		if err := l.GiveBack(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, ok, _, err := l.Reserve(ctx, "k"); !ok || err != nil {
			t.Fatalf("after giving back, reservation %d: %v %v", i+1, ok, err)
		}
	}
	if _, ok, _, _ := l.Reserve(ctx, "k"); ok {
		t.Fatal("a fourth reservation after giving back three")
	}
	if err := l.GiveBack(ctx, ratelimit.Reservation{}); err != nil {
		t.Fatal("giving back nothing:", err)
	}
}
