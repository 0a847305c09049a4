package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// probe runs `clinic healthcheck args...` as main does with ADDR set.
func probe(t *testing.T, addr string, args ...string) (string, error) {
	t.Helper()
	env := map[string]string{"ADDR": addr}
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"healthcheck"}, args...), func(k string) string { return env[k] }, &out, &out)
	return out.String(), err
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	ready := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.WriteHeader(ready)
		case "/slow":
			time.Sleep(2 * time.Second)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	t.Run("ReadyOnThePortOfAddr", func(t *testing.T) {
		out, err := probe(t, ":"+port)
		if err != nil || !strings.Contains(out, "200") {
			t.Fatalf("healthcheck: %v %q", err, out)
		}
	})
	t.Run("NotReadyNamesTheStatus", func(t *testing.T) {
		out, err := probe(t, "0.0.0.0:"+port, "-url", srv.URL+"/nothing")
		if err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("want one line naming 404, got %v (%q)", err, out)
		}
	})
	t.Run("NoAnswerWithinTheTimeout", func(t *testing.T) {
		start := time.Now()
		_, err := probe(t, ":"+port, "-url", srv.URL+"/slow", "-timeout", "200ms")
		if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
			t.Fatalf("want a timeout, got %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("took %s", d)
		}
	})
	t.Run("NothingListening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if _, err := probe(t, addr); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("want connection refused, got %v", err)
		}
	})
}

func TestHealthcheckNotReady(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status":"unavailable"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	if _, err := probe(t, "[::]:"+port); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("want 503, got %v", err)
	}
}

func TestReadyURL(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/readyz",
		"0.0.0.0:9000":   "http://127.0.0.1:9000/readyz",
		"[::]:8080":      "http://127.0.0.1:8080/readyz",
		"10.0.0.5:8080":  "http://10.0.0.5:8080/readyz",
		"[fd00::1]:8080": "http://[fd00::1]:8080/readyz",
		"localhost:81":   "http://localhost:81/readyz",
	} {
		if got, err := readyURL(addr); err != nil || got != want {
			t.Errorf("readyURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := readyURL("8080"); err == nil {
		t.Error("ADDR without a port accepted")
	}
}
