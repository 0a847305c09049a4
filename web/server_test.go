package web_test

// The real http.Server that web.New configures, run by ListenAndServe on a
// loopback address with its timeouts shortened through program.Options: a
// client that drips its request headers is cut by ReadHeaderTimeout, the
// live streams outlive both ReadTimeout and WriteTimeout, and a shutdown
// ends the streams and returns promptly.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/testkit"
)

// drip opens a connection and sends a request line and headers one
// byte every gap, never ending the headers. It returns how long the
// server kept the connection open and how many bytes it accepted meanwhile.
func drip(t *testing.T, addr string, gap, giveUp time.Duration) (open time.Duration, sent int64, answer string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Errorf("dial: %v", err)
		return 0, 0, ""
	}
	defer conn.Close()
	began := time.Now()
	var n atomic.Int64
	stop := make(chan struct{})
	dripped := make(chan struct{})
	go func() {
		defer close(dripped)
		head := "GET /healthz HTTP/1.1\r\nHost: slow.example\r\nUser-Agent: slowloris\r\nX-Padding: "
		for i := 0; ; i++ {
			b := byte('a' + i%26)
			if i < len(head) {
				b = head[i]
			}
			_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
			n.Add(1)
			select {
			case <-stop:
				return
			case <-time.After(gap):
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(giveUp))
	got, err := io.ReadAll(conn)
	open = time.Since(began)
	close(stop)
	<-dripped
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the server still held the dripping connection after %s (%d bytes sent)", open.Round(time.Millisecond), n.Load())
	}
	return open, n.Load(), string(got)
}

// A client that sends its headers a byte at a time, never finishing them,
// is cut once ReadHeaderTimeout has passed, although bytes keep arriving;
// many such clients at once do not stop the server from answering others.
func TestSlowlorisHeadersAreCutByReadHeaderTimeout(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	a := newApp(t, listening(), withOptions(program.Options{ReadHeaderTimeout: timeout}))
	addr := strings.TrimPrefix(a.URL, "http://")

	// The same request, sent at once, is answered.
	res, err := http.Get(a.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", res.StatusCode)
	}

	const clients = 20
	type result struct {
		open   time.Duration
		sent   int64
		answer string
	}
	results := make([]result, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			open, sent, answer := drip(t, addr, 50*time.Millisecond, 10*time.Second)
			results[i] = result{open, sent, answer}
		})
	}
	// While they drip, the server answers a well-behaved client promptly.
	time.Sleep(timeout / 2)
	began := time.Now()
	res, err = http.Get(a.URL + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz while %d clients drip: %v", clients, err)
	}
	res.Body.Close()
	if d := time.Since(began); res.StatusCode != http.StatusOK || d > 3*timeout {
		t.Fatalf("GET /healthz while %d clients drip: %d after %s", clients, res.StatusCode, d)
	}
	wg.Wait()
	for i, r := range results {
		if r.open < timeout-100*time.Millisecond || r.open > timeout+2*time.Second {
			t.Errorf("dripping client %d was cut after %s, want about ReadHeaderTimeout (%s)", i, r.open.Round(time.Millisecond), timeout)
		}
		// Bytes kept coming until the cut: it is not an idle timeout.
		if min := int64(timeout / (50 * time.Millisecond) / 2); r.sent < min {
			t.Errorf("dripping client %d sent only %d bytes before the cut, want at least %d", i, r.sent, min)
		}
		// net/http closes the connection, with or without a 4xx first
		// (Go 1.26 writes "400 Bad Request"); never the handler's answer.
		if r.answer != "" && !strings.HasPrefix(r.answer, "HTTP/1.1 4") {
			t.Errorf("dripping client %d got %q; want the connection closed, with at most a 4xx", i, r.answer)
		}
	}
	if !t.Failed() {
		first, _, _ := strings.Cut(results[0].answer, "\r\n")
		t.Logf("%d dripping clients cut after %s..%s (ReadHeaderTimeout %s), answer %q", clients,
			minOf(results, func(r result) time.Duration { return r.open }).Round(time.Millisecond),
			maxOf(results, func(r result) time.Duration { return r.open }).Round(time.Millisecond), timeout, first)
	}
}

func minOf[T any](xs []T, f func(T) time.Duration) time.Duration {
	m := f(xs[0])
	for _, x := range xs[1:] {
		m = min(m, f(x))
	}
	return m
}

func maxOf[T any](xs []T, f func(T) time.Duration) time.Duration {
	m := f(xs[0])
	for _, x := range xs[1:] {
		m = max(m, f(x))
	}
	return m
}

// The streams outlive the deadlines the server sets per request: the JSON
// hold stream and a booking page's HTML stream, opened on a server whose
// ReadTimeout and WriteTimeout are short, still deliver a change made well
// after both have passed. (With the streams' own write deadlines taken out
// of stream_sse.go, this test fails: the server cuts them at WriteTimeout.)
func TestSlowlorisStreamsOutliveReadAndWriteTimeouts(t *testing.T) {
	t.Parallel()
	const timeout = 700 * time.Millisecond
	a := newApp(t, listening(), withOptions(program.Options{ReadHeaderTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1}) // a hold turns the pooled cell held
	typ := c.Types[0].ID
	monday := c.Monday(9, 0)

	js := a.openHoldStream(t, typ, liveClient("server"), "")
	page := dialSSE(t, nil, a.URL+"/c/"+c.Slug+"/book/"+typ.String()+"/live?week="+monday.Format("2006-01-02"))
	page.must(evWait, "the page stream's first block")
	// Drain what the page stream sends at first (every day and cell).
	for {
		if _, ok, closed := page.next(200 * time.Millisecond); closed {
			t.Fatal("the page stream closed right after opening")
		} else if !ok {
			break
		}
	}

	time.Sleep(3 * timeout)

	// The change comes through another instance: a request to this one
	// must answer within its short WriteTimeout, which a loaded machine
	// may miss; the streams are what is under test.
	other := newApp(t, withRedis(a.RDB))
	start := monday.Add(time.Hour)
	h := other.hold(t, typ, start, liveClient("server-other"))
	ev := js.nextOf("hold", "end")
	if ev.str("holdId") != h.HoldID {
		t.Fatalf("hold event %s, want hold %s", ev.Raw, h.HoldID)
	}
	cell := grid.CellID(uuid.Nil, start)
	got, _ := page.until(evWait, "the held cell's update", func(e sseEvent) bool { return e.Name == cell || e.Name == "end" })
	if got.Name == "end" {
		t.Fatalf("the page stream ended: %s", got.Data())
	}
	t.Logf("both streams delivered a change %s after they opened (read and write timeouts %s)", (3 * timeout).Round(time.Millisecond), timeout)
}

func TestHoldStreamAndHTMLStreamEndWithServerShutdownAndTheServerExitsPromptly(t *testing.T) {
	t.Parallel()
	a := newApp(t, listening())
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	js := a.openHoldStream(t, typ, liveClient("shutdown"), "")
	html := dialSSE(t, nil, a.URL+"/c/"+c.Slug+"/book/"+typ.String()+"/live?week="+c.Monday(9, 0).Format("2006-01-02"))
	html.must(evWait, "the first cell") // the stream is open

	a.shutdown()
	start := time.Now()
	js.ended("server-shutdown")
	end, _ := html.until(evWait, "end event", func(e sseEvent) bool { return e.Name == "end" })
	if end.Data() != "server-shutdown" {
		t.Fatalf("HTML stream ended with %q, want server-shutdown", end.Data())
	}
	html.closes(evWait)
	if returned, err := a.served(3 * time.Second); !returned {
		t.Fatal("ListenAndServe did not return within 3 s of the shutdown")
	} else if err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("shutdown took %s", d)
	}
	if _, err := http.Get(a.URL + "/healthz"); err == nil {
		t.Fatal("the server still answers after shutdown")
	} else if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "refused") {
		t.Logf("after shutdown: %v", err)
	}
}
