package main

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

// privateRedis: the meter reads server-wide counters, which other tests'
// commands would move.
func privateRedis(t *testing.T) *redis.Client { return testkit.PrivateRedis(t) }

// A script call is one command sent however many calls it makes; a
// pipeline's commands and a plain command each count; the meter's own
// commands do not; the slow log settings are put back.
func TestRedisMeterCountsScriptsOnce(t *testing.T) {
	rdb := privateRedis(t)
	ctx := t.Context()
	// The pipeline below gets a connection of its own: dialled (HELLO)
	// before the measurement.
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Ping(ctx); return nil }); err != nil {
		t.Fatal(err)
	}
	m, err := newRedisMeter(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	before, err := m.start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	script := redis.NewScript(`redis.call('SET', KEYS[1], '1'); redis.call('INCR', KEYS[1]); return redis.call('GET', KEYS[1])`)
	if err := script.Run(ctx, rdb, []string{"k"}).Err(); err != nil { // EVALSHA, NOSCRIPT, then EVAL
		t.Fatal(err)
	}
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "n")
		p.Incr(ctx, "n")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rdb.Get(ctx, "n")
	w, err := m.stop(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	// Sent: evalsha (refused), eval, incr, incr, get. Inside the script:
	// set, incr, get.
	if w.sent() != 5 || w.inner != 3 || w.scripts() != 2 || w.total() != 8 {
		t.Fatalf("sent %d, inner %d, scripts %d, total %d (%v); want 5, 3, 2, 8", w.sent(), w.inner, w.scripts(), w.total(), w.calls)
	}
	m.close(context.Background())
	cur, err := rdb.ConfigGet(ctx, "slowlog-*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cur["slowlog-log-slower-than"] != "10000" || cur["slowlog-max-len"] != "128" {
		t.Fatalf("slow log settings not put back: %v", cur)
	}
}

// The table's row gives each step's commands per booking, in the order a
// booking takes them.
func TestRoundtripsPerStepInOrder(t *testing.T) {
	r := roundtripResult{bookings: 2, steps: map[string]redisWork{
		"timeslots": {calls: map[string]int64{"mget": 2}},
		"hold":      {calls: map[string]int64{"evalsha": 4}},
		"heartbeat": {calls: map[string]int64{"evalsha": 3}},
		"book":      {calls: map[string]int64{"evalsha": 12, "set": 4}, inner: 4},
	}}
	if got, want := r.perStep(), "timeslots 1.0, hold 2.0, heartbeat 1.5, book 6.0"; got != want {
		t.Fatalf("perStep() = %q, want %q", got, want)
	}
}
