package web_test

// Per-address rate limits on the patient endpoints that create something
// and had none: POST /v1/holds (Options.APIHoldsPerMinute), and moving a
// booking by its manage link, through the API (PATCH /v1/appointments/:id)
// and the pages (POST /manage/:token/reschedule), which share
// Options.MovesPerMinute. Each answers 429 with Retry-After and an error
// naming the limit. The pages' hold form has its own tests in pages_test.go.
//
// Each test's client dials from a loopback address of its own, so the
// counts (kept in the shared Redis) are its alone. Every top-level
// identifier starts with rlc.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// rlcClient is a client (with a cookie jar, not following redirects) whose
// connections come from a random 127.x.y.z address.
func rlcClient(t *testing.T) *http.Client { return stfNewClient(t, "").hc }

// rlcDo sends one request; body is sent as JSON unless it is url.Values
// (a form). hdr are name, value pairs.
func rlcDo(t *testing.T, hc *http.Client, method, u string, body any, hdr ...string) reply {
	t.Helper()
	var r io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		r, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r, ct = strings.NewReader(string(raw)), "application/json"
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// rlcWantLimitedJSON asserts a 429 RATE_LIMITED in the API's error shape
// that names the limit, with Retry-After within the window.
func rlcWantLimitedJSON(t *testing.T, r reply, what string, limit int) {
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

// rlcWantLimitedPage asserts a 429 whose hold panel says what the limit is,
// with Retry-After.
func rlcWantLimitedPage(t *testing.T, r reply, what string, limit int) {
	t.Helper()
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", r.Status, pgClip(string(r.Body), 1500))
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After %q, want 1..60 s", r.Header.Get("Retry-After"))
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(r.Body)))
	if err != nil {
		t.Fatal(err)
	}
	msg := pgText(doc.Find(`[data-testid="problem"]`))
	if want := fmt.Sprintf("Too many %s from this connection: at most %d per minute.", what, limit); !strings.Contains(msg, want) {
		t.Errorf("problem panel %q, want %q", msg, want)
	}
}

func TestRateLimitCreateAPIHoldsPerIP(t *testing.T) {
	t.Parallel()
	a := bootAPIOn(t, testkit.DB(t), nil, web.Options{APIHoldsPerMinute: 3})
	c := a.clinic(t, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	hc := rlcClient(t)
	pgNextQuietMinute()
	var codes []int
	var limited []reply
	for i := range 5 {
		r := rlcDo(t, hc, "POST", a.url+"/v1/holds", holdBody(typeID, slotAt(t, 9, 30*i), clientID()),
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
		rlcWantLimitedJSON(t, r, "holds", 3)
	}
	// The limit is the address's: another address holds at once.
	if r := rlcDo(t, rlcClient(t), "POST", a.url+"/v1/holds", holdBody(typeID, slotAt(t, 12, 0), clientID())); r.Status != http.StatusCreated {
		t.Fatalf("a hold from another address: %d %s", r.Status, r.Body)
	}
}

func TestRateLimitCreateAPIMovesPerIP(t *testing.T) {
	t.Parallel()
	a := bootAPIOn(t, testkit.DB(t), nil, web.Options{MovesPerMinute: 2})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	mine := clientID()
	b := a.book(t, typeID, a.hold(t, typeID, slotAt(t, 10, 0), mine), mine)
	hc := rlcClient(t)
	id, etag := b.Appointment.ID.String(), `"v1"`
	move := func(hh int) reply {
		t.Helper()
		return rlcDo(t, hc, "PATCH", a.url+"/v1/appointments/"+id, map[string]string{"slotStartDate": rfc(slotAt(t, hh, 0))},
			"Authorization", "Bearer "+b.ManageToken, "If-Match", etag)
	}
	pgNextQuietMinute()
	for _, hh := range []int{11, 12} {
		r := move(hh)
		if r.Status != http.StatusOK {
			t.Fatalf("move to %d:00: %d %s", hh, r.Status, r.Body)
		}
		var body struct {
			Appointment appointmentView `json:"appointment"`
		}
		r.into(t, &body)
		id, etag = body.Appointment.ID.String(), r.Header.Get("ETag")
	}
	rlcWantLimitedJSON(t, move(13), "moves", 2)
	// The refused move changed nothing.
	r := a.do(t, "GET", "/v1/appointments/"+id, nil, bearer(b.ManageToken)...)
	var got struct {
		Appointment appointmentView `json:"appointment"`
	}
	r.into(t, &got)
	if r.Status != http.StatusOK || got.Appointment.SlotStartDate != rfc(slotAt(t, 12, 0)) || r.Header.Get("ETag") != etag {
		t.Fatalf("after the refused move: %d %s (ETag %s, want %s)", r.Status, r.Body, r.Header.Get("ETag"), etag)
	}
}

func TestRateLimitCreatePageMovesPerIP(t *testing.T) {
	t.Parallel()
	a := bootAPIOn(t, testkit.DB(t), nil, web.Options{MovesPerMinute: 2})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typeID := c.Types[0].ID
	mine := clientID()
	b := a.book(t, typeID, a.hold(t, typeID, slotAt(t, 10, 0), mine), mine)
	browser := rlcClient(t)
	path := a.url + "/manage/" + b.ManageToken + "/reschedule"
	move := func(hh int, hdr ...string) reply {
		t.Helper()
		return rlcDo(t, browser, "POST", path, url.Values{"start": {rfc(slotAt(t, hh, 0))}},
			append([]string{"Accept", pgBrowserAccept}, hdr...)...)
	}
	pgNextQuietMinute()
	for _, hh := range []int{11, 12} {
		if r := move(hh); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/manage/"+b.ManageToken {
			t.Fatalf("move to %d:00: %d to %q: %s", hh, r.Status, r.Header.Get("Location"), pgClip(string(r.Body), 1500))
		}
	}
	// Without JavaScript: the whole page around the panel.
	r := move(13)
	rlcWantLimitedPage(t, r, "moves", 2)
	if !strings.Contains(string(r.Body), "<html") {
		t.Errorf("the answer without htmx is not a whole page: %s", pgClip(string(r.Body), 500))
	}
	// With htmx: the panel alone.
	r = move(13, "HX-Request", "true")
	rlcWantLimitedPage(t, r, "moves", 2)
	if strings.Contains(string(r.Body), "<html") {
		t.Errorf("the answer to htmx is a whole page")
	}
	// The booking stays at 12:00.
	now, err := a.deps.Bookings.ByManageToken(t.Context(), b.ManageToken)
	if err != nil || !now.Start.Equal(slotAt(t, 12, 0)) || now.Status != "confirmed" {
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
	proxy := stfNewClient(t, "")
	a := bootAPIOn(t, testkit.DB(t), nil, web.Options{APIHoldsPerMinute: 3,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix(proxy.IP + "/32")}})
	c := a.clinic(t, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	slot := 0
	hold := func(hc *http.Client, forwarded string) int {
		t.Helper()
		start := slotAt(t, 9+slot/2, 30*(slot%2))
		slot++
		r := rlcDo(t, hc, "POST", a.url+"/v1/holds", holdBody(typeID, start, clientID()), "X-Forwarded-For", forwarded)
		if r.Status != http.StatusCreated && r.Status != http.StatusTooManyRequests {
			t.Fatalf("hold at %s: %d %s", start, r.Status, r.Body)
		}
		return r.Status
	}
	pgNextQuietMinute()
	var codes []int
	for i := range 4 {
		codes = append(codes, hold(proxy.hc, fmt.Sprintf("198.51.100.%d", i+1)))
	}
	if !slices.Equal(codes, []int{201, 201, 201, 201}) {
		t.Fatalf("four patients behind the proxy: %v, want each its own budget", codes)
	}
	codes = nil
	for range 3 {
		codes = append(codes, hold(proxy.hc, "198.51.100.9"))
	}
	codes = append(codes, hold(proxy.hc, "203.0.113.50, 198.51.100.9")) // a made-up address in front
	if !slices.Equal(codes, []int{201, 201, 201, 429}) {
		t.Fatalf("one patient behind the proxy: %v, want 3 × 201 then 429", codes)
	}
	codes = nil
	direct := rlcClient(t)
	for i := range 4 {
		codes = append(codes, hold(direct, fmt.Sprintf("198.51.100.%d", 20+i)))
	}
	if !slices.Equal(codes, []int{201, 201, 201, 429}) {
		t.Fatalf("a peer that is not the proxy, forwarding four addresses: %v, want 3 × 201 then 429", codes)
	}
	// One IPv6 subscriber has a whole /64: its addresses share one budget.
	codes = nil
	for i := range 4 {
		codes = append(codes, hold(proxy.hc, fmt.Sprintf("2001:db8:7:9::%x", i+1)))
	}
	if !slices.Equal(codes, []int{201, 201, 201, 429}) {
		t.Fatalf("four addresses of one IPv6 /64: %v, want 3 × 201 then 429", codes)
	}
}
