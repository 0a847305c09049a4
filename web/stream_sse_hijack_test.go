package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

// An HTML stream leaves net/http once its first events are out: the
// connection is hijacked and written by a goroutine of its own. These tests
// pin what that must not change: the wire format, the end of a stream when
// the browser goes, and HTTP/2 (which cannot be hijacked) working as before.

// htmlStreamURL is the live stream of next week's booking page of c's
// first type on a.
func htmlStreamURL(a *app, c clinic) string {
	return a.URL + c.BookPath(c.Type0()) + "/live?week=" + c.NextWeek()
}

// holdAt makes a hold through the API and returns the HTML event name of
// its cell.
func holdAt(t *testing.T, a *app, c clinic, start time.Time) string {
	t.Helper()
	a.hold(t, c.Types[0].ID, start, liveClient("holder"))
	return fmt.Sprintf("slot-any-%d", start.Unix())
}

func TestHTMLStreamEndsAsSoonAsTheBrowserGoes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	open := `clinic_streams_open{kind="html",scope="` + c.Types[0].ID.String() + `"} `

	s := dialSSE(t, nil, htmlStreamURL(a, c))
	s.must(evWait, "the first day")
	if m := a.metricsText(t); !strings.Contains(m, open+"1\n") {
		t.Fatalf("/metrics lacks %s1", open)
	}
	if n := a.Deps.Hub.Counts()["clinic"]; n != 1 {
		t.Fatalf("hub has %d clinic subscriptions, want 1 (the live view)", n)
	}
	// A change still reaches it after the handler has returned.
	cell := holdAt(t, a, c, c.Monday(10, 0))
	s.until(evWait, cell, func(e sseEvent) bool { return e.Name == cell })

	s.cancel() // the tab is closed
	testkit.WaitFor(t, evWait, "the live view leaves the hub", func() bool { return a.Deps.Hub.Counts()["clinic"] == 0 })
	testkit.WaitFor(t, evWait, "the stream is counted as ended by the client", func() bool {
		m := a.metricsText(t)
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
			a := newApp(t)
			c := a.clinic(t, testkit.ClinicOptions{})
			u, err := url.Parse(htmlStreamURL(a, c))
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
			cell := holdAt(t, a, c, c.Monday(11, 0))
			waitEvent(cell)

			a.Deps.Hub.Shutdown() // every stream ends with "server-shutdown"
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
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	// A second instance, on TLS with HTTP/2; changes come from the first.
	h2 := newApp(t, overHTTP2(), withRedis(a.RDB))
	open := `clinic_streams_open{kind="html",scope="` + c.Types[0].ID.String() + `"} `

	res, cancel := getStream(t, h2.hc, htmlStreamURL(h2, c))
	if res.ProtoMajor != 2 || res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("%s %d, want HTTP/2 200", res.Proto, res.StatusCode)
	}
	s := readSSEStream(t, res, cancel)
	s.must(evWait, "the first day")
	cell := holdAt(t, a, c, c.Monday(12, 0))
	s.until(evWait, cell, func(e sseEvent) bool { return e.Name == cell })

	s.cancel()
	testkit.WaitFor(t, evWait, "the HTTP/2 stream is counted as ended by the client", func() bool {
		m := h2.metricsText(t)
		return strings.Contains(m, open+"0\n") && strings.Contains(m, `clinic_streams_ended_total{reason="client-abort"} 1`+"\n")
	})
}
