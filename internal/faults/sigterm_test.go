package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

// inFlightMargin: a load request asked at least this long before SIGTERM
// has reached the server (the kernel accepted its connection and the
// server read it) and must be answered. Requests asked closer to the
// signal may find the listener closed, as a client of any server may.
const inFlightMargin = 100 * time.Millisecond

// One server process under load, with streams open and requests in flight,
// gets SIGTERM: every stream is told "end"/"server-shutdown", every request
// that had started is answered normally, and the process exits 0 within
// 10 s.
func TestSIGTERMDrainsGracefully(t *testing.T) {
	t.Parallel()
	url := testkit.FreshDB(t)
	migrate(t, url)
	pool := openPool(t, url)
	c := faultClinic(t, pool)
	typeID := c.Types[0].ID
	srv := startServer(t, "server", map[string]string{
		"DATABASE_URL":             url,
		"REDIS_URL":                testRedisURL(),
		"SHUTDOWN_TIMEOUT_SECONDS": "10",
		"DB_MAX_CONNS":             "10",
	})
	all := slotStarts(t, c, 56)
	slow, loadSlots := all[:3], all[48:]

	// Two streams: the JSON hold stream and a booking page's HTML stream.
	jsonStream := openStream(t, fmt.Sprintf("%s/v1/holds/stream?appointmentTypeId=%s&clientId=sigterm-watcher", srv.URL, typeID))
	jsonStream.waitFor(t, `"type":"connected"`, 10*time.Second)
	htmlStream := openStream(t, fmt.Sprintf("%s/c/%s/book/%s/live?week=%s", srv.URL, c.Slug, typeID, slow[0].Format("2006-01-02")))
	htmlStream.waitFor(t, "event: ", 10*time.Second) // the grid's first state

	l := startLoad(t, patients(4), typeID, loadSlots, []target{{srv.name, srv.URL}})
	time.Sleep(scaled(1 * time.Second))

	// Requests surely in flight at the signal: their headers are sent and
	// the handler is reading a body that is not finished until after it.
	inflight := startHalfSentHolds(t, srv.URL, typeID, len(slow))
	time.Sleep(300 * time.Millisecond) // the server has read the headers and runs the handlers

	sigAt := time.Now()
	if err := srv.signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	inflight.finish(slow)

	exitErr, exited := srv.waitExit(10*time.Second - time.Since(sigAt))
	exitAfter := time.Since(sigAt)
	inflight.wg.Wait()
	l.finish()
	calls, books := l.snapshot()
	t.Log(summary("TestSIGTERMDrainsGracefully", calls, books))
	t.Logf("exited %s after SIGTERM (%v)", exitAfter.Round(time.Millisecond), exitErr)

	if !exited {
		t.Errorf("still running 10 s after SIGTERM")
	} else if exitErr != nil {
		t.Errorf("exit after SIGTERM: %v, want status 0", exitErr)
	}

	for i, a := range inflight.answers {
		if a.err != nil || a.status != http.StatusCreated {
			t.Errorf("request %d in flight at SIGTERM: want 201, got %d %s %v", i, a.status, a.body, a.err)
		}
	}

	// The streams: told why they end, then closed.
	checkStreamsEnded(t, jsonStream, htmlStream)
	checkCallsAroundSignal(t, calls, sigAt)
	checkServerErrors(t, nil, srv)
	checkBookings(t, pool, c.ID, books, unknownBookOutcomes(calls))
}

// stream is an open SSE response read line by line.
type stream struct {
	lines chan string
	mu    sync.Mutex
	all   []string
	done  chan struct{}
	err   error
}

func openStream(t *testing.T, url string) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("GET %s: %d %s (reading the body: %v)", url, res.StatusCode, b, err)
	}
	s := &stream{lines: make(chan string, 4096), done: make(chan struct{})}
	go func() {
		defer res.Body.Close()
		defer close(s.done)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.all = append(s.all, sc.Text())
			s.mu.Unlock()
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		s.err = sc.Err()
	}()
	return s
}

// waitFor waits for a line containing what.
func (s *stream) waitFor(t *testing.T, what string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l := <-s.lines:
			if strings.Contains(l, what) {
				return
			}
		case <-s.done:
			t.Fatalf("the stream ended before %q (%v)", what, s.err)
		case <-deadline:
			t.Fatalf("no %q on the stream within %s", what, d)
		}
	}
}

// waitEnd waits for the server to close the stream and returns every line
// it sent.
func (s *stream) waitEnd(t *testing.T, d time.Duration) []string {
	t.Helper()
	select {
	case <-s.done:
		if s.err != nil {
			t.Errorf("the stream broke instead of ending: %v", s.err)
		}
	case <-time.After(d):
		t.Errorf("the stream was still open %s after SIGTERM", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.all...)
}

func lastN(xs []string, n int) []string {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

// halfSentHolds are hold requests whose headers are sent and whose bodies
// are half written: in flight, for sure, until finish.
type halfSentHolds struct {
	client  string // the holds' client ids are client-0, client-1, ...
	wg      sync.WaitGroup
	answers []answer
	rest    []*io.PipeWriter
}

// answer is what a half-sent hold got.
type answer struct {
	status int
	body   string
	err    error
}

// startHalfSentHolds sends n hold requests of the type to the server up
// to the middle of their bodies.
func startHalfSentHolds(t *testing.T, url string, typeID uuid.UUID, n int) *halfSentHolds {
	t.Helper()
	h := &halfSentHolds{client: "in-flight", answers: make([]answer, n), rest: make([]*io.PipeWriter, n)}
	for i := range n {
		pr, pw := io.Pipe()
		h.rest[i] = pw
		wrote := make(chan struct{})
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{WroteHeaders: func() { close(wrote) }})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/holds", pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			res, err := (&http.Client{Timeout: 20 * time.Second, Transport: patientTransport()}).Do(req)
			if err != nil {
				h.answers[i] = answer{err: err}
				return
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			h.answers[i] = answer{status: res.StatusCode, body: string(b), err: err}
		}()
		select {
		case <-wrote:
		case <-time.After(5 * time.Second):
			t.Fatal("a slow request's headers were not sent within 5 s")
		}
		if _, err := fmt.Fprintf(pw, `{"appointmentTypeId":%q,`, typeID); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// finish writes the rest of each body, for the slots in order.
func (h *halfSentHolds) finish(slots []time.Time) {
	for i, start := range slots {
		fmt.Fprintf(h.rest[i], `"slotStartDate":%q,"clientId":"%s-%d"}`, start.UTC().Format(time.RFC3339), h.client, i)
		h.rest[i].Close()
	}
}

// checkStreamsEnded: both streams were told the server shuts down, then
// closed.
func checkStreamsEnded(t *testing.T, jsonStream, htmlStream *stream) {
	t.Helper()
	jsonEnd := jsonStream.waitEnd(t, 10*time.Second)
	htmlEnd := htmlStream.waitEnd(t, 10*time.Second)
	gotJSON := false
	for _, line := range jsonEnd {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev struct{ Type, Reason string }
			if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "end" {
				gotJSON = true
				if ev.Reason != "server-shutdown" {
					t.Errorf("the hold stream ended with reason %q, want server-shutdown", ev.Reason)
				}
			}
		}
	}
	if !gotJSON {
		t.Errorf("the hold stream got no end event; its last lines: %q", lastN(jsonEnd, 5))
	}
	gotHTML := false
	for i, line := range htmlEnd {
		if line == "event: end" {
			gotHTML = true
			if i+1 >= len(htmlEnd) || htmlEnd[i+1] != "data: server-shutdown" {
				t.Errorf("the page stream's end event: %q, want data: server-shutdown", htmlEnd[i:])
			}
		}
	}
	if !gotHTML {
		t.Errorf("the page stream got no end event; its last lines: %q", lastN(htmlEnd, 5))
	}
}

// checkCallsAroundSignal: the load's calls asked before the signal were
// answered normally, those asked around or after it either normally or not
// at all.
func checkCallsAroundSignal(t *testing.T, calls []call, sigAt time.Time) {
	t.Helper()
	inFlight, late, refused := 0, 0, 0
	for _, c := range calls {
		switch {
		case c.Start.Before(sigAt.Add(-inFlightMargin)):
			if c.End.After(sigAt) {
				inFlight++
			}
			if c.Status == 0 || !normal(c.Status) {
				t.Errorf("%s asked %s before SIGTERM: got %d %s %s", c.Op, sigAt.Sub(c.Start).Round(time.Millisecond), c.Status, c.Body, c.Err)
			}
		case c.Status == 0:
			// Asked as the listener closed, or after.
			refused++
		default:
			late++
			if !normal(c.Status) {
				t.Errorf("%s asked around or after SIGTERM answered %d: %s", c.Op, c.Status, c.Body)
			}
		}
	}
	t.Logf("%d load requests still running at SIGTERM, %d asked around or after it answered, %d asked around or after it not answered", inFlight, late, refused)
}
