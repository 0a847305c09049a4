package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

// roundRobin sends each request to the next instance, as a proxy in front
// of them does, and tries the next one when an instance is not there: a
// connection refused (its listener is closed: it is stopping or not yet
// started), or reset before any answer within closeWindow
// around the instance being told to stop (see closeWindow). Every other
// failure is the request's own.
type roundRobin struct {
	client *http.Client
	urls   []string

	mu       sync.Mutex
	next     int
	stopped  map[string]time.Time // when each instance was last told to stop
	refused  int                  // tries refused and sent on
	resetAt  int                  // tries reset at a listener's close and sent on
	failures []string             // transport errors of requests a server had accepted
}

// closeWindow is how near an instance's SIGTERM a request reset before
// any answer counts as one the server never accepted (its connection was
// in the kernel's queue when the listener closed, a few milliseconds after
// the signal): asked from inFlightMargin before the signal (as in
// TestSIGTERMDrainsGracefully) to a second after it. A reset of a request
// asked earlier is a failure: the server had it.
const closeWindow = time.Second

func newRoundRobin(urls ...string) *roundRobin {
	return &roundRobin{client: newClient(), urls: urls, stopped: map[string]time.Time{}}
}

// stopping notes that the instance at url is told to stop now.
func (r *roundRobin) stopping(url string) {
	r.mu.Lock()
	r.stopped[url] = time.Now()
	r.mu.Unlock()
}

func (r *roundRobin) pick() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.urls[r.next%len(r.urls)]
	r.next++
	return u
}

// do sends the request newReq makes for an instance's URL until an
// instance answers, and reads the answer; a failure of an accepted request
// is status 0.
func (r *roundRobin) do(newReq func(base string) (*http.Request, error)) (int, []byte, http.Header) {
	res, err := r.send(r.client, newReq)
	if err != nil {
		return r.fail(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return r.fail(fmt.Errorf("%s %s: reading the answer: %w", res.Request.Method, res.Request.URL.Path, err))
	}
	return res.StatusCode, b, res.Header
}

// send sends the request until an instance answers, and returns the
// answer unread.
func (r *roundRobin) send(client *http.Client, newReq func(base string) (*http.Request, error)) (*http.Response, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		base := r.pick()
		req, err := newReq(base)
		if err != nil {
			return nil, err
		}
		asked := time.Now()
		res, err := client.Do(req)
		switch {
		case err == nil:
			return res, nil
		case req.Context().Err() != nil:
			return nil, err
		case errors.Is(err, syscall.ECONNREFUSED):
			r.count(&r.refused)
		case r.resetAtClose(base, asked, err):
			r.count(&r.resetAt)
		default:
			return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, errors.New("no instance answered for 30 s")
}

func (r *roundRobin) resetAtClose(base string, asked time.Time, err error) bool {
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false
	}
	r.mu.Lock()
	at, ok := r.stopped[base]
	r.mu.Unlock()
	return ok && asked.After(at.Add(-inFlightMargin)) && asked.Before(at.Add(closeWindow))
}

func (r *roundRobin) count(n *int) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}

func (r *roundRobin) fail(err error) (int, []byte, http.Header) {
	r.mu.Lock()
	r.failures = append(r.failures, err.Error())
	r.mu.Unlock()
	return 0, nil, nil
}

// tally is what the round robin counted.
func (r *roundRobin) tally() (refused, resetAt int, failures []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused, r.resetAt, append([]string(nil), r.failures...)
}

// watcher keeps a booking page's stream open across the instances: when
// its instance ends it ("end" with "server-shutdown") or goes away, it
// connects again through the round robin, and each connection must start
// with the grid's state (a snapshot: the page resyncs).
type watcher struct {
	rr   *roundRobin
	path string
	stop chan struct{}
	done chan struct{}

	mu         sync.Mutex
	connects   int
	ends       int           // "end" events, each followed by a reconnect
	maxResync  time.Duration // longest wait from a connect to its first event
	maxGap     time.Duration // longest time from losing a stream to the next one's first event
	lost       time.Time     // when the last connection ended
	noSnapshot int           // connections that ended before their first event
	problems   []string
}

func watch(rr *roundRobin, path string) *watcher {
	w := &watcher{rr: rr, path: path, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *watcher) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		w.once()
	}
}

// once is one connection of the stream, read until it ends or the watch
// stops.
func (w *watcher) once() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err := w.rr.send(streamClient, func(base string) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, base+w.path, nil)
	})
	if err != nil {
		if ctx.Err() == nil {
			w.problem(err.Error())
		}
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		w.problem(fmt.Sprintf("the stream answered %d", res.StatusCode))
		time.Sleep(100 * time.Millisecond)
		return
	}
	w.read(ctx, res.Body, time.Now())
}

// streamClient has no timeout: a stream is open as long as it lasts.
var streamClient = &http.Client{Transport: patientTransport()}

func (w *watcher) read(ctx context.Context, body io.Reader, connected time.Time) {
	w.mu.Lock()
	w.connects++
	w.mu.Unlock()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "event: ") {
			continue
		}
		if first {
			first = false
			w.mu.Lock()
			w.maxResync = max(w.maxResync, time.Since(connected))
			if !w.lost.IsZero() {
				w.maxGap = max(w.maxGap, time.Since(w.lost))
			}
			w.mu.Unlock()
		}
		if line == "event: end" {
			w.mu.Lock()
			w.ends++
			w.mu.Unlock()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lost = time.Now()
	if first && ctx.Err() == nil {
		w.noSnapshot++
	}
}

func (w *watcher) problem(p string) {
	w.mu.Lock()
	w.problems = append(w.problems, p)
	w.mu.Unlock()
}

// watched is what a watch saw.
type watched struct {
	connects, ends, noSnapshot int
	maxResync, maxGap          time.Duration
	problems                   []string
}

// finish stops the watch and says what it saw.
func (w *watcher) finish() watched {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return watched{w.connects, w.ends, w.noSnapshot, w.maxResync, w.maxGap, w.problems}
}
