package web_test

// Fuzz targets for the query and path parameters of the HTML pages and the
// live streams, the JSON GET endpoints' query parameters, the signed-in
// staff pages, and the form bodies of the patient page POSTs, against the
// real app (PostgreSQL, Redis). Every answer must be below 500 and must not
// show an internal: a stack, a panic, SQL or a driver's error (fzpLeaks),
// unless the request itself carried that text (a page may echo a search).
// A stream answering 200 is read for its first bytes only.
//
// Without -fuzz they run their seed corpus (part of `make test`):
//
//	go test ./web -run '^$' -fuzz '^FuzzPagesPatient$' -fuzztime 15s
//
// Every top-level identifier starts with fzp.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinic/booking/web"
)

// fzpLeaks are what no answer may show: Go stacks and panics, SQL, the
// database driver's errors, source positions.
var fzpLeaks = []string{"goroutine ", "panic", "runtime error", "SQLSTATE", "pgx", "sql:", "SELECT ", "INSERT ", ".go:"}

const (
	fzpPageTimeout = 15 * time.Second       // a page slower than this is a finding too
	fzpStreamRead  = 300 * time.Millisecond // how long a stream's first bytes may take once it answered
)

// fzpTricky are values every parameter is tried with in the seed corpus.
var fzpTricky = []string{
	"",
	strings.Repeat("a", 4096),
	"../../../../etc/passwd",
	"..%2F..%2Fstaff",
	"%00",
	"\x00",
	"%",
	"Zürich ☃ 日本語 \u202e",
	"-1",
	"-2026-01-05",
	"99999-01-01",
	"0000-01-01",
	"0001-01-01",
	"9999-12-31",
	"2026-02-30",
	"00000000-0000-0000-0000-00000000000g",
	"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
	"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8",
	"' OR 1=1 --",
	"1; DROP TABLE bookings; --",
	"%_\\",
	"9223372036854775808",
}

// fzpApp is the app with a clinic, a booking (with its manage link), a
// second clinic whose kiosk needs a device token, and a signed-in admin.
type fzpApp struct {
	url      string
	c        pgClinic
	token    string // the booking's manage token
	kiosk    pgClinic
	device   string // a valid device token for kiosk's board
	patient  *http.Client
	staff    *http.Client // signed in
	monday   time.Time
	mondayQS string
}

var (
	fzpMu     sync.Mutex
	fzpShared *fzpApp
)

// fzpBoot makes the page targets' clinics, accounts and clients once per
// test process, on the shared fuzz server.
func fzpBoot(f *testing.F) *fzpApp {
	f.Helper()
	fzpMu.Lock()
	defer fzpMu.Unlock()
	if fzpShared != nil {
		return fzpShared
	}
	srv := bootFuzzServer(f)
	ts, deps, pool, rdb := srv.ts, srv.deps, srv.pool, srv.rdb

	c := pgNewClinic(f, pool)
	app := &pgApp{TS: ts, Deps: deps, Pool: pool}
	conf := pgBookDirect(f, app, c, c.Type0(), c.Specialists[0].ID, c.At(3, 10, 0), "Fuzz Patient")

	kiosk := pgNewClinic(f, pool)
	admin := stfNewAccount(f, pool, kiosk.ID, "admin")
	device, err := deps.Staff.CreateKioskToken(context.Background(), stfUserOf(admin, kiosk.ID), "fuzz screen")
	if err != nil {
		f.Fatal(err)
	}

	sa := &stfApp{TS: ts, Deps: deps, Pool: pool, RDB: rdb}
	staff := stfSignIn(f, sa, stfNewAccount(f, pool, c.ID, "admin"))

	jar, err := cookiejar.New(nil)
	if err != nil {
		f.Fatal(err)
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	monday := pgMonday(c, c.At(7, 10, 0))
	fzpShared = &fzpApp{
		url: ts.URL, c: c, token: conf.ManageToken, kiosk: kiosk, device: device,
		patient: &http.Client{Jar: jar, CheckRedirect: noRedirect},
		staff:   staff.hc,
		monday:  monday, mondayQS: c.Week(monday),
	}
	return fzpShared
}

// fzpSeg is a path segment: as given when raw and it can go in a URL as
// is, escaped otherwise.
func fzpSeg(s string, raw bool) string {
	if raw {
		ok := !strings.ContainsAny(s, "?#")
		for i := 0; ok && i < len(s); i++ {
			ok = s[i] > 0x20 && s[i] < 0x7f
		}
		if _, err := url.Parse("http://x/" + s); ok && err == nil {
			return s
		}
	}
	return url.PathEscape(s)
}

// fzpQuery encodes name, value pairs; empty values are sent too.
func fzpQuery(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}

// fzpFetch sends one request and returns the status and the body, or, for
// a stream that answered, its first bytes.
func fzpFetch(t testing.TB, hc *http.Client, method, u string, body []byte, hdr ...string) (int, []byte) {
	t.Helper()
	st, _, b := fzpFetchH(t, hc, method, u, body, hdr...)
	return st, b
}

// fzpFetchH is fzpFetch with the answer's header.
func fzpFetchH(t testing.TB, hc *http.Client, method, u string, body []byte, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fzpPageTimeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		t.Fatalf("%s %q: %v", method, u, err)
	}
	req.Header.Set("Accept", pgBrowserAccept)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	began := time.Now()
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (after %s)", method, fzpClip([]byte(u), 300), err, time.Since(began).Round(time.Millisecond))
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		stop := time.AfterFunc(fzpStreamRead, cancel)
		defer stop.Stop()
		buf := make([]byte, 16<<10)
		n, _ := io.ReadAtLeast(res.Body, buf, 1)
		return res.StatusCode, res.Header, buf[:n]
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, fzpClip([]byte(u), 300), err)
	}
	return res.StatusCode, res.Header, b
}

// fzpWant fails on a 5xx or an internal shown in the body.
func fzpWant(t testing.TB, what string, inputs []string, status int, body []byte) {
	t.Helper()
	if status >= 500 {
		t.Fatalf("%s: %d with inputs %q; body: %s", what, status, inputs, fzpClip(body, 2000))
	}
	for _, m := range fzpLeaks {
		if i := bytes.Index(body, []byte(m)); i >= 0 && !fzpReflected(m, inputs) {
			t.Fatalf("%s: %d; the body shows %q with inputs %q: …%s…", what, status, m, inputs, fzpClip(body[max(0, i-300):], 600))
		}
	}
}

// fzpReflected reports whether an input carries m (decoded or not): a page
// may echo what it was asked.
func fzpReflected(m string, inputs []string) bool {
	for _, in := range inputs {
		vs := []string{in}
		if u, err := url.PathUnescape(in); err == nil {
			vs = append(vs, u)
		}
		if u, err := url.QueryUnescape(in); err == nil {
			vs = append(vs, u)
		}
		for _, v := range vs {
			if strings.Contains(v, m) {
				return true
			}
		}
	}
	return false
}

func fzpClip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// fzpReaches fails the target unless the valid request answers want: the
// harness must reach the real page, not only its errors.
func fzpReaches(f *testing.F, hc *http.Client, method, u string, body []byte, want int, hdr ...string) {
	f.Helper()
	if st, b := fzpFetch(f, hc, method, u, body, hdr...); st != want {
		f.Fatalf("%s %s: %d, want %d: %s", method, u, st, want, fzpClip(b, 1000))
	}
}

// fzpSeeds adds, for each tricky value, the valid arguments with one of
// them (in turn) replaced by it, then the valid ones, all raw and escaped.
func fzpSeeds(f *testing.F, valid []string, add func(args []string, raw bool)) {
	f.Helper()
	add(valid, false)
	add(valid, true)
	for i, v := range fzpTricky {
		args := append([]string(nil), valid...)
		args[i%len(args)] = v
		add(args, i%2 == 1)
	}
}

// GET /, /c/:slug, /c/:slug/book/:typeId?week=&specialist= and its live
// stream (?week=&specialist=&state=).
func FuzzPagesPatient(f *testing.F) {
	a := fzpBoot(f)
	valid := []string{a.c.Slug, a.c.Type0().ID.String(), a.mondayQS, a.c.Specialists[0].ID.String(), "0123456789abcdef01234567"}
	fzpSeeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], s[4], raw) })
	book := a.url + "/c/" + a.c.Slug + "/book/" + valid[1]
	fzpReaches(f, a.patient, "GET", a.url+"/c/"+a.c.Slug, nil, http.StatusOK)
	fzpReaches(f, a.patient, "GET", book+fzpQuery("week", valid[2], "specialist", valid[3]), nil, http.StatusOK)
	fzpReaches(f, a.patient, "GET", book+"/live"+fzpQuery("week", valid[2], "specialist", valid[3], "state", valid[4]), nil, http.StatusOK)
	f.Fuzz(func(t *testing.T, slug, typeID, week, specialist, state string, raw bool) {
		in := []string{slug, typeID, week, specialist, state}
		q := fzpQuery("week", week, "specialist", specialist)
		base := a.url + "/c/" + fzpSeg(slug, raw)
		for _, u := range []string{
			a.url + "/" + q,
			base + q,
			base + "/book/" + fzpSeg(typeID, raw) + q,
			base + "/book/" + fzpSeg(typeID, raw) + "/live" + q + "&state=" + url.QueryEscape(state),
		} {
			st, body := fzpFetch(t, a.patient, "GET", u, nil)
			fzpWant(t, "GET "+fzpClip([]byte(u), 200), in, st, body)
		}
	})
}

var fzpHoldID = regexp.MustCompile(`name="holdId" value="([^"]+)"`)

// The form bodies of the patient page POSTs: hold, then confirm, heartbeat
// and release of the hold it got ("{hold}" in the body stands for its id),
// with htmx or without.
func FuzzPagesPatientForms(f *testing.F) {
	a := fzpBoot(f)
	typ, sp := a.c.Type0(), a.c.Specialists[1].ID.String()
	start := a.monday.UTC().Format(time.RFC3339)
	form := func(kv ...string) string { return fzpQuery(kv...)[1:] }
	for _, s := range []struct {
		week, body string
		htmx       bool
	}{
		{a.mondayQS, form("start", start, "specialist", sp, "holdId", "{hold}", "name", "Ada Lovelace", "email", "ada@example.com", "phone", "+44 20 7946 0000"), false},
		{a.mondayQS, form("start", start, "holdId", "{hold}", "name", "Ada", "email", "not-an-email"), true},
		{a.mondayQS, form("start", a.monday.Add(7*time.Minute).UTC().Format(time.RFC3339), "holdId", "{hold}"), false},
		{"", form("start", "9999-12-31T23:30:00Z", "specialist", "nope", "holdId", "h"+strings.Repeat("0", 52)), true},
		{"99999-01-01", form("start", "0000-01-01T00:00:00Z", "holdId", "../../x", "name", strings.Repeat("n", 5000)), false},
		{"-1", "start=%00&specialist=%ZZ&holdId=%&name=\x00", true},
		{a.mondayQS, form("start", start, "specialist", "' OR 1=1 --", "holdId", "{hold}", "name", "Robert'); DROP TABLE bookings;--", "email", "a@b.c"), false},
		{a.mondayQS, "\xff\xfe\x00;&&==&start", false},
		{a.mondayQS, form("start", "2026-03-29T02:30:00+01:00", "week", "0001-01-01", "holdId", "{hold}", "name", "Zürich ☃", "email", "ü@例え.jp"), true},
		{"", "", false},
	} {
		f.Add(s.week, []byte(s.body), s.htmx)
	}
	base := a.url + "/c/" + a.c.Slug + "/book/" + typ.ID.String()
	// The valid form holds, and the hold is released.
	st, got := fzpFetch(f, a.patient, "POST", base+"/hold"+fzpQuery("week", a.mondayQS), []byte(form("start", start, "specialist", sp)))
	m := fzpHoldID.FindSubmatch(got)
	if st != http.StatusOK || m == nil {
		f.Fatalf("the valid hold form: %d: %s", st, fzpClip(got, 1000))
	}
	fzpReaches(f, a.patient, "POST", base+"/release", []byte(form("holdId", string(m[1]))), http.StatusOK)
	f.Fuzz(func(t *testing.T, week string, body []byte, htmx bool) {
		in := []string{week, string(body)}
		var hdr []string
		if htmx {
			hdr = []string{"HX-Request", "true", "Accept", "text/html, */*"}
		}
		q := fzpQuery("week", week)
		st, got := fzpFetch(t, a.patient, "POST", base+"/hold"+q, body, hdr...)
		fzpWant(t, "POST hold", in, st, got)
		holdID := ""
		if m := fzpHoldID.FindSubmatch(got); m != nil {
			holdID = string(m[1])
		}
		filled := bytes.ReplaceAll(body, []byte("{hold}"), []byte(url.QueryEscape(holdID)))
		for _, step := range []string{"confirm", "heartbeat", "release"} {
			st, got := fzpFetch(t, a.patient, "POST", base+"/"+step+q, filled, hdr...)
			fzpWant(t, "POST "+step, in, st, got)
		}
		if holdID != "" {
			// Leave nothing held for the next input.
			st, got := fzpFetch(t, a.patient, "POST", base+"/release", []byte("holdId="+url.QueryEscape(holdID)))
			fzpWant(t, "POST release", in, st, got)
		}
	})
}

// GET /manage/:token, its .ics, the reschedule page (?week=) and its live
// stream (&state=), and the POSTs that ask to cancel (the question only)
// and to move (start).
func FuzzPagesManage(f *testing.F) {
	a := fzpBoot(f)
	valid := []string{a.token, a.mondayQS, "0123456789abcdef01234567", a.c.At(4, 11, 0).UTC().Format(time.RFC3339)}
	fzpSeeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], raw) })
	manage := a.url + "/manage/" + a.token
	fzpReaches(f, a.patient, "GET", manage, nil, http.StatusOK)
	fzpReaches(f, a.patient, "GET", manage+"/calendar.ics", nil, http.StatusOK)
	fzpReaches(f, a.patient, "GET", manage+"/reschedule"+fzpQuery("week", valid[1]), nil, http.StatusOK)
	fzpReaches(f, a.patient, "GET", manage+"/reschedule/live"+fzpQuery("week", valid[1]), nil, http.StatusOK)
	f.Fuzz(func(t *testing.T, token, week, state, start string, raw bool) {
		in := []string{token, week, state, start}
		base := a.url + "/manage/" + fzpSeg(token, raw)
		q := fzpQuery("week", week)
		for _, u := range []string{
			base + q,
			base + "/calendar.ics" + q,
			base + "/reschedule" + q,
			base + "/reschedule/live" + q + "&state=" + url.QueryEscape(state),
		} {
			st, body := fzpFetch(t, a.patient, "GET", u, nil)
			fzpWant(t, "GET "+fzpClip([]byte(u), 200), in, st, body)
		}
		st, body := fzpFetch(t, a.patient, "POST", base+"/cancel", []byte(fzpQuery("reason", start)[1:]))
		fzpWant(t, "POST cancel (asking)", in, st, body)
		st, body = fzpFetch(t, a.patient, "POST", base+"/reschedule"+q, []byte(fzpQuery("start", start)[1:]))
		fzpWant(t, "POST reschedule", in, st, body)
	})
}

// GET /kiosk/:slug?device= and /kiosk/:slug/live?device=&state=, on a
// board without device tokens and one with.
func FuzzPagesKiosk(f *testing.F) {
	a := fzpBoot(f)
	for _, valid := range [][]string{{a.c.Slug, "", "0123456789abcdef01234567"}, {a.kiosk.Slug, a.device, ""}} {
		fzpSeeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], raw) })
	}
	fzpReaches(f, a.patient, "GET", a.url+"/kiosk/"+a.c.Slug, nil, http.StatusOK)
	fzpReaches(f, a.patient, "GET", a.url+"/kiosk/"+a.kiosk.Slug+"/live"+fzpQuery("device", a.device), nil, http.StatusOK)
	fzpReaches(f, a.patient, "GET", a.url+"/kiosk/"+a.kiosk.Slug, nil, http.StatusForbidden)
	f.Fuzz(func(t *testing.T, slug, device, state string, raw bool) {
		in := []string{slug, device, state}
		base := a.url + "/kiosk/" + fzpSeg(slug, raw)
		for _, u := range []string{
			base + fzpQuery("device", device),
			base + "/live" + fzpQuery("device", device, "state", state),
		} {
			st, body := fzpFetch(t, a.patient, "GET", u, nil)
			fzpWant(t, "GET "+fzpClip([]byte(u), 200), in, st, body)
		}
	})
}

// GET /v1/appointment-types/:id/timeslots?from=&to=&specialistId= and
// /v1/clinics/:slug/appointment-types: JSON, always.
func FuzzAPITimeslotsQuery(f *testing.F) {
	a := fzpBoot(f)
	day := a.c.Week(a.monday)
	valid := []string{a.c.Type0().ID.String(), day, a.c.Week(a.monday.AddDate(0, 0, 6)), a.c.Specialists[0].ID.String(), a.c.Slug}
	fzpSeeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], s[4], raw) })
	f.Add(valid[0], "0001-01-01", "0001-01-31", "", valid[4], false)
	f.Add(valid[0], "9999-12-01", "9999-12-31", "", valid[4], false)
	fzpReaches(f, a.patient, "GET", a.url+"/v1/appointment-types/"+valid[0]+"/timeslots"+fzpQuery("from", valid[1], "to", valid[2]), nil, http.StatusOK, "Accept", "application/json")
	f.Fuzz(func(t *testing.T, id, from, to, specialist, slug string, raw bool) {
		in := []string{id, from, to, specialist, slug}
		for _, u := range []string{
			a.url + "/v1/appointment-types/" + fzpSeg(id, raw) + "/timeslots" + fzpQuery("from", from, "to", to, "specialistId", specialist),
			a.url + "/v1/clinics/" + fzpSeg(slug, raw) + "/appointment-types",
		} {
			st, body := fzpFetch(t, a.patient, "GET", u, nil, "Accept", "application/json")
			fzpWant(t, "GET "+fzpClip([]byte(u), 200), in, st, body)
			if st != http.StatusNotFound && !json.Valid(body) { // an unknown route's 404 may be Echo's
				t.Fatalf("GET %s: %d with a body that is not JSON: %s", u, st, fzpClip(body, 500))
			}
		}
	})
}

// GET /v1/holds/stream?appointmentTypeId=&clientId=&leaseMs=
func FuzzAPIHoldStreamQuery(f *testing.F) {
	a := fzpBoot(f)
	valid := []string{a.c.Type0().ID.String(), "fzp-client", "60000"}
	fzpSeeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2]) })
	f.Add(valid[0], valid[1], "99")
	f.Add(valid[0], valid[1], "3600001")
	f.Add(valid[0], valid[1], "100")
	fzpReaches(f, a.patient, "GET", a.url+"/v1/holds/stream"+fzpQuery("appointmentTypeId", valid[0], "clientId", valid[1]), nil, http.StatusOK)
	f.Fuzz(func(t *testing.T, typeID, client, lease string) {
		u := a.url + "/v1/holds/stream" + fzpQuery("appointmentTypeId", typeID, "clientId", client, "leaseMs", lease)
		st, body := fzpFetch(t, a.patient, "GET", u, nil, "Accept", "text/event-stream")
		fzpWant(t, "GET hold stream", []string{typeID, client, lease}, st, body)
	})
}

// The signed-in staff pages: the calendar (?date=&view=&specialist=) and
// its stream, booking search (?q=&from=&to=), the audit log
// (?entity=&actor=&from=&to=&page=), and the pages of one specialist and
// one appointment type (:id).
func FuzzPagesStaff(f *testing.F) {
	a := fzpBoot(f)
	valid := []string{a.mondayQS, "day", a.c.Specialists[0].ID.String(), "Fuzz", a.mondayQS, a.c.Week(a.monday.AddDate(0, 1, 0)),
		"booking", "staff:x@example.org", "1", a.c.Specialists[1].ID.String()}
	fzpSeeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], raw) })
	f.Add("", "week", "", "%", "", "", "", "", "-1", a.c.Type0().ID.String(), false)
	f.Add("", "", "", "_", "0001-01-01", "9999-12-31", "%", "%", "9223372036854775807", "1", false)
	for _, u := range []string{"/staff" + fzpQuery("date", valid[0], "view", "day"), "/staff/live", "/staff/bookings/search" + fzpQuery("q", "Fuzz"),
		"/staff/audit" + fzpQuery("entity", "booking"), "/staff/specialists/" + valid[2], "/staff/types/" + a.c.Type0().ID.String()} {
		fzpReaches(f, a.staff, "GET", a.url+u, nil, http.StatusOK)
	}
	f.Fuzz(func(t *testing.T, date, view, specialist, q, from, to, entity, actor, page, id string, raw bool) {
		in := []string{date, view, specialist, q, from, to, entity, actor, page, id}
		cal := fzpQuery("date", date, "view", view, "specialist", specialist)
		for _, u := range []string{
			a.url + "/staff" + cal,
			a.url + "/staff/live" + cal,
			a.url + "/staff/bookings/search" + fzpQuery("q", q, "from", from, "to", to),
			a.url + "/staff/audit" + fzpQuery("entity", entity, "actor", actor, "from", from, "to", to, "page", page),
			a.url + "/staff/specialists/" + fzpSeg(id, raw),
			a.url + "/staff/types/" + fzpSeg(id, raw),
		} {
			st, h, body := fzpFetchH(t, a.staff, "GET", u, nil)
			fzpWant(t, "GET "+fzpClip([]byte(u), 200), in, st, body)
			if loc := h.Get("Location"); strings.HasPrefix(loc, "/staff/login") {
				t.Fatalf("GET %s: %d to %s; the fuzzer must stay signed in", u, st, loc)
			}
		}
	})
}

// Found by these targets: a NUL or bytes that are not UTF-8 in a path
// segment (/c/%00), a query value or a staff form field reached PostgreSQL,
// which refused the text: a 500. Now each is a 400 before any handler,
// while the API's JSON bodies are left to the API, whatever their
// Content-Type says.
func TestFuzzPagesNULOrBadUTF8Are400(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	cl := stfSignIn(t, app, stfNewAccount(t, app.Pool, c.ID, "admin"))
	sp := c.Specialists[0].ID.String()
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		for _, u := range []string{
			"/c/" + url.PathEscape(bad),
			"/kiosk/" + url.PathEscape(bad) + "/live",
			"/staff/bookings/search" + fzpQuery("q", bad),
			"/staff/audit" + fzpQuery("actor", bad),
			"/v1/clinics/" + url.PathEscape(bad) + "/appointment-types",
		} {
			r := cl.Get(u)
			fzpWant(t, "GET "+u, nil, r.Status, []byte(r.Body))
			if r.Status != http.StatusBadRequest {
				t.Errorf("GET %s: %d, want 400", u, r.Status)
			}
		}
		for _, p := range []struct {
			path string
			form url.Values
		}{
			{"/staff/specialists", url.Values{"name": {bad}, "priority": {"1"}, "active": {"on"}}},
			{"/staff/specialists/" + sp + "/overrides", url.Values{"day": {"2030-01-07"}, "closed": {"on"}, "note": {bad}, "version": {"1"}}},
			{"/staff/users", url.Values{"email": {"x@example.org"}, "name": {bad}, "password": {stfPassword}, "role": {"staff"}}},
			{"/staff/kiosks", url.Values{"name": {bad}}},
			{"/staff/kiosks", url.Values{bad: {"x"}}},
		} {
			r := cl.Post(p.path, p.form)
			fzpWant(t, "POST "+p.path, nil, r.Status, []byte(r.Body))
			if r.Status != http.StatusBadRequest {
				t.Errorf("POST %s with %q: %d, want 400", p.path, bad, r.Status)
			}
		}
	}
	// Plain text still works, and JSON sent to the API as a form (curl -d)
	// is still read as JSON.
	cl.Post("/staff/kiosks", url.Values{"name": {"Waiting room ☃"}}).Want(http.StatusCreated)
	body, _ := json.Marshal(holdBody(c.Types[0].ID, c.Next(time.Monday, 10, 0), clientID()))
	res, err := http.Post(app.TS.URL+"/v1/holds", "application/x-www-form-urlencoded", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("POST /v1/holds, JSON labelled a form: %d, want 201", res.StatusCode)
	}
}
