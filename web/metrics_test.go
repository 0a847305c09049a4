package web_test

// Tests of /metrics: requests by route and outcome, the pools and the
// sweeper, and serving it on a private address only.

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

func TestMetricsCountRequestsByRouteAndOutcomes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	a.do(t, "GET", "/healthz", nil)
	a.do(t, "POST", "/v1/holds", `{"appointmentTypeId":"`+uuid.NewString()+`","slotStartDate":"2030-01-07T09:00:00Z","clientId":"m"}`)
	text := a.metricsText(t)
	for _, want := range []string{
		`clinic_http_request_duration_seconds_count{method="GET",route="/healthz",status="2xx"} 1`,
		`clinic_outcomes_total{outcome="NOT_FOUND",what="hold"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// /metrics shows the pools' health and the sweeper's work: an expired hold
// shows up as released by this instance's sweeper.
func TestMetricsShowPoolsAndSweeper(t *testing.T) {
	t.Parallel()
	// A Redis of its own: no other test's sweeper can release the hold first.
	red := startFaultRedis(t, 0)
	rdb := redis.NewClient(&redis.Options{Addr: red.addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	a := newApp(t, withRedis(rdb), withOptions(program.Options{HoldTTL: time.Second}))
	c := a.clinic(t, testkit.ClinicOptions{})
	a.hold(t, c.Types[0].ID, c.Next(time.Tuesday, 9, 0), "metrics-client")

	text := a.metricsText(t)
	for _, name := range []string{
		"clinic_pg_pool_connections_in_use", "clinic_pg_pool_connections_max", "clinic_pg_pool_acquire_waits_total",
		"clinic_redis_pool_timeouts_total", "clinic_sweeper_errors_total", "clinic_sweeper_last_duration_seconds",
	} {
		if !regexp.MustCompile(`(?m)^` + name + ` [0-9]`).MatchString(text) {
			t.Errorf("/metrics has no %s", name)
		}
	}
	for _, name := range []string{"clinic_pg_pool_connections", "clinic_redis_pool_connections"} {
		if !regexp.MustCompile(`(?m)^` + name + ` [1-9]`).MatchString(text) {
			t.Errorf("/metrics: %s should count the open connections", name)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for a.metricSum(t, "clinic_sweeper_released_total") < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the expired hold was not counted as released by the sweeper (runs: %v)", a.metricSum(t, "clinic_sweeper_runs_total"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if a.metricSum(t, "clinic_sweeper_runs_total") < 1 {
		t.Fatal("no sweeper runs counted")
	}
}

// By default /metrics is served nowhere public: the metrics name clinics,
// their bookings and e-mails, and which staff are online.
func TestMetricsAreNotPublicByDefault(t *testing.T) {
	t.Parallel()
	a := newApp(t, defaultMetrics())
	if r := a.do(t, "GET", "/metrics", nil); r.Status != http.StatusNotFound {
		t.Fatalf("public /metrics by default: %d, want 404", r.Status)
	}
	if r := a.do(t, "GET", "/healthz", nil); r.Status != http.StatusOK {
		t.Fatalf("public /healthz: %d", r.Status)
	}
}

// With METRICS_ADDR, /metrics is served there and not on the public address.
func TestMetricsOnAPrivateAddress(t *testing.T) {
	t.Parallel()
	private := freeLoopbackAddr(t)
	a := newApp(t, listening(), withOptions(program.Options{MetricsAddr: private}))
	get := func(u string) (int, string) {
		t.Helper()
		for deadline := time.Now().Add(evWait); ; time.Sleep(20 * time.Millisecond) {
			res, err := http.Get(u)
			if err != nil {
				if time.Now().After(deadline) {
					t.Fatalf("GET %s: %v", u, err)
				}
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode, string(b)
		}
	}
	if st, body := get("http://" + private + "/metrics"); st != http.StatusOK || !strings.Contains(body, "clinic_streams_open") && !strings.Contains(body, "go_goroutines") {
		t.Fatalf("private /metrics: %d %s", st, clip(body, 200))
	}
	if st, _ := get(a.URL + "/metrics"); st != http.StatusNotFound {
		t.Fatalf("public /metrics with METRICS_ADDR set: %d, want 404", st)
	}
	if st, _ := get(a.URL + "/healthz"); st != http.StatusOK {
		t.Fatalf("public /healthz: %d", st)
	}
}
