package web_test

// A reader of text/event-stream answers that splits them as a browser does.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one block of a text/event-stream, as a browser's parser
// would split it: the fields of the lines up to a blank line.
type sseEvent struct {
	Name  string   // the "event:" field, "" for an unnamed event
	Lines []string // each "data:" line, in order
	Retry string   // the "retry:" field, if the block had one
	ID    string   // the "id:" field, if the block had one
}

// Data is the event's data as EventSource hands it to a listener: the data
// lines joined by newlines.
func (e sseEvent) Data() string { return strings.Join(e.Lines, "\n") }

// JSON decodes the data of an event of the JSON stream.
func (e sseEvent) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(e.Data()), &m); err != nil {
		t.Fatalf("event data %q is not JSON: %v", e.Data(), err)
	}
	return m
}

// sseConn reads one stream over real HTTP. Comment lines (": ping") are
// skipped; every other block is delivered, a bare "retry:" block too, so a
// test can see that it came first.
type sseConn struct {
	t      *testing.T
	Header http.Header
	events chan sseEvent
	cancel context.CancelFunc
}

// dialSSE opens url with client (nil: a plain client) and fails the test
// unless the answer is 200 text/event-stream. The stream is closed at the
// end of the test.
func dialSSE(t *testing.T, client *http.Client, url string) *sseConn {
	t.Helper()
	res, cancel := getStream(t, client, url)
	if res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET %s: %d, want 200", url, res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		cancel()
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	return readSSEStream(t, res, cancel)
}

// wantStreamRefused opens the stream at url and fails unless it is refused
// with status and the error code, as the API's JSON error, instead of
// streaming.
func wantStreamRefused(t *testing.T, url string, status int, code string) {
	t.Helper()
	res, cancel := getStream(t, nil, url)
	defer cancel()
	if res.StatusCode == http.StatusOK {
		t.Fatalf("GET %s: 200 %s, want %d %s", url, res.Header.Get("Content-Type"), status, code)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", url, err)
	}
	wantError(t, &response{Status: res.StatusCode, Header: res.Header, Body: string(b), t: t, what: "GET " + url}, status, code, "")
}

// readSSEStream reads the stream res answered in the background; cancel
// aborts it, and it is aborted at the end of the test.
func readSSEStream(t *testing.T, res *http.Response, cancel context.CancelFunc) *sseConn {
	c := &sseConn{t: t, Header: res.Header, events: make(chan sseEvent, 4096), cancel: cancel}
	go c.read(res)
	t.Cleanup(cancel)
	return c
}

// getStream sends the GET and returns the answer unread, with the function
// that aborts it.
func getStream(t *testing.T, client *http.Client, url string) (*http.Response, context.CancelFunc) {
	t.Helper()
	if client == nil {
		client = &http.Client{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", url, err)
	}
	return res, func() { cancel(); _ = res.Body.Close() }
}

func (c *sseConn) read(res *http.Response) {
	defer close(c.events)
	readSSE(res.Body, func(ev sseEvent) { c.events <- ev })
}

// readSSE parses an event stream as a browser does: a line ends at "\r\n",
// "\r" or "\n" alike, a blank line ends a block, and each block with a
// field is handed to emit.
func readSSE(r io.Reader, emit func(sseEvent)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	sc.Split(scanSSELines)
	var cur sseEvent
	has := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has {
				emit(cur)
			}
			cur, has = sseEvent{}, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.Name = value
		case "data":
			cur.Lines = append(cur.Lines, value)
		case "retry":
			cur.Retry = value
		case "id":
			cur.ID = value
		default:
			continue
		}
		has = true
	}
}

// scanSSELines splits at "\r\n", "\r" or "\n", as the event-stream format
// does (bufio.ScanLines would take a bare "\r" for text).
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0 && atEOF && len(data) > 0:
		return len(data), data, nil
	case i < 0:
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data) && data[i+1] == '\n':
		return i + 2, data[:i], nil
	case i+1 == len(data) && !atEOF:
		return 0, nil, nil // a "\n" may follow in the next read
	}
	return i + 1, data[:i], nil
}

// next is the next event, or ok false when the stream closed or nothing
// came within d.
func (c *sseConn) next(d time.Duration) (ev sseEvent, ok, closed bool) {
	select {
	case ev, ok := <-c.events:
		return ev, ok, !ok
	case <-time.After(d):
		return sseEvent{}, false, false
	}
}

// must is the next event, failing the test when none comes within d.
func (c *sseConn) must(d time.Duration, what string) sseEvent {
	c.t.Helper()
	ev, ok, closed := c.next(d)
	if !ok {
		if closed {
			c.t.Fatalf("stream closed while waiting for %s", what)
		}
		c.t.Fatalf("no event within %s while waiting for %s", d, what)
	}
	return ev
}

// until reads events until match accepts one, returning it and the events
// read before it; it fails the test after d.
func (c *sseConn) until(d time.Duration, what string, match func(sseEvent) bool) (sseEvent, []sseEvent) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	var before []sseEvent
	for {
		left := time.Until(deadline)
		if left <= 0 {
			c.t.Fatalf("no %s within %s; got %s", what, d, describeEvents(before))
		}
		ev, ok, closed := c.next(left)
		if !ok {
			if closed {
				c.t.Fatalf("stream closed while waiting for %s; got %s", what, describeEvents(before))
			}
			continue
		}
		if match(ev) {
			return ev, before
		}
		before = append(before, ev)
	}
}

// quiet asserts that no event arrives within d.
func (c *sseConn) quiet(d time.Duration) {
	c.t.Helper()
	if ev, ok, _ := c.next(d); ok {
		c.t.Fatalf("unexpected event %s", describeEvents([]sseEvent{ev}))
	}
}

// closes asserts that the server closes the stream within d, with no
// further event.
func (c *sseConn) closes(d time.Duration) {
	c.t.Helper()
	ev, ok, closed := c.next(d)
	switch {
	case ok:
		c.t.Fatalf("event after the end: %s", describeEvents([]sseEvent{ev}))
	case !closed:
		c.t.Fatalf("stream still open %s after its end", d)
	}
}

func describeEvents(evs []sseEvent) string {
	if len(evs) == 0 {
		return "nothing"
	}
	var b strings.Builder
	for i, e := range evs {
		if i > 0 {
			b.WriteString(" | ")
		}
		if i == 12 {
			b.WriteString("...")
			break
		}
		if e.Retry != "" {
			b.WriteString("retry:" + e.Retry + " ")
		}
		if e.ID != "" {
			b.WriteString("id:" + e.ID + " ")
		}
		if e.Name != "" {
			b.WriteString("event:" + e.Name + " ")
		}
		d := e.Data()
		if len(d) > 300 {
			d = d[:300] + "..."
		}
		b.WriteString(d)
	}
	return b.String()
}
