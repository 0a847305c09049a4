package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// An HTML stream leaves net/http once its first events are out: the
// connection is hijacked and written by a goroutine of its own. These tests
// pin what that must not change: the wire format, the end of a stream when
// the browser goes, and HTTP/2 (which cannot be hijacked) working as before.

func htmlStreamURL(t *testing.T, base string, c testkit.Clinic) string {
	t.Helper()
	return base + "/c/" + c.Slug + "/book/" + c.Types[0].ID.String() + "/live?week=" + weekOf(t)
}

// holdAt makes a hold through the API and returns the HTML event name of
// its cell.
func holdAt(t *testing.T, a *liveApp, c testkit.Clinic, start time.Time) string {
	t.Helper()
	a.hold(c.Types[0].ID, start, liveClient("holder"))
	return fmt.Sprintf("slot-any-%d", start.Unix())
}

func TestHTMLStreamEndsAsSoonAsTheBrowserGoes(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	open := `clinic_streams_open{kind="html",scope="` + c.Types[0].ID.String() + `"} `

	s := dialSSE(t, nil, htmlStreamURL(t, a.URL, c))
	s.must(evWait, "the first day")
	if m := a.metricsText(); !strings.Contains(m, open+"1\n") {
		t.Fatalf("/metrics lacks %s1", open)
	}
	if n := a.deps.Hub.Counts()["clinic"]; n != 1 {
		t.Fatalf("hub has %d clinic subscriptions, want 1 (the live view)", n)
	}
	// A change still reaches it after the handler has returned.
	cell := holdAt(t, a, c, mondayAt(t, 10, 0))
	s.until(evWait, cell, func(e sseEvent) bool { return e.Name == cell })

	s.cancel() // the tab is closed
	eventually(t, "the live view leaves the hub", func() bool { return a.deps.Hub.Counts()["clinic"] == 0 })
	eventually(t, "the stream is counted as ended by the client", func() bool {
		m := a.metricsText()
		return strings.Contains(m, open+"0\n") && strings.Contains(m, `clinic_streams_ended_total{reason="client-abort"} 1`+"\n")
	})
}

// The body must be what the answer's header promised to its end: for
// HTTP/1.1 well-formed chunks, the last chunk, then the close; for
// HTTP/1.0 (no chunked encoding) the bare events up to the close.
func TestHTMLStreamBodyIsWellFormedToItsEnd(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} {
		t.Run(strings.ReplaceAll(proto, "/", ""), func(t *testing.T) {
			t.Parallel()
			a := bootLive(t, web.Options{})
			c := a.clinic(testkit.ClinicOptions{})
			u, err := url.Parse(htmlStreamURL(t, a.URL, c))
			if err != nil {
				t.Fatal(err)
			}
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(3 * evWait))
			fmt.Fprintf(conn, "GET %s %s\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", u.RequestURI(), proto, u.Host)
			br := bufio.NewReader(conn)
			head, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			chunked := proto == "HTTP/1.1"
			if got := head.TransferEncoding; chunked != (len(got) == 1 && got[0] == "chunked") {
				t.Fatalf("%s: Transfer-Encoding %v", proto, got)
			}
			// ReadResponse would decode the body; read it raw instead.
			var raw io.Reader = br
			if chunked {
				raw = httputil.NewChunkedReader(br)
			}
			events := make(chan string, 256)
			done := make(chan error, 1)
			go func() {
				body := bufio.NewScanner(raw)
				body.Buffer(make([]byte, 64<<10), 4<<20)
				for body.Scan() {
					line := body.Text()
					if name, ok := strings.CutPrefix(line, "event: "); ok {
						events <- name
					}
					if !sseLine(line) {
						done <- fmt.Errorf("not a line of an event stream: %q", line)
						return
					}
				}
				if body.Err() != nil {
					done <- body.Err()
					return
				}
				if !chunked {
					done <- nil // the scanner saw the close
					return
				}
				// The last chunk ends with an empty trailer; then the
				// server closes the connection.
				rest, err := io.ReadAll(br)
				if string(rest) != "\r\n" || err != nil {
					done <- fmt.Errorf("after the last chunk: %q, %v; want the empty trailer and EOF", rest, err)
					return
				}
				done <- nil
			}()
			waitEvent := func(want string) {
				t.Helper()
				for deadline := time.After(evWait); ; {
					select {
					case name := <-events:
						if name == want || (want == "" && name != "") {
							return
						}
					case <-deadline:
						t.Fatalf("no event %q", want)
					}
				}
			}
			waitEvent("")
			cell := holdAt(t, a, c, mondayAt(t, 11, 0))
			waitEvent(cell)

			a.deps.Hub.Shutdown() // every stream ends with "server-shutdown"
			waitEvent("end")
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(evWait):
				t.Fatal("the body did not end with a close")
			}
		})
	}
}

// sseLine reports whether line may appear in the event streams we send.
func sseLine(line string) bool {
	for _, p := range []string{"event: ", "data: ", "retry: ", ": "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return line == ""
}

// HTTP/2 connections cannot be hijacked: the handler serves the stream.
func TestHTMLStreamOverHTTP2(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	// A second instance, on TLS with HTTP/2; changes come from the first.
	deps := web.Wire(a.pool, a.rdb, slog.New(slog.NewTextHandler(io.Discard, nil)), scoped(web.Options{}))
	ctx, stop := context.WithCancel(context.Background())
	deps.RunBackground(ctx)
	ts := httptest.NewUnstartedServer(web.New(deps, "127.0.0.1:0").Handler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(func() { ts.Close(); stop() })
	waitHubReady(t, deps)
	metrics := func() string {
		res, err := ts.Client().Get(ts.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	open := `clinic_streams_open{kind="html",scope="` + c.Types[0].ID.String() + `"} `

	res, cancel := getStream(t, ts.Client(), htmlStreamURL(t, ts.URL, c))
	if res.ProtoMajor != 2 || res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("%s %d, want HTTP/2 200", res.Proto, res.StatusCode)
	}
	s := &sseConn{t: t, Header: res.Header, events: make(chan sseEvent, 4096), cancel: cancel}
	go s.read(res)
	t.Cleanup(cancel)
	s.must(evWait, "the first day")
	cell := holdAt(t, a, c, mondayAt(t, 12, 0))
	s.until(evWait, cell, func(e sseEvent) bool { return e.Name == cell })

	s.cancel()
	eventually(t, "the HTTP/2 stream is counted as ended by the client", func() bool {
		m := metrics()
		return strings.Contains(m, open+"0\n") && strings.Contains(m, `clinic_streams_ended_total{reason="client-abort"} 1`+"\n")
	})
}
