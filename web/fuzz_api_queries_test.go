package web_test

// Fuzz targets of the JSON GET endpoints' query and path parameters: a
// type's timeslots, a clinic's appointment types, and the hold stream.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// GET /v1/clinics/:slug/appointment-types
func FuzzAPIClinicTypes(f *testing.F) {
	a := bootJSONTargets(f)
	for _, s := range []string{a.c.Slug, a.sc.Slug, strings.ToUpper(a.c.Slug), a.c.Slug + "/", " " + a.c.Slug, a.c.Slug + "%2F..", "-", "a", strings.Repeat("a", 63), strings.Repeat("a", 64)} {
		f.Add(s, false)
		f.Add(s, true)
	}
	for i, v := range trickyValues {
		f.Add(v, i%2 == 0)
	}
	if r := fetchJSON(f, noRedirects, "GET", a.URL+"/v1/clinics/"+a.c.Slug+"/appointment-types", nil); r.Status != http.StatusOK {
		f.Fatalf("GET the clinic's types: %d %s", r.Status, r.Body)
	}
	f.Fuzz(func(t *testing.T, slug string, raw bool) {
		u := a.URL + "/v1/clinics/" + pathSegment(slug, raw) + "/appointment-types"
		r := fetchJSON(t, noRedirects, "GET", u, nil)
		wantSaneOr204(t, "GET "+clip([]byte(u), 200), nil, r, slug)
	})
}

// GET /v1/appointment-types/:id/timeslots?from=&to=&specialistId= and
// /v1/clinics/:slug/appointment-types: JSON, always.
func FuzzAPITimeslotsQuery(f *testing.F) {
	a := bootPageTargets(f)
	day := a.c.Week(a.monday)
	valid := []string{a.c.Type0().ID.String(), day, a.c.Week(a.monday.AddDate(0, 0, 6)), a.c.Specialists[0].ID.String(), a.c.Slug}
	seeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2], s[3], s[4], raw) })
	f.Add(valid[0], "0001-01-01", "0001-01-31", "", valid[4], false)
	f.Add(valid[0], "9999-12-01", "9999-12-31", "", valid[4], false)
	reaches(f, a.patient, "GET", a.URL+"/v1/appointment-types/"+valid[0]+"/timeslots"+query("from", valid[1], "to", valid[2]), nil, http.StatusOK, "Accept", "application/json")
	f.Fuzz(func(t *testing.T, id, from, to, specialist, slug string, raw bool) {
		in := []string{id, from, to, specialist, slug}
		for _, u := range []string{
			a.URL + "/v1/appointment-types/" + pathSegment(id, raw) + "/timeslots" + query("from", from, "to", to, "specialistId", specialist),
			a.URL + "/v1/clinics/" + pathSegment(slug, raw) + "/appointment-types",
		} {
			st, body := fetch(t, a.patient, "GET", u, nil, "Accept", "application/json")
			wantNoLeak(t, "GET "+clip([]byte(u), 200), in, st, body)
			if st != http.StatusNotFound && !json.Valid(body) { // an unknown route's 404 may be Echo's
				t.Fatalf("GET %s: %d with a body that is not JSON: %s", u, st, clip(body, 500))
			}
		}
	})
}

// GET /v1/holds/stream?appointmentTypeId=&clientId=&leaseMs=
func FuzzAPIHoldStreamQuery(f *testing.F) {
	a := bootPageTargets(f)
	valid := []string{a.c.Type0().ID.String(), "fuzz-client", "60000"}
	seeds(f, valid, func(s []string, raw bool) { f.Add(s[0], s[1], s[2]) })
	f.Add(valid[0], valid[1], "99")
	f.Add(valid[0], valid[1], "3600001")
	f.Add(valid[0], valid[1], "100")
	reaches(f, a.patient, "GET", a.URL+"/v1/holds/stream"+query("appointmentTypeId", valid[0], "clientId", valid[1]), nil, http.StatusOK)
	f.Fuzz(func(t *testing.T, typeID, client, lease string) {
		u := a.URL + "/v1/holds/stream" + query("appointmentTypeId", typeID, "clientId", client, "leaseMs", lease)
		st, body := fetch(t, a.patient, "GET", u, nil, "Accept", "text/event-stream")
		wantNoLeak(t, "GET hold stream", []string{typeID, client, lease}, st, body)
	})
}
