package main

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

// privateRedis starts a redis-server of the test's own: the meter reads
// server-wide counters, which other tests' commands would move.
func privateRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	port := testkit.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() { rdb.Close() })
	for deadline := time.Now().Add(5 * time.Second); rdb.Ping(t.Context()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not come up")
		}
	}
	return rdb
}

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
