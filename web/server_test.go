package web_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// newServer boots the whole app on the test database and Redis; rdb may be
// replaced to point at a Redis that is down.
func newServer(t *testing.T, rdb redis.UniversalClient) *httptest.Server {
	t.Helper()
	pool := testkit.DB(t)
	if rdb == nil {
		rdb = testkit.Redis(t)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	deps := web.Wire(pool, rdb, logger, scoped(web.Options{}))
	deps.RunBackground(t.Context())
	srv := web.New(deps, "127.0.0.1:0")
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

type errorShape struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func getJSON(t *testing.T, url string, into any) *http.Response {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if into != nil {
		if err := json.NewDecoder(res.Body).Decode(into); err != nil {
			t.Fatalf("decode %s: %v", url, err)
		}
	}
	return res
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	t.Run("HealthzAnswers", func(t *testing.T) {
		ts := newServer(t, nil)
		if res := getJSON(t, ts.URL+"/healthz", nil); res.StatusCode != 200 {
			t.Fatalf("healthz: %d", res.StatusCode)
		}
	})
	t.Run("ReadyWhenBothUp", func(t *testing.T) {
		ts := newServer(t, nil)
		var body map[string]any
		if res := getJSON(t, ts.URL+"/readyz", &body); res.StatusCode != 200 {
			t.Fatalf("readyz: %d %v", res.StatusCode, body)
		}
	})
	t.Run("NotReadyNamesRedisWhenItIsDown", func(t *testing.T) {
		down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
		t.Cleanup(func() { _ = down.Close() })
		ts := newServer(t, down)
		var body struct {
			Checks map[string]string `json:"checks"`
			Error  struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		res := getJSON(t, ts.URL+"/readyz", &body)
		if res.StatusCode != http.StatusServiceUnavailable || body.Checks["redis"] != "down" || body.Checks["postgres"] != "ok" {
			t.Fatalf("readyz with redis down: %d %+v", res.StatusCode, body)
		}
		if body.Error.Message != "Not ready: redis unreachable." {
			t.Fatalf("message: %q", body.Error.Message)
		}
	})
}

func TestUnknownRouteUsesTheErrorShape(t *testing.T) {
	t.Parallel()
	ts := newServer(t, nil)
	var body errorShape
	res := getJSON(t, ts.URL+"/v1/no/such/thing", &body)
	if res.StatusCode != 404 || body.Error.Code != "NOT_FOUND" || body.Error.Details == nil {
		t.Fatalf("got %d %+v", res.StatusCode, body)
	}
	if res.Header.Get("X-Request-Id") == "" {
		t.Fatal("every response carries a request id")
	}
}

func TestMetricsCountRequestsByRouteAndOutcomes(t *testing.T) {
	t.Parallel()
	ts := newServer(t, nil)
	getJSON(t, ts.URL+"/healthz", nil)
	res, err := http.Post(ts.URL+"/v1/holds", "application/json", strings.NewReader(`{"appointmentTypeId":"`+uuid.NewString()+`","slotStartDate":"2030-01-07T09:00:00Z","clientId":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`clinic_http_request_duration_seconds_count{method="GET",route="/healthz",status="2xx"} 1`,
		`clinic_outcomes_total{outcome="NOT_FOUND",what="hold"} 1`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
