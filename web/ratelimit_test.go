package web_test

// The per-address and per-account rate limits on what creates something:
// POST /v1/holds (Options.APIHoldsPerMinute); moving a booking by its
// manage link, through the API (PATCH /v1/appointments/:id) and the pages
// (POST /manage/:token/reschedule), which share Options.MovesPerMinute;
// the pages' hold form (Options.HoldsPerMinute); and staff changes
// (Options.StaffWritesPerMinute). Each answers 429 with Retry-After and an
// error naming the limit.
//
// Each test's app keeps counts of its own; its browsers dial from loopback
// addresses chosen for the test (one address for all of them where the
// test is about one network).

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

// wantLimitedJSON asserts a 429 RATE_LIMITED in the API's error shape
// that names the limit, with Retry-After within the window.
func wantLimitedJSON(t *testing.T, r *response, what string, limit int) {
	t.Helper()
	e := wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
	if s := retryAfter(t, r); s > 60 {
		t.Errorf("Retry-After %d s, beyond the one-minute window", s)
	}
	if want := fmt.Sprintf("Too many %s from this connection: at most %d per minute.", what, limit); !strings.HasPrefix(e.Error.Message, want) {
		t.Errorf("message %q, want it to start with %q", e.Error.Message, want)
	}
	if e.Error.Details["limit"] != float64(limit) || e.Error.Details["windowSeconds"] != float64(60) {
		t.Errorf("details %v, want limit %d per 60 s", e.Error.Details, limit)
	}
}

// wantLimitedPage asserts a 429 whose hold panel says what the limit is,
// with Retry-After.
func wantLimitedPage(t *testing.T, r *response, what string, limit int) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", r.Status, clip(r.Body, 1500))
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After %q, want 1..60 s", r.Header.Get("Retry-After"))
	}
	msg := r.Text(`[data-testid="problem"]`)
	if want := fmt.Sprintf("Too many %s from this connection: at most %d per minute.", what, limit); !strings.Contains(msg, want) {
		t.Errorf("problem panel %q, want %q", msg, want)
	}
}

func TestRateLimitCreateAPIHoldsPerIP(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{APIHoldsPerMinute: 3}))
	c := a.clinic(t, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	cl := a.newClient(t)
	avoidWindowEdge(10 * time.Second)
	var codes []int
	var limited []*response
	for i := range 5 {
		r := cl.send("POST", "/v1/holds", holdBody(typeID, c.Monday(9, 30*i), clientID()),
			"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1)) // not trusted: no proxy is configured
		codes = append(codes, r.Status)
		if r.Status == http.StatusTooManyRequests {
			limited = append(limited, r)
		}
	}
	if codes[0] != 201 || codes[1] != 201 || codes[2] != 201 || codes[3] != 429 || codes[4] != 429 {
		t.Fatalf("five holds from one address, each with its own X-Forwarded-For: %v, want 3 × 201 then 429", codes)
	}
	for _, r := range limited {
		wantLimitedJSON(t, r, "holds", 3)
	}
	// The limit is the address's: another address holds at once.
	if r := a.newClient(t).send("POST", "/v1/holds", holdBody(typeID, c.Monday(12, 0), clientID())); r.Status != http.StatusCreated {
		t.Fatalf("a hold from another address: %d %s", r.Status, r.Body)
	}
}

func TestRateLimitCreateAPIMovesPerIP(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{MovesPerMinute: 2}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	mine := clientID()
	b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), mine), mine)
	cl := a.newClient(t)
	id, etag := b.Appointment.ID.String(), `"v1"`
	move := func(hh int) *response {
		t.Helper()
		return cl.send("PATCH", "/v1/appointments/"+id, map[string]string{"slotStartDate": rfc(c.Monday(hh, 0))},
			"Authorization", "Bearer "+b.ManageToken, "If-Match", etag)
	}
	avoidWindowEdge(10 * time.Second)
	for _, hh := range []int{11, 12} {
		r := move(hh)
		if r.Status != http.StatusOK {
			t.Fatalf("move to %d:00: %d %s", hh, r.Status, r.Body)
		}
		var body appointmentAnswer
		r.Decode(&body)
		id, etag = body.Appointment.ID.String(), r.Header.Get("ETag")
	}
	wantLimitedJSON(t, move(13), "moves", 2)
	// The refused move changed nothing.
	r := a.do(t, "GET", "/v1/appointments/"+id, nil, bearer(b.ManageToken)...)
	var got appointmentAnswer
	r.Decode(&got)
	if r.Status != http.StatusOK || got.Appointment.SlotStartDate != rfc(c.Monday(12, 0)) || r.Header.Get("ETag") != etag {
		t.Fatalf("after the refused move: %d %s (ETag %s, want %s)", r.Status, r.Body, r.Header.Get("ETag"), etag)
	}
}

func TestRateLimitCreatePageMovesPerIP(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{MovesPerMinute: 2}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	mine := clientID()
	b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), mine), mine)
	browser := a.newClient(t)
	path := "/manage/" + b.ManageToken + "/reschedule"
	move := func(hh int, hdr ...string) *response {
		t.Helper()
		return browser.send("POST", path, url.Values{"start": {rfc(c.Monday(hh, 0))}, "confirm": {"yes"}},
			append([]string{"Accept", browserAccept}, hdr...)...)
	}
	avoidWindowEdge(10 * time.Second)
	for _, hh := range []int{11, 12} {
		if r := move(hh); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/manage/"+b.ManageToken {
			t.Fatalf("move to %d:00: %d to %q: %s", hh, r.Status, r.Header.Get("Location"), clip(r.Body, 1500))
		}
	}
	// Without JavaScript: the whole page around the panel.
	r := move(13)
	wantLimitedPage(t, r, "moves", 2)
	if !strings.Contains(r.Body, "<html") {
		t.Errorf("the answer without htmx is not a whole page: %s", clip(r.Body, 500))
	}
	// With htmx: the panel alone.
	r = move(13, "HX-Request", "true")
	wantLimitedPage(t, r, "moves", 2)
	if strings.Contains(r.Body, "<html") {
		t.Errorf("the answer to htmx is a whole page")
	}
	// The booking stays at 12:00.
	now, err := a.Deps.Bookings.ByManageToken(t.Context(), b.ManageToken)
	if err != nil || !now.Start.Equal(c.Monday(12, 0)) || now.Status != "confirmed" {
		t.Fatalf("after the refused moves: %+v %v", now, err)
	}
}

// Behind a trusted proxy (TRUSTED_PROXIES) the limit is each forwarded
// client's: patients behind one load balancer do not share its budget. The
// address counted is the nearest one the proxy did not write, so a client
// cannot pick its own by adding to the header; a peer that is not a
// trusted proxy is counted by its own address, whatever it forwards.
func TestRateLimitBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	proxyIP := randomLoopback()
	a := newApp(t, withOptions(program.Options{APIHoldsPerMinute: 3,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix(proxyIP + "/32")}}))
	proxy := a.clientAt(t, proxyIP)
	c := a.clinic(t, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	slot := 0
	hold := func(cl *client, forwarded string) int {
		t.Helper()
		start := c.Monday(9+slot/2, 30*(slot%2))
		slot++
		r := cl.send("POST", "/v1/holds", holdBody(typeID, start, clientID()), "X-Forwarded-For", forwarded)
		if r.Status != http.StatusCreated && r.Status != http.StatusTooManyRequests {
			t.Fatalf("hold at %s: %d %s", start, r.Status, r.Body)
		}
		return r.Status
	}
	avoidWindowEdge(10 * time.Second)
	var codes []int
	for i := range 4 {
		codes = append(codes, hold(proxy, fmt.Sprintf("198.51.100.%d", i+1)))
	}
	if !slices.Equal(codes, []int{201, 201, 201, 201}) {
		t.Fatalf("four patients behind the proxy: %v, want each its own budget", codes)
	}
	codes = nil
	for range 3 {
		codes = append(codes, hold(proxy, "198.51.100.9"))
	}
	codes = append(codes, hold(proxy, "203.0.113.50, 198.51.100.9")) // a made-up address in front
	if !slices.Equal(codes, []int{201, 201, 201, 429}) {
		t.Fatalf("one patient behind the proxy: %v, want 3 × 201 then 429", codes)
	}
	codes = nil
	direct := a.newClient(t)
	for i := range 4 {
		codes = append(codes, hold(direct, fmt.Sprintf("198.51.100.%d", 20+i)))
	}
	if !slices.Equal(codes, []int{201, 201, 201, 429}) {
		t.Fatalf("a peer that is not the proxy, forwarding four addresses: %v, want 3 × 201 then 429", codes)
	}
	// One IPv6 subscriber has a whole /64: its addresses share one budget.
	codes = nil
	for i := range 4 {
		codes = append(codes, hold(proxy, fmt.Sprintf("2001:db8:7:9::%x", i+1)))
	}
	if !slices.Equal(codes, []int{201, 201, 201, 429}) {
		t.Fatalf("four addresses of one IPv6 /64: %v, want 3 × 201 then 429", codes)
	}
}

func TestPageHoldRateLimitPerIP(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{HoldsPerMinute: 3}))
	c := a.patientClinic(t)
	ip := randomLoopback()
	typ, sp := c.Type0(), c.Specialists[0]
	avoidWindowEdge(10 * time.Second)
	var codes []int
	var limited *response
	for i := range 5 {
		// A new browser each time, on another slot: only the IP is the same.
		cl := a.clientAt(t, ip)
		start := c.At(5, 9, 30*i)
		r := cl.Post(c.BookPath(typ)+"/hold?week="+c.Week(start)+"&specialist="+sp.ID.String(),
			url.Values{"start": {start.UTC().Format(time.RFC3339)}, "specialist": {sp.ID.String()}})
		codes = append(codes, r.Status)
		switch r.Status {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			limited = r
			if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 61 {
				t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
			}
			if !strings.Contains(text(r.Doc().Find(`[data-testid="problem"]`)), "Too many tries") {
				t.Errorf("429 panel %q", text(panelOf(r)))
			}
		default:
			t.Fatalf("hold %d: %d %s", i, r.Status, text(panelOf(r)))
		}
	}
	ok := 0
	for _, code := range codes {
		if code == http.StatusOK {
			ok++
		}
	}
	// Other tests' holds from 127.0.0.1 may share the window: at most 3 pass.
	if ok > 3 || codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests || limited == nil {
		t.Fatalf("statuses %v: want at most 3 holds, then 429", codes)
	}
	wantFullPage(t, limited)
}

// The limit is per IP: a header the client writes itself must not give it
// another IP (the app is not configured to trust a proxy).
func TestPageHoldRateLimitIgnoresForwardedForFromClients(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{HoldsPerMinute: 3}))
	c := a.patientClinic(t)
	ip := randomLoopback()
	typ, sp := c.Type0(), c.Specialists[1]
	avoidWindowEdge(10 * time.Second)
	var codes []int
	for i := range 5 {
		cl := a.clientAt(t, ip)
		cl.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", 10+i+int(time.Now().UnixNano()%200)))
		start := c.At(6, 9, 30*i)
		r := cl.Post(c.BookPath(typ)+"/hold", url.Values{"start": {start.UTC().Format(time.RFC3339)}, "specialist": {sp.ID.String()}})
		codes = append(codes, r.Status)
	}
	if codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests {
		t.Fatalf("five holds from one connection, each with its own X-Forwarded-For: statuses %v; the per-IP limit of 3 was bypassed", codes)
	}
}

// Staff changes are limited per account: past the limit a change is
// refused with 429, Retry-After and a message naming the limit, reading
// still works, and another account of the clinic is not affected.
func TestStaffChangesAreRateLimitedPerAccount(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{StaffWritesPerMinute: 3}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	for i := range 3 {
		admin.Post("/staff/kiosks", url.Values{"name": {"Lobby " + string(rune('A'+i))}}).Want(http.StatusCreated)
	}
	r := admin.Post("/staff/kiosks", url.Values{"name": {"One too many"}}).Want(http.StatusTooManyRequests)
	if r.Header.Get("Retry-After") == "" {
		t.Error("a refused change has no Retry-After")
	}
	if !strings.Contains(r.Body, "at most 3 per minute") {
		t.Errorf("the refusal does not name the limit: %s", clip(r.Body, 300))
	}
	admin.Get("/staff/kiosks").Want(http.StatusOK)

	other := a.signIn(t, a.newAccount(t, c.ID, "admin"))
	other.Post("/staff/kiosks", url.Values{"name": {"Front desk"}}).Want(http.StatusCreated)
}

// Claims the live view refuses (the time is held by another patient) are
// answered without counting against the address's limit: only the claims
// that reach Redis count.
func TestRateLimitCountsOnlyClaimsTheViewDoesNotRefuse(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{APIHoldsPerMinute: 2}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	monday := c.Monday(9, 0)
	avoidWindowEdge(10 * time.Second)
	a.do(t, "GET", c.BookURL(c.Type0(), monday, uuid.Nil), nil).Want(http.StatusOK) // builds the week's view
	cl := a.newClient(t)
	if r := cl.send("POST", "/v1/holds", holdBody(typeID, monday, clientID())); r.Status != http.StatusCreated {
		t.Fatalf("the first hold: %d %s", r.Status, r.Body)
	}
	for range 5 {
		wantError(t, cl.send("POST", "/v1/holds", holdBody(typeID, monday, clientID())), http.StatusLocked, "SLOT_HELD", "")
	}
	if r := cl.send("POST", "/v1/holds", holdBody(typeID, monday.Add(time.Hour), clientID())); r.Status != http.StatusCreated {
		t.Fatalf("the second hold of a free time after five refused claims: %d %s", r.Status, r.Body)
	}
	wantLimitedJSON(t, cl.send("POST", "/v1/holds", holdBody(typeID, monday.Add(2*time.Hour), clientID())), "holds", 2)
}
