package web_test

import (
	"net/http"
	"testing"
)

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	t.Run("HealthzAnswers", func(t *testing.T) {
		a := newApp(t)
		if r := a.do(t, "GET", "/healthz", nil); r.Status != 200 {
			t.Fatalf("healthz: %d", r.Status)
		}
	})
	t.Run("ReadyWhenBothUp", func(t *testing.T) {
		a := newApp(t)
		r := a.do(t, "GET", "/readyz", nil)
		var body map[string]any
		r.Decode(&body)
		if r.Status != 200 {
			t.Fatalf("readyz: %d %v", r.Status, body)
		}
	})
	t.Run("NotReadyNamesRedisWhenItIsDown", func(t *testing.T) {
		a := newApp(t, withRedisDown())
		var body struct {
			Checks map[string]string `json:"checks"`
			Error  struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		r := a.do(t, "GET", "/readyz", nil)
		r.Decode(&body)
		if r.Status != http.StatusServiceUnavailable || body.Checks["redis"] != "down" || body.Checks["postgres"] != "ok" {
			t.Fatalf("readyz with redis down: %d %+v", r.Status, body)
		}
		if body.Error.Message != "Not ready: redis unreachable." {
			t.Fatalf("message: %q", body.Error.Message)
		}
	})
}
