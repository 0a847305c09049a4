package ratelimit_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/testkit"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Check counts like Allow and refuses past the limit with the time left of
// the window.
func TestCheckCountsAndRefuses(t *testing.T) {
	l := ratelimit.New(testkit.Redis(t), "test-"+uuid.NewString(), 2, time.Hour, quiet)
	ctx := context.Background()
	for i := range 2 {
		if ok, _, err := l.Check(ctx, "k"); !ok || err != nil {
			t.Fatalf("request %d: %v %v", i+1, ok, err)
		}
	}
	ok, wait, err := l.Check(ctx, "k")
	if ok || err != nil || wait <= 0 || wait > time.Hour {
		t.Fatalf("third request: allowed %v, wait %s, %v", ok, wait, err)
	}
	if ok, _, _ := l.Check(ctx, "other"); !ok {
		t.Error("another key was refused")
	}
}

// Spent only reads; Count only counts: together they limit what went
// through.
func TestSpentAndCount(t *testing.T) {
	l := ratelimit.New(testkit.Redis(t), "test-"+uuid.NewString(), 2, time.Hour, quiet)
	ctx := context.Background()
	for i := range 2 {
		for range 3 { // asking does not count
			if spent, _, err := l.Spent(ctx, "k"); spent || err != nil {
				t.Fatalf("after %d counted: spent %v, %v", i, spent, err)
			}
		}
		if err := l.Count(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
	spent, wait, err := l.Spent(ctx, "k")
	if !spent || err != nil || wait <= 0 || wait > time.Hour {
		t.Fatalf("after 2 counted: spent %v, wait %s, %v", spent, wait, err)
	}
	if spent, _, _ := l.Spent(ctx, "other"); spent {
		t.Error("another key is spent")
	}
}

// Without Redis, Allow lets the request through; Check, Spent and Count
// say they could not count.
func TestWithoutRedis(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	l := ratelimit.New(down, "test-down", 1, time.Minute, quiet)
	ctx := context.Background()
	for range 3 {
		if ok, _ := l.Allow(ctx, "k"); !ok {
			t.Fatal("Allow refused without Redis")
		}
	}
	if ok, _, err := l.Check(ctx, "k"); ok || err == nil {
		t.Errorf("Check without Redis: %v, %v; want refused with an error", ok, err)
	}
	if _, _, err := l.Spent(ctx, "k"); err == nil {
		t.Error("Spent without Redis: no error")
	}
	if err := l.Count(ctx, "k"); err == nil {
		t.Error("Count without Redis: no error")
	}
}

// A counter under a hash tag names the key AllowIn counts, with the tag
// in braces, and the window's end.
func TestCounterInNamesTheKeyAllowInCounts(t *testing.T) {
	rdb := testkit.Redis(t)
	l := ratelimit.New(rdb, "test-"+uuid.NewString(), 2, time.Minute, quiet)
	ctx := context.Background()
	c := l.CounterIn("clinic-1", "198.51.100.7")
	if !strings.Contains(c.Key, ":{clinic-1}:198.51.100.7:") || c.Limit != 2 || c.Window != time.Minute {
		t.Fatalf("counter %+v", c)
	}
	if d := time.Until(c.Ends); d <= 0 || d > time.Minute {
		t.Fatalf("window ends in %s", d)
	}
	for range 2 {
		if ok, _ := l.AllowIn(ctx, "clinic-1", "198.51.100.7"); !ok {
			t.Fatal("refused within the limit")
		}
	}
	if n, err := rdb.Get(ctx, c.Key).Int(); err != nil || n != 2 {
		t.Fatalf("the counter reads %d, %v; want the 2 AllowIn counted", n, err)
	}
	if ok, wait := l.AllowIn(ctx, "clinic-1", "198.51.100.7"); ok || wait <= 0 {
		t.Fatalf("third request: allowed %v, wait %s", ok, wait)
	}
	if ok, _ := l.AllowIn(ctx, "clinic-2", "198.51.100.7"); !ok {
		t.Error("the same key under another tag was refused")
	}
}
