package web_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// /metrics shows the pools' health and the sweeper's work: an expired hold
// shows up as released by this instance's sweeper.
func TestMetricsShowPoolsAndSweeper(t *testing.T) {
	t.Parallel()
	// A Redis of its own: no other test's sweeper can release the hold first.
	red := startFaultRedis(t, 0)
	rdb := redis.NewClient(&redis.Options{Addr: red.addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	a := bootAPIOn(t, testkit.DB(t), rdb, web.Options{HoldTTL: time.Second})
	a.deps.RunBackground(t.Context())
	c := a.clinic(t, testkit.ClinicOptions{})
	loc, _ := time.LoadLocation(c.Timezone)
	a.hold(t, c.Types[0].ID, testkit.NextWeekday(time.Now(), loc, time.Tuesday, 9, 0), "metrics-client")

	text := string(a.do(t, "GET", "/metrics", nil).Body)
	for _, name := range []string{
		"clinic_pg_pool_connections_in_use", "clinic_pg_pool_connections_max", "clinic_pg_pool_acquire_waits_total",
		"clinic_redis_pool_timeouts_total", "clinic_sweeper_errors_total", "clinic_sweeper_last_duration_seconds",
	} {
		if !regexpFound(text, `(?m)^`+name+` [0-9]`) {
			t.Errorf("/metrics has no %s", name)
		}
	}
	for _, name := range []string{"clinic_pg_pool_connections", "clinic_redis_pool_connections"} {
		if !regexpFound(text, `(?m)^`+name+` [1-9]`) {
			t.Errorf("/metrics: %s should count the open connections", name)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for hotMetric(t, a, "clinic_sweeper_released_total") < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the expired hold was not counted as released by the sweeper (runs: %v)", hotMetric(t, a, "clinic_sweeper_runs_total"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if hotMetric(t, a, "clinic_sweeper_runs_total") < 1 {
		t.Fatal("no sweeper runs counted")
	}
}
