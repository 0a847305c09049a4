package web_test

// Fuzz targets of the staff JSON API, signed in as an admin with the CSRF
// header: PATCH a specialist and PUT their hours, with If-Match. A mode
// byte picks the real specialist, their current ETag, or no CSRF header.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The mode bits of the staff targets.
const (
	modeStaffRealID     = 1 << iota // the specialist's id, not the fuzzed one
	modeStaffETag                   // If-Match: their current ETag
	modeStaffNoCSRF                 // without the CSRF header: 403
	modeStaffRawSegment             // the fuzzed id unescaped, when it can be
)

// staff sends one request as the signed-in admin (with the CSRF header
// unless mode says not to) on the specialist sp or the fuzzed id, and the
// fuzzed If-Match or sp's current ETag; it fails on a 5xx or a leak, and
// on being signed out.
func (a *jsonTargets) staff(t *testing.T, method, suffix string, sp uuid.UUID, body []byte, id, ifMatch string, mode uint8) *response {
	t.Helper()
	in := []string{id, ifMatch}
	if mode&modeStaffRealID != 0 {
		id = sp.String()
	}
	if mode&modeStaffETag != 0 {
		r := fetchJSON(t, a.admin.hc, "GET", a.URL+"/v1/staff/specialists/"+sp.String(), nil)
		if r.Status != http.StatusOK {
			t.Fatalf("GET the specialist for the ETag: %d %s", r.Status, r.Body)
		}
		ifMatch = r.Header.Get("ETag")
	}
	hdr := withHeaderIfSafe(nil, "If-Match", ifMatch)
	if mode&modeStaffNoCSRF == 0 {
		hdr = append(hdr, "X-CSRF-Token", a.admin.CSRF)
	}
	u := a.URL + "/v1/staff/specialists/" + pathSegment(id, mode&modeStaffRawSegment != 0) + suffix
	r := fetchJSON(t, a.admin.hc, method, u, body, hdr...)
	wantSaneOr204(t, method+" "+clip([]byte(u), 200), body, r, in...)
	if r.Status == http.StatusUnauthorized {
		t.Fatalf("%s %s: 401; the fuzzer must stay signed in: %s", method, u, r.Body)
	}
	return r
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
