package web_test

// Fuzz targets of the staff JSON API, signed in as an admin with the CSRF
// header: PATCH a specialist and PUT their hours, with If-Match. A mode
// byte picks the real specialist, their current ETag, no CSRF header or no
// session. Each input must get the refusal of the first check it fails, in
// the order the server checks: the body's size, the address's characters,
// the session (401), the CSRF token (403), the id (404), If-Match (428
// without one, 412 when it is not an ETag of ours), the specialist (404
// for another clinic's) and their version (412 when stale).
//
// Their seeds fail when ifMatch (web/staff_api.go) answers a change
// without If-Match 412 instead of 428, and when the csrf middleware lets a
// change without the CSRF header through.

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/web/api"
)

// The mode bits of the staff targets.
const (
	modeStaffRealID     = 1 << iota // the specialist's id, not the fuzzed one
	modeStaffETag                   // If-Match: their current ETag
	modeStaffNoCSRF                 // without the CSRF header: 403 CSRF
	modeStaffRawSegment             // the fuzzed id unescaped, when it can be

	// Without the session cookie: 401 SIGN_IN_REQUIRED. The top bit, which
	// the seeds made from a counter never set.
	modeStaffNoSession = 1 << 7
)

// staff sends one request as the signed-in admin (with the CSRF header
// unless mode says not to; without the session when mode says so) on the
// specialist sp or the fuzzed id, and the fuzzed If-Match or sp's current
// ETag; it fails on a 5xx, a leak or another answer than staffVerdict's,
// and on being signed out.
func (a *jsonTargets) staff(t *testing.T, method, suffix string, sp uuid.UUID, body []byte, id, ifMatch string, mode uint8) *response {
	t.Helper()
	in := []string{id, ifMatch}
	if mode&modeStaffRealID != 0 {
		id = sp.String()
	}
	if mode&modeStaffETag != 0 {
		ifMatch = a.specialistETag(t, sp)
	}
	hdr := withHeaderIfSafe(nil, "If-Match", ifMatch)
	if mode&modeStaffNoCSRF == 0 {
		hdr = append(hdr, "X-CSRF-Token", a.admin.CSRF)
	}
	hc := a.admin.hc
	if mode&modeStaffNoSession != 0 {
		hc = noRedirects // no cookies
	}
	u := a.URL + "/v1/staff/specialists/" + pathSegment(id, mode&modeStaffRawSegment != 0) + suffix
	v := a.staffVerdict(t, method, u, suffix, body, ifMatchSent(ifMatch), mode)
	r := fetchJSON(t, hc, method, u, body, hdr...)
	what := method + " " + clip([]byte(u), 200)
	wantSaneOr204(t, what, body, r, in...)
	wantVerdict(t, what, r, v)
	if r.Status == http.StatusUnauthorized && mode&modeStaffNoSession == 0 {
		t.Fatalf("%s %s: 401; the fuzzer must stay signed in: %s", method, u, r.Body)
	}
	return r
}

// staffVerdict is what the staff API must answer a request to u with body
// and the If-Match the server reads ("" for none).
func (a *jsonTargets) staffVerdict(t *testing.T, method, u, suffix string, body []byte, ifMatch string, mode uint8) verdict {
	t.Helper()
	s := serverView(t, u)
	switch {
	case len(body) > maxRequestBody:
		return must(http.StatusRequestEntityTooLarge, "TOO_LARGE", "a body over the server's 256 KB")
	case !s.plain():
		return must(http.StatusBadRequest, "INVALID_ARGUMENT", "an address with characters that are not allowed")
	}
	param, ok := s.param("/v1/staff/specialists/", suffix)
	if !ok {
		return verdict{} // another route, or none
	}
	switch {
	case mode&modeStaffNoSession != 0:
		return must(http.StatusUnauthorized, "SIGN_IN_REQUIRED", "a request without the session")
	case mode&modeStaffNoCSRF != 0:
		return must(http.StatusForbidden, "CSRF", "a change without the CSRF header")
	}
	id, err := uuid.Parse(param)
	if err != nil {
		return must(http.StatusNotFound, "NOT_FOUND", "an id that is not a UUID")
	}
	if ifMatch == "" {
		return must(http.StatusPreconditionRequired, "PRECONDITION_REQUIRED", "a change without If-Match")
	}
	version, ok := api.ParseETag(ifMatch)
	if !ok {
		return must(http.StatusPreconditionFailed, "CONCURRENCY_CONFLICT", "an If-Match that is not a version's ETag")
	}
	if !slices.ContainsFunc(a.sc.Specialists, func(sp db.Specialist) bool { return sp.ID == id }) {
		v := must(http.StatusNotFound, "NOT_FOUND", "another clinic's specialist, or nobody's id")
		if method == http.MethodPut {
			v = v.unlessBody() // the hours are read before the specialist
		}
		return v
	}
	if cur, _ := api.ParseETag(a.specialistETag(t, id)); version != cur {
		return must(http.StatusPreconditionFailed, "CONCURRENCY_CONFLICT", "a stale If-Match").unlessBody()
	}
	return verdict{}
}

// specialistETag is the staff clinic's specialist's current ETag.
func (a *jsonTargets) specialistETag(t *testing.T, sp uuid.UUID) string {
	t.Helper()
	r := fetchJSON(t, a.admin.hc, "GET", a.URL+"/v1/staff/specialists/"+sp.String(), nil)
	if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
		t.Fatalf("GET the specialist for the ETag: %d %s", r.Status, r.Body)
	}
	return r.Header.Get("ETag")
}

// restoreName gives sp a plain name again when a saved one holds a leak
// marker (the answer echoed what it was sent), so that a later input's
// answer (a 412 shows the current row) does not show it unasked.
func (a *jsonTargets) restoreName(t *testing.T, sp uuid.UUID, r *response) {
	t.Helper()
	for _, m := range leaks {
		if strings.Contains(r.Body, m) {
			if r := a.staff(t, "PATCH", "", sp, []byte(`{"name":"Fuzz Specialist"}`), "", "", modeStaffRealID|modeStaffETag); r.Status != http.StatusOK {
				t.Fatalf("restore the name: %d %s", r.Status, r.Body)
			}
			return
		}
	}
}

// PATCH /v1/staff/specialists/:id {name, priority, active} with If-Match.
func FuzzAPIStaffSpecialist(f *testing.F) {
	a := bootJSONTargets(f)
	sp := a.sc.Specialists[0].ID
	all := uint8(modeStaffRealID | modeStaffETag)
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
		{`{"priority":5}`, "", "", modeStaffRealID},                   // no If-Match: 428
		{`{"priority":5}`, "", `"v999"`, modeStaffRealID},             // stale: 412
		{`{"priority":5}`, "", "", all | modeStaffNoCSRF},             // 403
		{`{"priority":5}`, "", "", all | modeStaffNoSession},          // 401
		{`{"priority":5}`, a.c.Specialists[0].ID.String(), `"v1"`, 0}, // another clinic's: 404
		{`{"priority":5}`, uuid.NewString(), `"v1"`, 0},
		{`{"priority":5}`, "not-a-uuid", `"v1"`, 0},
		{`{"priority":5}`, "../specialists", `"v1"`, modeStaffRawSegment},
	} {
		f.Add([]byte(s.body), s.id, s.ifMatch, s.mode)
	}
	for i, b := range trickyBodies {
		f.Add([]byte(b), "", "", all)
		f.Add([]byte(`{"priority":3}`), trickyHeaders[i%len(trickyHeaders)], trickyHeaders[(i+2)%len(trickyHeaders)], uint8(i)&^modeStaffETag)
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
	a := bootJSONTargets(f)
	sp := a.sc.Specialists[1].ID
	all := uint8(modeStaffRealID | modeStaffETag)
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
		{`{"hours":[]}`, "", "", modeStaffRealID},                   // 428
		{`{"hours":[]}`, "", `"v999"`, modeStaffRealID},             // 412
		{`{"hours":[]}`, "", "", all | modeStaffNoCSRF},             // 403
		{`{"hours":[]}`, "", "", all | modeStaffNoSession},          // 401
		{`{"hours":[]}`, a.c.Specialists[1].ID.String(), `"v1"`, 0}, // another clinic's: 404
		{`{"hours":[]}`, "not-a-uuid", `"v1"`, 0},
	} {
		f.Add([]byte(s.body), s.id, s.ifMatch, s.mode)
	}
	for i, b := range trickyBodies {
		f.Add([]byte(b), "", "", all)
		f.Add([]byte(`{"hours":[]}`), trickyHeaders[i%len(trickyHeaders)], trickyHeaders[(i+4)%len(trickyHeaders)], uint8(i)&^modeStaffETag)
	}
	f.Fuzz(func(t *testing.T, body []byte, id, ifMatch string, mode uint8) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.staff(t, "PUT", "/hours", sp, body, id, ifMatch, mode)
	})
}
