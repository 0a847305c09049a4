package web_test

// Fuzz targets of the query and path parameters of the HTML pages and
// their live streams, of the signed-in staff pages, and of the form bodies
// of the patient page POSTs. A stream answering 200 is read for its first
// bytes only.

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// pageTargets is the app with a clinic, a booking (with its manage link), a
// second clinic whose kiosk needs a device token, and a signed-in admin.
type pageTargets struct {
	URL      string
	c        clinic
	token    string // the booking's manage token
	kiosk    clinic
	device   string // a valid device token for kiosk's board
	patient  *http.Client
	staff    *http.Client // signed in
	monday   time.Time
	mondayQS string
}

var (
	pageTargetsMu     sync.Mutex
	pageTargetsShared *pageTargets
)

// bootPageTargets makes the page targets' clinics, accounts and clients
// once per test process, on the shared fuzz app.
func bootPageTargets(f *testing.F) *pageTargets {
	f.Helper()
	pageTargetsMu.Lock()
	defer pageTargetsMu.Unlock()
	if pageTargetsShared != nil {
		return pageTargetsShared
	}
	a := fuzzApp(f)
	c := a.patientClinic(f)
	conf := a.bookDirect(f, c, c.Type0(), c.Specialists[0].ID, c.At(3, 10, 0), "Fuzz Patient")

	kiosk := a.patientClinic(f)
	device, err := a.Deps.Practice.CreateKioskToken(context.Background(), kiosk.Admin.User(kiosk.ID), "fuzz screen")
	if err != nil {
		f.Fatal(err)
	}
	staff := a.signIn(f, c.Admin)

	jar, err := cookiejar.New(nil)
	if err != nil {
		f.Fatal(err)
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	monday := c.MondayOf(c.At(7, 10, 0))
	pageTargetsShared = &pageTargets{
		URL: a.URL, c: c, token: conf.ManageToken, kiosk: kiosk, device: device,
		patient: &http.Client{Jar: jar, CheckRedirect: noRedirect},
		staff:   staff.hc,
		monday:  monday, mondayQS: c.Week(monday),
	}
	return pageTargetsShared
}

// GET /, /c/:slug, /c/:slug/book/:typeId?week=&specialist= and its live
// stream (?week=&specialist=&state=).
func FuzzPagesPatient(f *testing.F) {
	a := bootPageTargets(f)
	valid := []string{a.c.Slug, a.c.Type0().ID.String(), a.mondayQS, a.c.Specialists[0].ID.String(), "0123456789abcdef01234567"}
	seeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], s[4], raw) })
	book := a.URL + "/c/" + a.c.Slug + "/book/" + valid[1]
	reaches(f, a.patient, "GET", a.URL+"/c/"+a.c.Slug, nil, http.StatusOK)
	reaches(f, a.patient, "GET", book+query("week", valid[2], "specialist", valid[3]), nil, http.StatusOK)
	reaches(f, a.patient, "GET", book+"/live"+query("week", valid[2], "specialist", valid[3], "state", valid[4]), nil, http.StatusOK)
	f.Fuzz(func(t *testing.T, slug, typeID, week, specialist, state string, raw bool) {
		in := []string{slug, typeID, week, specialist, state}
		q := query("week", week, "specialist", specialist)
		base := a.URL + "/c/" + pathSegment(slug, raw)
		for _, u := range []string{
			a.URL + "/" + q,
			base + q,
			base + "/book/" + pathSegment(typeID, raw) + q,
			base + "/book/" + pathSegment(typeID, raw) + "/live" + q + "&state=" + url.QueryEscape(state),
		} {
			st, body := fetch(t, a.patient, "GET", u, nil)
			wantNoLeak(t, "GET "+clip([]byte(u), 200), in, st, body)
		}
	})
}

var holdIDField = regexp.MustCompile(`name="holdId" value="([^"]+)"`)

// The form bodies of the patient page POSTs: hold, then confirm, heartbeat
// and release of the hold it got ("{hold}" in the body stands for its id),
// with htmx or without.
func FuzzPagesPatientForms(f *testing.F) {
	a := bootPageTargets(f)
	typ, sp := a.c.Type0(), a.c.Specialists[1].ID.String()
	start := a.monday.UTC().Format(time.RFC3339)
	form := func(kv ...string) string { return query(kv...)[1:] }
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
	base := a.URL + "/c/" + a.c.Slug + "/book/" + typ.ID.String()
	// The valid form holds, and the hold is released.
	st, got := fetch(f, a.patient, "POST", base+"/hold"+query("week", a.mondayQS), []byte(form("start", start, "specialist", sp)))
	m := holdIDField.FindSubmatch(got)
	if st != http.StatusOK || m == nil {
		f.Fatalf("the valid hold form: %d: %s", st, clip(got, 1000))
	}
	reaches(f, a.patient, "POST", base+"/release", []byte(form("holdId", string(m[1]))), http.StatusOK)
	f.Fuzz(func(t *testing.T, week string, body []byte, htmx bool) {
		in := []string{week, string(body)}
		var hdr []string
		if htmx {
			hdr = []string{"HX-Request", "true", "Accept", "text/html, */*"}
		}
		q := query("week", week)
		st, got := fetch(t, a.patient, "POST", base+"/hold"+q, body, hdr...)
		wantNoLeak(t, "POST hold", in, st, got)
		holdID := ""
		if m := holdIDField.FindSubmatch(got); m != nil {
			holdID = string(m[1])
		}
		filled := bytes.ReplaceAll(body, []byte("{hold}"), []byte(url.QueryEscape(holdID)))
		for _, step := range []string{"confirm", "heartbeat", "release"} {
			st, got := fetch(t, a.patient, "POST", base+"/"+step+q, filled, hdr...)
			wantNoLeak(t, "POST "+step, in, st, got)
		}
		if holdID != "" {
			// Leave nothing held for the next input.
			st, got := fetch(t, a.patient, "POST", base+"/release", []byte("holdId="+url.QueryEscape(holdID)))
			wantNoLeak(t, "POST release", in, st, got)
		}
	})
}

// GET /manage/:token, its .ics, the reschedule page (?week=) and its live
// stream (&state=), and the POSTs that ask to cancel (the question only)
// and to move (start).
func FuzzPagesManage(f *testing.F) {
	a := bootPageTargets(f)
	valid := []string{a.token, a.mondayQS, "0123456789abcdef01234567", a.c.At(4, 11, 0).UTC().Format(time.RFC3339)}
	seeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], raw) })
	manage := a.URL + "/manage/" + a.token
	reaches(f, a.patient, "GET", manage, nil, http.StatusOK)
	reaches(f, a.patient, "GET", manage+"/calendar.ics", nil, http.StatusOK)
	reaches(f, a.patient, "GET", manage+"/reschedule"+query("week", valid[1]), nil, http.StatusOK)
	reaches(f, a.patient, "GET", manage+"/reschedule/live"+query("week", valid[1]), nil, http.StatusOK)
	f.Fuzz(func(t *testing.T, token, week, state, start string, raw bool) {
		in := []string{token, week, state, start}
		base := a.URL + "/manage/" + pathSegment(token, raw)
		q := query("week", week)
		for _, u := range []string{
			base + q,
			base + "/calendar.ics" + q,
			base + "/reschedule" + q,
			base + "/reschedule/live" + q + "&state=" + url.QueryEscape(state),
		} {
			st, body := fetch(t, a.patient, "GET", u, nil)
			wantNoLeak(t, "GET "+clip([]byte(u), 200), in, st, body)
		}
		st, body := fetch(t, a.patient, "POST", base+"/cancel", []byte(query("reason", start)[1:]))
		wantNoLeak(t, "POST cancel (asking)", in, st, body)
		st, body = fetch(t, a.patient, "POST", base+"/reschedule"+q, []byte(query("start", start)[1:]))
		wantNoLeak(t, "POST reschedule", in, st, body)
	})
}

// GET /kiosk/:slug?device= and /kiosk/:slug/live?device=&state=, on a
// board without device tokens and one with. The board with tokens opens
// with its token only: any other device, or none, is 403 on the board and
// its stream; the board without tokens opens without one. Its seeds fail
// when KioskAllowed (internal/staff/kiosk_tokens.go) lets any device token
// open a board.
func FuzzPagesKiosk(f *testing.F) {
	a := bootPageTargets(f)
	for _, valid := range [][]string{{a.c.Slug, "", "0123456789abcdef01234567"}, {a.kiosk.Slug, a.device, ""}} {
		seeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], raw) })
	}
	reaches(f, a.patient, "GET", a.URL+"/kiosk/"+a.c.Slug, nil, http.StatusOK)
	reaches(f, a.patient, "GET", a.URL+"/kiosk/"+a.kiosk.Slug+"/live"+query("device", a.device), nil, http.StatusOK)
	reaches(f, a.patient, "GET", a.URL+"/kiosk/"+a.kiosk.Slug, nil, http.StatusForbidden)
	f.Fuzz(func(t *testing.T, slug, device, state string, raw bool) {
		in := []string{slug, device, state}
		base := a.URL + "/kiosk/" + pathSegment(slug, raw)
		for _, u := range []string{
			base + query("device", device),
			base + "/live" + query("device", device, "state", state),
		} {
			st, h, body := fetchWithHeader(t, a.patient, "GET", u, nil)
			what := "GET " + clip([]byte(u), 200)
			wantNoLeak(t, what, in, st, body)
			wantVerdict(t, what, &response{Status: st, Header: h, Body: string(body), t: t, what: what}, a.kioskVerdict(t, u))
		}
	})
}

// kioskVerdict is what a board or its stream must answer at u: 400 for an
// address with characters that are not allowed; on the board with device
// tokens, 200 with its token and 403 KIOSK_TOKEN (the stream's JSON code;
// the board's page has none) with any other or none; on the board without,
// 200 without a token.
func (a *pageTargets) kioskVerdict(t *testing.T, u string) verdict {
	t.Helper()
	s := serverView(t, u)
	if !s.plain() {
		return must(http.StatusBadRequest, "", "an address with characters that are not allowed")
	}
	code, suffix := "", ""
	if strings.HasSuffix(s.route, "/live") {
		code, suffix = "KIOSK_TOKEN", "/live"
	}
	slug, ok := s.param("/kiosk/", suffix)
	device := s.query.Get("device")
	switch {
	case !ok:
		return verdict{} // another route, or none
	case slug == a.kiosk.Slug && device == a.device:
		return must(http.StatusOK, "", "the board with its device token")
	case slug == a.kiosk.Slug:
		return must(http.StatusForbidden, code, "a board that has tokens, without its own")
	case slug == a.c.Slug && device == "":
		return must(http.StatusOK, "", "a board without tokens, without a device")
	}
	return verdict{}
}

// The signed-in staff pages: the calendar (?date=&view=&specialist=) and
// its stream, booking search (?q=&from=&to=), the audit log
// (?entity=&actor=&from=&to=&page=), and the pages of one specialist and
// one appointment type (:id).
func FuzzPagesStaff(f *testing.F) {
	a := bootPageTargets(f)
	valid := []string{a.mondayQS, "day", a.c.Specialists[0].ID.String(), "Fuzz", a.mondayQS, a.c.Week(a.monday.AddDate(0, 1, 0)),
		"booking", "staff:x@example.org", "1", a.c.Specialists[1].ID.String()}
	seeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], raw) })
	f.Add("", "week", "", "%", "", "", "", "", "-1", a.c.Type0().ID.String(), false)
	f.Add("", "", "", "_", "0001-01-01", "9999-12-31", "%", "%", "9223372036854775807", "1", false)
	for _, u := range []string{"/staff" + query("date", valid[0], "view", "day"), "/staff/live", "/staff/bookings/search" + query("q", "Fuzz"),
		"/staff/audit" + query("entity", "booking"), "/staff/specialists/" + valid[2], "/staff/types/" + a.c.Type0().ID.String()} {
		reaches(f, a.staff, "GET", a.URL+u, nil, http.StatusOK)
	}
	f.Fuzz(func(t *testing.T, date, view, specialist, q, from, to, entity, actor, page, id string, raw bool) {
		in := []string{date, view, specialist, q, from, to, entity, actor, page, id}
		cal := query("date", date, "view", view, "specialist", specialist)
		for _, u := range []string{
			a.URL + "/staff" + cal,
			a.URL + "/staff/live" + cal,
			a.URL + "/staff/bookings/search" + query("q", q, "from", from, "to", to),
			a.URL + "/staff/audit" + query("entity", entity, "actor", actor, "from", from, "to", to, "page", page),
			a.URL + "/staff/specialists/" + pathSegment(id, raw),
			a.URL + "/staff/types/" + pathSegment(id, raw),
		} {
			st, h, body := fetchWithHeader(t, a.staff, "GET", u, nil)
			wantNoLeak(t, "GET "+clip([]byte(u), 200), in, st, body)
			if loc := h.Get("Location"); strings.HasPrefix(loc, "/staff/login") {
				t.Fatalf("GET %s: %d to %s; the fuzzer must stay signed in", u, st, loc)
			}
		}
	})
}
