package web_test

// Tests of the cap on the event streams one client address network keeps
// open (STREAMS_PER_ADDRESS).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"runtime"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

// streamFrom opens url as if from the address from (the test server trusts
// loopback as its proxy), and returns the answer unread with its abort.
func streamFrom(t *testing.T, client *http.Client, url, from string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Forwarded-For", from)
	res, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", url, err)
	}
	abort := func() { cancel(); _ = res.Body.Close() }
	t.Cleanup(abort)
	return res, abort
}

// wantStreamLimit fails unless res is the refusal of a stream past the
// address's limit: 429 RATE_LIMITED with Retry-After.
func wantStreamLimit(t *testing.T, res *http.Response, what string) {
	t.Helper()
	if res.StatusCode == http.StatusOK {
		t.Fatalf("%s: 200 %s, want 429", what, res.Header.Get("Content-Type"))
	}
	b, _ := io.ReadAll(res.Body)
	r := &response{Status: res.StatusCode, Header: res.Header, Body: string(b), t: t, what: what}
	wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
	retryAfter(t, r)
}

// Fifty streams from one address network are served, the fifty-first is
// refused, a closed stream frees its place, and closing them all gives
// back every goroutine they took. Staff signed in are not counted; other
// networks are not affected.
func TestStreamsPerAddress(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	a := newApp(t, withOptions(program.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typ := c.Types[0].ID
	page := a.URL + "/c/" + c.Slug + "/book/" + typ.String() + "/live?week=" + c.Monday(9, 0).Format("2006-01-02")
	// One hold stream per client id: a client's new one replaces its last.
	holdStream := func(i int) string { return a.URL + holdStreamPath(typ, liveClient(fmt.Sprintf("many-%d", i)), "") }
	kiosk := a.URL + "/kiosk/" + c.Slug + "/live"
	// One network: a /64 of IPv6 addresses, each stream from another one.
	from := func(i int) string { return fmt.Sprintf("2001:db8:7:1::%x", i+1) }
	const stranger, neighbour = "2001:db8:7:1::ffff", "2001:db8:7:2::1"

	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	t.Cleanup(tr.CloseIdleConnections)
	runtime.GC()
	baseline := runtime.NumGoroutine()

	// Page grids, kiosk boards and the API's hold stream all count.
	urls := func(i int) string { return []string{page, holdStream(i), kiosk}[i%3] }
	open := make([]*sseConn, 0, 50)
	for i := range 50 {
		res, cancel := streamFrom(t, client, urls(i), from(i))
		if res.StatusCode != http.StatusOK {
			cancel()
			t.Fatalf("stream %d of 50: %d, want 200", i+1, res.StatusCode)
		}
		s := readSSEStream(t, res, cancel)
		s.must(evWait, "the stream's first block")
		open = append(open, s)
	}
	for i := range 3 {
		u := urls(50 + i)
		res, cancel := streamFrom(t, client, u, stranger)
		wantStreamLimit(t, res, "the 51st stream, "+u)
		cancel()
	}

	// Another network is not affected, nor is a signed-in staff member
	// of the same one.
	res, cancel := streamFrom(t, client, page, neighbour)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a stream from another network: %d, want 200", res.StatusCode)
	}
	cancel()
	admin := a.signIn(t, c.Admin)
	res, cancel = streamFrom(t, admin.hc, a.URL+"/staff/live?date="+c.Monday(9, 0).Format(time.DateOnly)+"&view=day", stranger)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a staff stream from the full network: %d, want 200", res.StatusCode)
	}
	cancel()

	// A closed stream frees its place (once the server sees it go).
	open[0].cancel()
	testkit.WaitFor(t, evWait, "the closed stream's place", func() bool {
		res, cancel := streamFrom(t, client, page, stranger)
		if res.StatusCode != http.StatusOK {
			cancel()
			return false
		}
		open[0] = readSSEStream(t, res, cancel)
		return true
	})
	if n := a.metricSum(t, "clinic_streams_refused_total"); n < 3 {
		t.Fatalf("clinic_streams_refused_total = %v, want at least the 3 refusals", n)
	}

	for _, s := range open {
		s.cancel()
	}
	tr.CloseIdleConnections()
	testkit.WaitFor(t, 10*time.Second, "the goroutines back to their number before the streams", func() bool {
		return runtime.NumGoroutine() <= baseline+5
	})
	res, cancel = streamFrom(t, client, page, stranger)
	defer cancel()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a stream after all were closed: %d, want 200", res.StatusCode)
	}
}
