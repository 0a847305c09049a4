package web_test

// Fuzz targets of a patient's reschedule (PATCH) and cancel (DELETE) of an
// appointment by its manage token. A mode byte picks, bit by bit, the real
// thing (the booking's id, its token, its current ETag) instead of the
// fuzzed string, so the fuzzer reaches the handlers' successful paths as
// well as their refusals. The targets keep what they change usable for the
// next input: a moved booking's new id, a fresh booking after a cancel.

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
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web/api"
)

// jsonTargets is the app with a patient clinic (a booking to move, one to
// cancel, a slot to hold) and a staff clinic with a signed-in admin.
type jsonTargets struct {
	URL   string
	app   *app
	c     clinic
	sc    clinic
	admin *client // signed in to sc, with its CSRF token

	mu       sync.Mutex
	moveID   uuid.UUID // the booking FuzzAPIReschedule moves; a move gives it a new id
	token    string    // its manage token, which moves with it
	cancelID uuid.UUID // the booking FuzzAPICancel cancels; rebooked once cancelled
	cancelTk string
}

var (
	jsonTargetsMu     sync.Mutex
	jsonTargetsShared *jsonTargets
)

// bootJSONTargets makes the JSON targets' bookings and accounts once per test
// process, on the shared fuzz server.
func bootJSONTargets(f *testing.F) *jsonTargets {
	f.Helper()
	jsonTargetsMu.Lock()
	defer jsonTargetsMu.Unlock()
	if jsonTargetsShared != nil {
		return jsonTargetsShared
	}
	a := fuzzApp(f)
	c := a.patientClinic(f)
	move := a.bookDirect(f, c, c.Type0(), c.Specialists[0].ID, c.At(3, 10, 0), "Fuzz Mover")
	cancel := a.bookDirect(f, c, c.Type0(), c.Specialists[1].ID, c.At(4, 10, 0), "Fuzz Canceller")
	sc := a.clinic(f, testkit.ClinicOptions{Specialists: 2})
	jsonTargetsShared = &jsonTargets{
		URL: a.URL, app: a, c: c, sc: sc, admin: a.signIn(f, sc.Admin),
		moveID: move.Booking.ID, token: move.ManageToken,
		cancelID: cancel.Booking.ID, cancelTk: cancel.ManageToken,
	}
	return jsonTargetsShared
}

// appointment reads the booking through the API (the token as Bearer), for its ETag.
func (a *jsonTargets) appointment(t testing.TB, id uuid.UUID, token string) *response {
	t.Helper()
	return fetchJSON(t, noRedirects, "GET", a.URL+"/v1/appointments/"+id.String(), nil, "Authorization", "Bearer "+token)
}

// The mode bits of the appointment targets.
const (
	modeRealID      = 1 << iota // the booking's id, not the fuzzed one
	modeRealToken               // its manage token
	modeQueryToken              // the token as ?token=, not Authorization: Bearer
	modeCurrentETag             // If-Match: its current ETag
	modeRawSegment              // the fuzzed id unescaped, when it can be
)

// PATCH /v1/appointments/:id {slotStartDate} with If-Match: the booking
// moves (and gets a new id, which the target follows) or the move is
// refused as moveVerdict says. Its seeds fail when RescheduleAppointment
// (web/api_appointments.go) answers a move without If-Match 412 instead of
// 428, and when Appointment (internal/checkout/manage.go) looks a booking
// up without a token (404 instead of 401).
func FuzzAPIReschedule(f *testing.F) {
	a := bootJSONTargets(f)
	at := func(days, hh, mm int) string {
		b, _ := json.Marshal(map[string]string{"slotStartDate": a.c.At(days, hh, mm).UTC().Format(time.RFC3339)})
		return string(b)
	}
	all := uint8(modeRealID | modeRealToken | modeCurrentETag)
	for _, s := range []struct {
		body, id, token, ifMatch string
		mode                     uint8
	}{
		{at(3, 11, 0), "", "", "", all},
		{at(3, 11, 15), "", "", "", all}, // within its own half hour
		{at(5, 14, 0), "", "", "", all | modeQueryToken},
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
		{at(3, 11, 0), "", "", "", modeRealID | modeRealToken},                         // no If-Match: 428
		{at(3, 11, 0), "", "", `"v99"`, modeRealID | modeRealToken},                    // stale: 412
		{at(3, 11, 0), "", "wrong-token", "", modeRealID | modeCurrentETag},            // 404
		{at(3, 11, 0), "", "", "", modeRealID | modeCurrentETag},                       // no token: 401
		{at(3, 11, 0), uuid.NewString(), "", "", modeRealToken | modeCurrentETag},      // another id
		{at(3, 11, 0), "not-a-uuid", "", `"v1"`, modeRealToken},                        // 400
		{at(3, 11, 0), "../../holds", "", `"v1"`, modeRealToken | modeRawSegment},      // another route
		{at(3, 11, 0), "\x00", "\x00", "\x00", modeQueryToken},                         // refused before the handler
		{at(3, 11, 0), "", strings.Repeat("t", 5000), "", modeRealID | modeQueryToken}, // a long token
	} {
		f.Add([]byte(s.body), s.id, s.token, s.ifMatch, s.mode)
	}
	for i, b := range trickyBodies {
		f.Add([]byte(b), "", "", "", all)
		f.Add([]byte(at(3, 11, 0)), trickyHeaders[i%len(trickyHeaders)], trickyHeaders[(i+3)%len(trickyHeaders)], trickyHeaders[i%len(trickyHeaders)], uint8(i)&^modeCurrentETag)
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
		req := a.target(t, "/v1/appointments/", a.moveID, a.token, id, token, mode)
		if mode&modeCurrentETag != 0 {
			ifMatch = req.etag
		}
		v := a.moveVerdict(t, req, body, ifMatchSent(ifMatch))
		r := fetchJSON(t, noRedirects, "PATCH", req.u, body, withHeaderIfSafe(req.hdr, "If-Match", ifMatch)...)
		what := "PATCH " + clip([]byte(req.u), 200)
		wantSaneOr204(t, what, body, r, in...)
		wantVerdict(t, what, r, v)
		if r.Status == http.StatusOK {
			var got struct{ Appointment booking.Booking }
			r.Decode(&got)
			if got.Appointment.ID == uuid.Nil || got.Appointment.Status != booking.StatusConfirmed {
				t.Fatalf("a move answered 200 with %s", r.Body)
			}
			a.moveID = got.Appointment.ID // only its token moves a booking
		}
	})
}

// moveVerdict is what PATCH /v1/appointments/:id must answer req with body
// and the If-Match the server reads: the refusal of the first check the
// input fails, in the server's order (the body's size, the address's
// characters, the id, If-Match present and a version's ETag, the body,
// the token, the booking, its version).
func (a *jsonTargets) moveVerdict(t *testing.T, req manageRequest, body []byte, ifMatch string) verdict {
	t.Helper()
	s := serverView(t, req.u)
	switch {
	case len(body) > maxRequestBody:
		return must(http.StatusRequestEntityTooLarge, "TOO_LARGE", "a body over the server's 256 KB")
	case !s.plain():
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "an address with characters that are not allowed")
	}
	param, ok := s.param("/v1/appointments/", "")
	if !ok {
		return verdict{} // another route, or none
	}
	id, err := uuid.Parse(param)
	if err != nil {
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "an id that is not a UUID")
	}
	if ifMatch == "" {
		return must(http.StatusPreconditionRequired, "PRECONDITION_REQUIRED", "a move without If-Match")
	}
	version, ok := api.ParseETag(ifMatch)
	switch {
	case !ok:
		return must(http.StatusPreconditionFailed, "CONCURRENCY_CONFLICT", "an If-Match that is not a version's ETag")
	case req.token == "":
		return must(http.StatusUnauthorized, "TOKEN_REQUIRED", "a move without the manage token").unlessBody()
	case req.token != a.token || id != a.moveID:
		return must(http.StatusNotFound, "NOT_FOUND", "a token that is not the booking's").unlessBody()
	}
	etag := req.etag
	if etag == "" {
		etag = a.appointment(t, a.moveID, a.token).Header.Get("ETag")
	}
	if cur, _ := api.ParseETag(etag); version != cur {
		return must(http.StatusPreconditionFailed, "CONCURRENCY_CONFLICT", "a stale If-Match").unlessBody()
	}
	return verdict{}
}

// manageRequest is one input's request on a booking: its URL and headers,
// the booking's current ETag when the mode asks for it, and the manage
// token the server reads from it ("" for none).
type manageRequest struct {
	u     string
	hdr   []string
	etag  string
	token string
}

// target is the request for one input on the booking id/token: the real
// ones or the fuzzed ones, as mode says, and the booking's current ETag
// when mode asks for it.
func (a *jsonTargets) target(t *testing.T, prefix string, realID uuid.UUID, realToken, id, token string, mode uint8) manageRequest {
	t.Helper()
	if mode&modeRealID != 0 {
		id = realID.String()
	}
	if mode&modeRealToken != 0 {
		token = realToken
	}
	req := manageRequest{u: a.URL + prefix + pathSegment(id, mode&modeRawSegment != 0)}
	switch {
	case token == "":
	case mode&modeQueryToken != 0 || !headerSafe("Bearer "+token):
		req.u += "?token=" + url.QueryEscape(token)
		req.token = token
	default:
		req.hdr = append(req.hdr, "Authorization", "Bearer "+token)
		req.token = strings.TrimSpace(token) // as a header value loses its surrounding spaces
	}
	if mode&modeCurrentETag != 0 {
		r := a.appointment(t, realID, realToken)
		if r.Status != http.StatusOK {
			t.Fatalf("GET the booking for its ETag: %d %s", r.Status, r.Body)
		}
		req.etag = r.Header.Get("ETag")
	}
	return req
}

// DELETE /v1/appointments/:id?reason= (If-Match is sent but not required):
// once the booking is cancelled another is booked for the next input. A
// refusal is the one cancelVerdict says. Its seeds fail when Appointment
// (internal/checkout/manage.go) looks a booking up without a token (404
// instead of 401).
func FuzzAPICancel(f *testing.F) {
	a := bootJSONTargets(f)
	all := uint8(modeRealID | modeRealToken)
	for _, s := range []struct {
		id, token, ifMatch, reason string
		mode                       uint8
	}{
		{"", "", "", "", all},
		{"", "", "", "Feeling better", all | modeCurrentETag},
		{"", "", `"v99"`, "", all | modeQueryToken},
		{"", "", "", "SELECT pg_sleep(10); --", all},
		{"", "", "", strings.Repeat("r", 5000), all},
		{"", "", "", "Zürich ☃ \u202e", all},
		{"", "", "", "\x00", all},
		{"", "", "", "\xff", all},
		{"", "wrong-token", "", "", modeRealID},
		{"", "", "", "", modeRealID}, // no token: 401
		{uuid.NewString(), "", "", "", modeRealToken},
		{"not-a-uuid", "", "", "", modeRealToken},
		{"", "", "", "", modeRealToken | modeRawSegment},
		{"../../clinics/x/appointment-types", "", "", "", modeRealToken | modeRawSegment},
		{"00000000-0000-0000-0000-000000000000", "' OR 1=1 --", "", "", 0},
	} {
		f.Add(s.id, s.token, s.ifMatch, s.reason, s.mode)
	}
	for i, v := range trickyHeaders {
		f.Add(v, trickyHeaders[(i+5)%len(trickyHeaders)], v, v, uint8(i))
	}
	f.Fuzz(func(t *testing.T, id, token, ifMatch, reason string, mode uint8) {
		a.mu.Lock()
		defer a.mu.Unlock()
		in := []string{id, token, ifMatch, reason}
		req := a.target(t, "/v1/appointments/", a.cancelID, a.cancelTk, id, token, mode)
		if mode&modeCurrentETag != 0 {
			ifMatch = req.etag
		}
		if reason != "" {
			if strings.Contains(req.u, "?") {
				req.u += "&"
			} else {
				req.u += "?"
			}
			req.u += "reason=" + url.QueryEscape(reason)
		}
		r := fetchJSON(t, noRedirects, "DELETE", req.u, nil, withHeaderIfSafe(req.hdr, "If-Match", ifMatch)...)
		what := "DELETE " + clip([]byte(req.u), 200)
		wantSaneOr204(t, what, nil, r, in...)
		wantVerdict(t, what, r, a.cancelVerdict(t, req))
		if r.Status == http.StatusOK {
			var got struct{ Appointment booking.Booking }
			r.Decode(&got)
			if got.Appointment.ID != a.cancelID || got.Appointment.Status != booking.StatusCancelled {
				t.Fatalf("a cancel answered 200 with %s", r.Body)
			}
			a.rebook(t)
		}
	})
}

// cancelVerdict is what DELETE /v1/appointments/:id must answer req: the
// refusal of the first check the input fails, in the server's order (the
// address's characters, the id, the token, the booking). If-Match plays
// no part.
func (a *jsonTargets) cancelVerdict(t *testing.T, req manageRequest) verdict {
	t.Helper()
	s := serverView(t, req.u)
	if !s.plain() {
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "an address with characters that are not allowed")
	}
	param, ok := s.param("/v1/appointments/", "")
	if !ok {
		return verdict{} // another route, or none
	}
	id, err := uuid.Parse(param)
	switch {
	case err != nil:
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "an id that is not a UUID")
	case req.token == "":
		return must(http.StatusUnauthorized, "TOKEN_REQUIRED", "a cancel without the manage token")
	case req.token != a.cancelTk || id != a.cancelID:
		return must(http.StatusNotFound, "NOT_FOUND", "a token that is not the booking's")
	}
	return verdict{}
}

// rebook books the slot FuzzAPICancel cancels again (or the first free
// one after it, should the booking FuzzAPIReschedule moves sit there).
func (a *jsonTargets) rebook(t *testing.T) {
	t.Helper()
	for hh := 10; hh < 17; hh++ {
		conf, err := a.app.Deps.Bookings.Book(context.Background(),
			deskBooking(a.c, a.c.Type0(), a.c.Specialists[1].ID, a.c.At(4, hh, 0), booking.Patient{Name: "Fuzz Canceller", Email: "staff-booked@example.org"}))
		if err == nil {
			a.cancelID, a.cancelTk = conf.Booking.ID, conf.ManageToken
			return
		}
	}
	t.Fatal("no free slot to book the next booking to cancel")
}
