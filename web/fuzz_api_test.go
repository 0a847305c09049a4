package web_test

// Fuzz targets for the JSON endpoints fuzz_test.go and fuzz_pages_test.go
// do not reach: a patient's reschedule (PATCH) and cancel (DELETE) of an
// appointment by its manage token, the release of a hold (DELETE), the
// clinic's appointment types, and the staff JSON API (PATCH a specialist,
// PUT their hours), signed in as an admin with the CSRF header. They run
// against the real app (PostgreSQL, Redis). Every answer must be below
// 500, JSON (or a bodiless 204), and must not show an internal (fzpLeaks)
// the request did not carry itself (wantSane).
//
// A mode byte picks, bit by bit, the real thing (the booking's id, its
// token, its current ETag, a live hold, ...) instead of the fuzzed string,
// so the fuzzer reaches the handlers' successful paths as well as their
// refusals. The targets keep what they change usable for the next input:
// a moved booking's new id, a fresh booking after a cancel.
//
// Without -fuzz they run their seed corpus (part of `make test`):
//
//	go test ./web -run '^$' -fuzz '^FuzzAPIReschedule$' -fuzztime 15s
//
// Every top-level identifier but the targets (FuzzAPI...) starts with fza.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
)

// fzaApp is the app with a patient clinic (a booking to move, one to
// cancel, a slot to hold) and a staff clinic with a signed-in admin.
type fzaApp struct {
	url   string
	app   *pgApp
	c     pgClinic
	sc    stfClinic
	admin *stfClient // signed in to sc, with its CSRF token

	mu       sync.Mutex
	moveID   uuid.UUID // the booking FuzzAPIReschedule moves; a move gives it a new id
	token    string    // its manage token, which moves with it
	cancelID uuid.UUID // the booking FuzzAPICancel cancels; rebooked once cancelled
	cancelTk string
}

var (
	fzaMu     sync.Mutex
	fzaShared *fzaApp
)

// fzaBoot makes the JSON targets' bookings and accounts once per test
// process, on the shared fuzz server.
func fzaBoot(f *testing.F) *fzaApp {
	f.Helper()
	fzaMu.Lock()
	defer fzaMu.Unlock()
	if fzaShared != nil {
		return fzaShared
	}
	srv := bootFuzzServer(f)
	ts, deps, pool, rdb := srv.ts, srv.deps, srv.pool, srv.rdb
	c := pgNewClinic(f, pool)
	app := &pgApp{TS: ts, Deps: deps, Pool: pool}
	move := pgBookDirect(f, app, c, c.Type0(), c.Specialists[0].ID, c.At(3, 10, 0), "Fuzz Mover")
	cancel := pgBookDirect(f, app, c, c.Type0(), c.Specialists[1].ID, c.At(4, 10, 0), "Fuzz Canceller")
	sc := stfNewClinic(f, pool, 2)
	admin := stfSignIn(f, &stfApp{TS: ts, Deps: deps, Pool: pool, RDB: rdb}, sc.Admin)
	fzaShared = &fzaApp{
		url: ts.URL, app: app, c: c, sc: sc, admin: admin,
		moveID: move.Booking.ID, token: move.ManageToken,
		cancelID: cancel.Booking.ID, cancelTk: cancel.ManageToken,
	}
	return fzaShared
}

// fzaTrickyBodies are bodies every JSON target is seeded with.
var fzaTrickyBodies = []string{
	``, ` `, `null`, `{}`, `[]`, `""`, `0`, `true`, `{`, `}`, `{"a":1}{"b":2}`, "\xef\xbb\xbf{}", "\xff\xfe", "\x00", `{"x":"a` + "\x00" + `"}`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	`{"a":` + strings.Repeat(`{"a":`, 12000) + `1` + strings.Repeat(`}`, 12001),
	`{"n":1e400}`, `{"n":-99999999999999999999999}`,
	`{"s":"` + strings.Repeat("x", 70<<10) + `"}`,  // over bindJSON's 64 KB
	`{"s":"` + strings.Repeat("y", 300<<10) + `"}`, // over the server's 256 KB
	`{"s":"Zürich ☃ 日本語 \u202e \ud800 \uffff"}`,
}

// fzaTrickyHeaders are If-Match values (and ids, tokens) every target is seeded with.
var fzaTrickyHeaders = []string{"", `*`, `"v0"`, `"v-1"`, `W/"v1"`, `"v2147483648"`, `"v1", "v2"`, `v1`, `"1"`, "' OR 1=1 --", strings.Repeat("v", 4096)}

// fzaDo sends one JSON request with hc and returns the answer.
func fzaDo(t testing.TB, hc *http.Client, method, u string, body []byte, hdr ...string) reply {
	t.Helper()
	if body == nil {
		body = []byte{} // still sent, as an empty body
	}
	st, h, b := fzpFetchH(t, hc, method, u, body, append([]string{"Accept", "application/json", "Content-Type", "application/json"}, hdr...)...)
	return reply{Status: st, Header: h, Body: b}
}

// fzaSane is wantSane, with a bodiless 204 allowed.
func fzaSane(t *testing.T, what string, body []byte, r reply, more ...string) {
	t.Helper()
	if r.Status == http.StatusNoContent && len(r.Body) == 0 {
		return
	}
	wantSane(t, what, body, r, more...)
}

// fzaHeader adds name: v when v can be sent as a header value.
func fzaHeader(hdr []string, name, v string) []string {
	if v != "" && headerSafe(v) {
		return append(hdr, name, v)
	}
	return hdr
}

var fzaPatient = &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// appointment reads the booking through the API (the token as Bearer), for its ETag.
func (a *fzaApp) appointment(t testing.TB, id uuid.UUID, token string) reply {
	t.Helper()
	return fzaDo(t, fzaPatient, "GET", a.url+"/v1/appointments/"+id.String(), nil, "Authorization", "Bearer "+token)
}

// The mode bits of the appointment targets.
const (
	fzaRealID    = 1 << iota // the booking's id, not the fuzzed one
	fzaRealToken             // its manage token
	fzaQueryTok              // the token as ?token=, not Authorization: Bearer
	fzaCurETag               // If-Match: its current ETag
	fzaRawSeg                // the fuzzed id unescaped, when it can be
)

// PATCH /v1/appointments/:id {slotStartDate} with If-Match: the booking
// moves (and gets a new id, which the target follows) or the move is refused.
func FuzzAPIReschedule(f *testing.F) {
	a := fzaBoot(f)
	at := func(days, hh, mm int) string {
		b, _ := json.Marshal(map[string]string{"slotStartDate": a.c.At(days, hh, mm).UTC().Format(time.RFC3339)})
		return string(b)
	}
	all := uint8(fzaRealID | fzaRealToken | fzaCurETag)
	for _, s := range []struct {
		body, id, token, ifMatch string
		mode                     uint8
	}{
		{at(3, 11, 0), "", "", "", all},
		{at(3, 11, 15), "", "", "", all}, // within its own half hour
		{at(5, 14, 0), "", "", "", all | fzaQueryTok},
		{at(4, 10, 0), "", "", "", all},   // the other booking's slot
		{at(3, 10, 7), "", "", "", all},   // off the grid
		{at(-2, 10, 0), "", "", "", all},  // past
		{at(400, 10, 0), "", "", "", all}, // too far ahead
		{at(3, 3, 0), "", "", "", all},    // outside the hours
		{`{"slotStartDate":"0000-01-01T00:00:00Z"}`, "", "", "", all},
		{`{"slotStartDate":"9999-12-31T23:30:00Z"}`, "", "", "", all},
		{`{"slotStartDate":"2026-03-29T02:30:00+02:00"}`, "", "", "", all},
		{`{"slotStartDate":"2030-01-07T10:00:00+99:00"}`, "", "", "", all},
		{`{"slotStartDate":"tomorrow"}`, "", "", "", all},
		{`{"slotStartDate":""}`, "", "", "", all},
		{`{"slotStartDate":1735689600}`, "", "", "", all},
		{`{"slotStartDate":null,"specialistId":"x"}`, "", "", "", all},
		{`{"slotStartDate":"SELECT 1; --` + "\u0000" + `"}`, "", "", "", all},
		{at(3, 11, 0), "", "", "", fzaRealID | fzaRealToken},                       // no If-Match: 428
		{at(3, 11, 0), "", "", `"v99"`, fzaRealID | fzaRealToken},                  // stale: 412
		{at(3, 11, 0), "", "wrong-token", "", fzaRealID | fzaCurETag},              // 404
		{at(3, 11, 0), "", "", "", fzaRealID | fzaCurETag},                         // no token: 401
		{at(3, 11, 0), uuid.NewString(), "", "", fzaRealToken | fzaCurETag},        // another id
		{at(3, 11, 0), "not-a-uuid", "", `"v1"`, fzaRealToken},                     // 400
		{at(3, 11, 0), "../../holds", "", `"v1"`, fzaRealToken | fzaRawSeg},        // another route
		{at(3, 11, 0), "\x00", "\x00", "\x00", fzaQueryTok},                        // refused before the handler
		{at(3, 11, 0), "", strings.Repeat("t", 5000), "", fzaRealID | fzaQueryTok}, // a long token
	} {
		f.Add([]byte(s.body), s.id, s.token, s.ifMatch, s.mode)
	}
	for i, b := range fzaTrickyBodies {
		f.Add([]byte(b), "", "", "", all)
		f.Add([]byte(at(3, 11, 0)), fzaTrickyHeaders[i%len(fzaTrickyHeaders)], fzaTrickyHeaders[(i+3)%len(fzaTrickyHeaders)], fzaTrickyHeaders[i%len(fzaTrickyHeaders)], uint8(i)&^fzaCurETag)
	}
	a.mu.Lock()
	r := a.appointment(f, a.moveID, a.token)
	a.mu.Unlock()
	if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
		f.Fatalf("GET the booking to move: %d %s", r.Status, r.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte, id, token, ifMatch string, mode uint8) {
		a.mu.Lock()
		defer a.mu.Unlock()
		in := []string{id, token, ifMatch}
		u, hdr, etag := a.target(t, "/v1/appointments/", a.moveID, a.token, id, token, mode)
		if mode&fzaCurETag != 0 {
			ifMatch = etag
		}
		hdr = fzaHeader(hdr, "If-Match", ifMatch)
		r := fzaDo(t, fzaPatient, "PATCH", u, body, hdr...)
		fzaSane(t, "PATCH "+fzpClip([]byte(u), 200), body, r, in...)
		if r.Status == http.StatusOK {
			var got struct{ Appointment booking.Booking }
			r.into(t, &got)
			if got.Appointment.ID == uuid.Nil || got.Appointment.Status != booking.StatusConfirmed {
				t.Fatalf("a move answered 200 with %s", r.Body)
			}
			a.moveID = got.Appointment.ID // only its token moves a booking
		}
	})
}

// target is the URL and headers for one input on the booking id/token:
// the real ones or the fuzzed ones, as mode says, and the booking's
// current ETag when mode asks for it.
func (a *fzaApp) target(t *testing.T, prefix string, realID uuid.UUID, realToken, id, token string, mode uint8) (string, []string, string) {
	t.Helper()
	if mode&fzaRealID != 0 {
		id = realID.String()
	}
	if mode&fzaRealToken != 0 {
		token = realToken
	}
	u := a.url + prefix + fzpSeg(id, mode&fzaRawSeg != 0)
	var hdr []string
	switch {
	case token == "":
	case mode&fzaQueryTok != 0 || !headerSafe("Bearer "+token):
		u += "?token=" + url.QueryEscape(token)
	default:
		hdr = append(hdr, "Authorization", "Bearer "+token)
	}
	etag := ""
	if mode&fzaCurETag != 0 {
		r := a.appointment(t, realID, realToken)
		if r.Status != http.StatusOK {
			t.Fatalf("GET the booking for its ETag: %d %s", r.Status, r.Body)
		}
		etag = r.Header.Get("ETag")
	}
	return u, hdr, etag
}

// DELETE /v1/appointments/:id?reason= (If-Match is sent but not required):
// once the booking is cancelled another is booked for the next input.
func FuzzAPICancel(f *testing.F) {
	a := fzaBoot(f)
	all := uint8(fzaRealID | fzaRealToken)
	for _, s := range []struct {
		id, token, ifMatch, reason string
		mode                       uint8
	}{
		{"", "", "", "", all},
		{"", "", "", "Feeling better", all | fzaCurETag},
		{"", "", `"v99"`, "", all | fzaQueryTok},
		{"", "", "", "SELECT pg_sleep(10); --", all},
		{"", "", "", strings.Repeat("r", 5000), all},
		{"", "", "", "Zürich ☃ \u202e", all},
		{"", "", "", "\x00", all},
		{"", "", "", "\xff", all},
		{"", "wrong-token", "", "", fzaRealID},
		{"", "", "", "", fzaRealID}, // no token: 401
		{uuid.NewString(), "", "", "", fzaRealToken},
		{"not-a-uuid", "", "", "", fzaRealToken},
		{"", "", "", "", fzaRealToken | fzaRawSeg},
		{"../../clinics/x/appointment-types", "", "", "", fzaRealToken | fzaRawSeg},
		{"00000000-0000-0000-0000-000000000000", "' OR 1=1 --", "", "", 0},
	} {
		f.Add(s.id, s.token, s.ifMatch, s.reason, s.mode)
	}
	for i, v := range fzaTrickyHeaders {
		f.Add(v, fzaTrickyHeaders[(i+5)%len(fzaTrickyHeaders)], v, v, uint8(i))
	}
	f.Fuzz(func(t *testing.T, id, token, ifMatch, reason string, mode uint8) {
		a.mu.Lock()
		defer a.mu.Unlock()
		in := []string{id, token, ifMatch, reason}
		u, hdr, etag := a.target(t, "/v1/appointments/", a.cancelID, a.cancelTk, id, token, mode)
		if mode&fzaCurETag != 0 {
			ifMatch = etag
		}
		hdr = fzaHeader(hdr, "If-Match", ifMatch)
		if reason != "" {
			if strings.Contains(u, "?") {
				u += "&"
			} else {
				u += "?"
			}
			u += "reason=" + url.QueryEscape(reason)
		}
		r := fzaDo(t, fzaPatient, "DELETE", u, nil, hdr...)
		fzaSane(t, "DELETE "+fzpClip([]byte(u), 200), nil, r, in...)
		if r.Status == http.StatusOK {
			var got struct{ Appointment booking.Booking }
			r.into(t, &got)
			if got.Appointment.ID != a.cancelID || got.Appointment.Status != booking.StatusCancelled {
				t.Fatalf("a cancel answered 200 with %s", r.Body)
			}
			a.rebook(t)
		}
	})
}

// rebook books the slot FuzzAPICancel cancels again (or the first free
// one after it, should the booking FuzzAPIReschedule moves sit there).
func (a *fzaApp) rebook(t *testing.T) {
	t.Helper()
	for hh := 10; hh < 17; hh++ {
		conf, err := a.app.Deps.Bookings.Book(context.Background(), booking.BookRequest{
			AppointmentTypeID: a.c.Type0().ID, SpecialistID: a.c.Specialists[1].ID, Start: a.c.At(4, hh, 0),
			Patient:  booking.Patient{Name: "Fuzz Canceller", Email: "staff-booked@example.org"},
			ClientID: "staff-desk", Actor: "staff:test", ClinicID: a.c.ID,
		})
		if err == nil {
			a.cancelID, a.cancelTk = conf.Booking.ID, conf.ManageToken
			return
		}
	}
	t.Fatal("no free slot to book the next booking to cancel")
}

// holdSlot holds a slot six days ahead for fza-owner (the first free one:
// FuzzAPIReschedule may have moved its booking there) and returns the hold's id.
func (a *fzaApp) holdSlot(t *testing.T) string {
	t.Helper()
	var r reply
	for hh := 9; hh < 17; hh++ {
		b, _ := json.Marshal(map[string]string{"appointmentTypeId": a.c.Type0().ID.String(),
			"slotStartDate": a.c.At(6, hh, 0).UTC().Format(time.RFC3339), "clientId": "fza-owner"})
		if r = fzaDo(t, fzaPatient, "POST", a.url+"/v1/holds", b); r.Status == http.StatusCreated {
			var h holdView
			r.into(t, &h)
			return h.HoldID
		}
	}
	t.Fatalf("no slot to hold: %d %s", r.Status, r.Body)
	return ""
}

// The mode bits of the hold target.
const (
	fzaRealHold  = 1 << iota // a live hold's id, not the fuzzed one
	fzaRealOwner             // its owner's client id
	fzaHoldRaw               // the fuzzed hold id unescaped, when it can be
)

// DELETE /v1/holds/:holdId?clientId= (a body is sent too, and ignored).
func FuzzAPIReleaseHold(f *testing.F) {
	a := fzaBoot(f)
	clinicHex := strings.ReplaceAll(a.c.ID.String(), "-", "")
	all := uint8(fzaRealHold | fzaRealOwner)
	for _, s := range []struct {
		holdID, client, body string
		mode                 uint8
	}{
		{"", "", "", all},
		{"", "", `{"clientId":"fza-owner"}`, fzaRealHold}, // the owner in the body only: 400
		{"", "someone-else", "", fzaRealHold},             // 403
		{"", "", "", fzaRealHold},                         // no clientId: 400
		{"", strings.Repeat("c", 129), "", fzaRealHold},
		{"", "has space", "", fzaRealHold},
		{"", "\x00", "", fzaRealHold},
		{"", "Zürich", "", fzaRealHold},
		{"h" + clinicHex + "00000000000000000000", "fza-owner", "", 0}, // gone: 204
		{"H" + strings.ToUpper(clinicHex) + "00000000000000000000", "fza-owner", "", 0},
		{"h00000000000000000000000000000000ffffffffffffffffffff", "x", "", 0},
		{"h" + clinicHex, "x", "", 0},
		{"not-a-hold", "x", `null`, 0},
		{"../appointments/" + uuid.NewString(), "x", "", fzaHoldRaw},
		{"%00", "x", "", fzaHoldRaw},
		{"' OR 1=1 --", "x", "", 0},
		{strings.Repeat("h", 5000), "x", "", 0},
	} {
		f.Add(s.holdID, s.client, []byte(s.body), s.mode)
	}
	for i, b := range fzaTrickyBodies[:len(fzaTrickyBodies)/2] {
		f.Add(fzaTrickyHeaders[i%len(fzaTrickyHeaders)], fzaTrickyHeaders[(i+1)%len(fzaTrickyHeaders)], []byte(b), uint8(i))
	}
	f.Fuzz(func(t *testing.T, holdID, client string, body []byte, mode uint8) {
		in := []string{holdID, client}
		held := ""
		if mode&fzaRealHold != 0 {
			held = a.holdSlot(t)
			holdID = held
		}
		if mode&fzaRealOwner != 0 {
			client = "fza-owner"
		}
		u := a.url + "/v1/holds/" + fzpSeg(holdID, mode&fzaHoldRaw != 0)
		if client != "" {
			u += "?clientId=" + url.QueryEscape(client)
		}
		r := fzaDo(t, fzaPatient, "DELETE", u, body)
		fzaSane(t, "DELETE "+fzpClip([]byte(u), 200), body, r, in...)
		if held != "" {
			// Leave the slot free for the next input.
			r := fzaDo(t, fzaPatient, "DELETE", a.url+"/v1/holds/"+held+"?clientId=fza-owner", nil)
			if r.Status != http.StatusNoContent {
				t.Fatalf("release the hold: %d %s", r.Status, r.Body)
			}
		}
	})
}

// GET /v1/clinics/:slug/appointment-types
func FuzzAPIClinicTypes(f *testing.F) {
	a := fzaBoot(f)
	for _, s := range []string{a.c.Slug, a.sc.Slug, strings.ToUpper(a.c.Slug), a.c.Slug + "/", " " + a.c.Slug, a.c.Slug + "%2F..", "-", "a", strings.Repeat("a", 63), strings.Repeat("a", 64)} {
		f.Add(s, false)
		f.Add(s, true)
	}
	for i, v := range fzpTricky {
		f.Add(v, i%2 == 0)
	}
	if r := fzaDo(f, fzaPatient, "GET", a.url+"/v1/clinics/"+a.c.Slug+"/appointment-types", nil); r.Status != http.StatusOK {
		f.Fatalf("GET the clinic's types: %d %s", r.Status, r.Body)
	}
	f.Fuzz(func(t *testing.T, slug string, raw bool) {
		u := a.url + "/v1/clinics/" + fzpSeg(slug, raw) + "/appointment-types"
		r := fzaDo(t, fzaPatient, "GET", u, nil)
		fzaSane(t, "GET "+fzpClip([]byte(u), 200), nil, r, slug)
	})
}

// The mode bits of the staff targets.
const (
	fzaStaffRealID = 1 << iota // the specialist's id, not the fuzzed one
	fzaStaffETag               // If-Match: their current ETag
	fzaStaffNoCSRF             // without the CSRF header: 403
	fzaStaffRaw                // the fuzzed id unescaped, when it can be
)

// staff sends one request as the signed-in admin (with the CSRF header
// unless mode says not to) on the specialist sp or the fuzzed id, and the
// fuzzed If-Match or sp's current ETag; it fails on a 5xx or a leak, and
// on being signed out.
func (a *fzaApp) staff(t *testing.T, method, suffix string, sp uuid.UUID, body []byte, id, ifMatch string, mode uint8) reply {
	t.Helper()
	in := []string{id, ifMatch}
	if mode&fzaStaffRealID != 0 {
		id = sp.String()
	}
	if mode&fzaStaffETag != 0 {
		r := fzaDo(t, a.admin.hc, "GET", a.url+"/v1/staff/specialists/"+sp.String(), nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET the specialist for the ETag: %d %s", r.Status, r.Body)
		}
		ifMatch = r.Header.Get("ETag")
	}
	hdr := fzaHeader(nil, "If-Match", ifMatch)
	if mode&fzaStaffNoCSRF == 0 {
		hdr = append(hdr, "X-CSRF-Token", a.admin.CSRF)
	}
	u := a.url + "/v1/staff/specialists/" + fzpSeg(id, mode&fzaStaffRaw != 0) + suffix
	r := fzaDo(t, a.admin.hc, method, u, body, hdr...)
	fzaSane(t, method+" "+fzpClip([]byte(u), 200), body, r, in...)
	if r.Status == http.StatusUnauthorized {
		t.Fatalf("%s %s: 401; the fuzzer must stay signed in: %s", method, u, r.Body)
	}
	return r
}

// restoreName gives sp a plain name again when a saved one holds a leak
// marker (the answer echoed what it was sent), so that a later input's
// answer (a 412 shows the current row) does not show it unasked.
func (a *fzaApp) restoreName(t *testing.T, sp uuid.UUID, r reply) {
	t.Helper()
	for _, m := range fzpLeaks {
		if strings.Contains(string(r.Body), m) {
			if r := a.staff(t, "PATCH", "", sp, []byte(`{"name":"Fuzz Specialist"}`), "", "", fzaStaffRealID|fzaStaffETag); r.Status != http.StatusOK {
				t.Fatalf("restore the name: %d %s", r.Status, r.Body)
			}
			return
		}
	}
}

// PATCH /v1/staff/specialists/:id {name, priority, active} with If-Match.
func FuzzAPIStaffSpecialist(f *testing.F) {
	a := fzaBoot(f)
	sp := a.sc.Specialists[0].ID
	all := uint8(fzaStaffRealID | fzaStaffETag)
	for _, s := range []struct {
		body, id, ifMatch string
		mode              uint8
	}{
		{`{"name":"Dr. Fuzz","priority":5,"active":true}`, "", "", all},
		{`{"priority":-1000}`, "", "", all},
		{`{"priority":1001}`, "", "", all},
		{`{"active":false}`, "", "", all},
		{`{"active":true}`, "", "", all},
		{`{"name":"   "}`, "", "", all},
		{`{"name":"` + strings.Repeat("n", 121) + `"}`, "", "", all},
		{`{"name":"` + strings.Repeat("ü", 100) + `"}`, "", "", all},
		{`{"name":"Zürich ☃ 日本語 \u202e"}`, "", "", all},
		{`{"name":"a\u0000b"}`, "", "", all},
		{`{"name":"\ud800"}`, "", "", all},
		{`{"name":"Robert'); DROP TABLE specialists;--"}`, "", "", all},
		{`{"name":"SELECT 1"}`, "", "", all},
		{`{"priority":1e400}`, "", "", all},
		{`{"priority":9223372036854775808}`, "", "", all},
		{`{"priority":2147483648}`, "", "", all},
		{`{"priority":1.5}`, "", "", all},
		{`{"priority":"5"}`, "", "", all},
		{`{"name":5,"active":"yes"}`, "", "", all},
		{`{"name":null,"priority":null,"active":null}`, "", "", all},
		{`{"name":"a","name":"b"}`, "", "", all},
		{`{"priority":5}`, "", "", fzaStaffRealID},                    // no If-Match: 428
		{`{"priority":5}`, "", `"v999"`, fzaStaffRealID},              // stale: 412
		{`{"priority":5}`, "", "", all | fzaStaffNoCSRF},              // 403
		{`{"priority":5}`, a.c.Specialists[0].ID.String(), `"v1"`, 0}, // another clinic's: 404
		{`{"priority":5}`, uuid.NewString(), `"v1"`, 0},
		{`{"priority":5}`, "not-a-uuid", `"v1"`, 0},
		{`{"priority":5}`, "../specialists", `"v1"`, fzaStaffRaw},
	} {
		f.Add([]byte(s.body), s.id, s.ifMatch, s.mode)
	}
	for i, b := range fzaTrickyBodies {
		f.Add([]byte(b), "", "", all)
		f.Add([]byte(`{"priority":3}`), fzaTrickyHeaders[i%len(fzaTrickyHeaders)], fzaTrickyHeaders[(i+2)%len(fzaTrickyHeaders)], uint8(i)&^fzaStaffETag)
	}
	f.Fuzz(func(t *testing.T, body []byte, id, ifMatch string, mode uint8) {
		a.mu.Lock()
		defer a.mu.Unlock()
		r := a.staff(t, "PATCH", "", sp, body, id, ifMatch, mode)
		if r.Status == http.StatusOK {
			a.restoreName(t, sp, r)
		}
	})
}

// PUT /v1/staff/specialists/:id/hours {hours: [{weekday, start, end}]} with If-Match.
func FuzzAPIStaffHours(f *testing.F) {
	a := fzaBoot(f)
	sp := a.sc.Specialists[1].ID
	all := uint8(fzaStaffRealID | fzaStaffETag)
	for _, s := range []struct {
		body, id, ifMatch string
		mode              uint8
	}{
		{`{"hours":[{"weekday":1,"start":"08:00","end":"12:00"},{"weekday":1,"start":"13:00","end":"17:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"09:00","end":"17:00"},{"weekday":2,"start":"09:00","end":"17:00"},{"weekday":3,"start":"09:00","end":"17:00"},{"weekday":4,"start":"09:00","end":"17:00"},{"weekday":5,"start":"09:00","end":"17:00"}]}`, "", "", all},
		{`{"hours":[]}`, "", "", all},
		{`{"hours":null}`, "", "", all},
		{`{"hours":[{"weekday":0,"start":"00:00","end":"24:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"08:00","end":"12:00"},{"weekday":1,"start":"11:00","end":"13:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"12:00","end":"08:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":7,"start":"08:00","end":"12:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":-1,"start":"08:00","end":"12:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":1e400,"start":"08:00","end":"12:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":9223372036854775808}]}`, "", "", all},
		{`{"hours":[{"weekday":"1","start":8,"end":true}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"24:01","end":"25:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"-1:00","end":"08:99"}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"99999999999999999999:00","end":"12:00"}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"8:00 SELECT 1","end":"12:00` + "\u0000" + `"}]}`, "", "", all},
		{`{"hours":[{"weekday":1,"start":"０８:００","end":"１２:００"}]}`, "", "", all},
		{`{"hours":[null,{},[]]}`, "", "", all},
		{`{"hours":{}}`, "", "", all},
		{`{"hours":"x"}`, "", "", all},
		{`{"hours":[` + strings.Repeat(`{"weekday":1,"start":"08:00","end":"08:01"},`, 2000) + `{}]}`, "", "", all},
		{`{"hours":[]}`, "", "", fzaStaffRealID},                    // 428
		{`{"hours":[]}`, "", `"v999"`, fzaStaffRealID},              // 412
		{`{"hours":[]}`, "", "", all | fzaStaffNoCSRF},              // 403
		{`{"hours":[]}`, a.c.Specialists[1].ID.String(), `"v1"`, 0}, // another clinic's: 404
		{`{"hours":[]}`, "not-a-uuid", `"v1"`, 0},
	} {
		f.Add([]byte(s.body), s.id, s.ifMatch, s.mode)
	}
	for i, b := range fzaTrickyBodies {
		f.Add([]byte(b), "", "", all)
		f.Add([]byte(`{"hours":[]}`), fzaTrickyHeaders[i%len(fzaTrickyHeaders)], fzaTrickyHeaders[(i+4)%len(fzaTrickyHeaders)], uint8(i)&^fzaStaffETag)
	}
	f.Fuzz(func(t *testing.T, body []byte, id, ifMatch string, mode uint8) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.staff(t, "PUT", "/hours", sp, body, id, ifMatch, mode)
	})
}
