package web_test

// Tests of what every request passes through: the body limit, and the
// refusal of a NUL or bytes that are not UTF-8 anywhere in a request, in
// urlencoded and multipart forms alike.

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

func TestOversizedBodiesAre413(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	for name, size := range map[string]int{"OverTheJSONLimit": 100 << 10, "OverTheServerLimit": 1 << 20} {
		t.Run(name, func(t *testing.T) {
			body := `{"clientId":"` + strings.Repeat("x", size) + `"}`
			if r := a.do(t, "POST", "/v1/holds", body); r.Status != http.StatusRequestEntityTooLarge {
				t.Fatalf("want 413, got %d", r.Status)
			}
		})
	}
}

// FormValue reads multipart bodies too, so a form sent as multipart is
// checked like any other: a NUL in it is a 400 naming the field, never a
// database error.
func TestMultipartFormsAreCheckedLikeUrlencodedOnes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	cl := a.newClient(t)
	cl.Get("/staff/login").Want(http.StatusOK)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{"email": "a\x00b@example.org", "password": password, "_csrf": cl.CSRF} {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	r := cl.do("POST", "/staff/login", &body, http.Header{"Content-Type": {mw.FormDataContentType()}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "email") {
		t.Fatalf("multipart sign-in with a NUL in the e-mail: %d %s, want 400 naming email", r.Status, clip(r.Body, 300))
	}
}

// Found by these targets: a NUL or bytes that are not UTF-8 in a path
// segment (/c/%00), a query value or a staff form field reached PostgreSQL,
// which refused the text: a 500. Now each is a 400 before any handler,
// while the API's JSON bodies are left to the API, whatever their
// Content-Type says.
func TestFuzzPagesNULOrBadUTF8Are400(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	cl := a.signIn(t, a.newAccount(t, c.ID, "admin"))
	sp := c.Specialists[0].ID.String()
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		for _, u := range []string{
			"/c/" + url.PathEscape(bad),
			"/kiosk/" + url.PathEscape(bad) + "/live",
			"/staff/bookings/search" + query("q", bad),
			"/staff/audit" + query("actor", bad),
			"/v1/clinics/" + url.PathEscape(bad) + "/appointment-types",
		} {
			r := cl.Get(u)
			wantNoLeak(t, "GET "+u, nil, r.Status, []byte(r.Body))
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
			{"/staff/users", url.Values{"email": {"x@example.org"}, "name": {bad}, "password": {password}, "role": {"staff"}}},
			{"/staff/kiosks", url.Values{"name": {bad}}},
			{"/staff/kiosks", url.Values{bad: {"x"}}},
		} {
			r := cl.Post(p.path, p.form)
			wantNoLeak(t, "POST "+p.path, nil, r.Status, []byte(r.Body))
			if r.Status != http.StatusBadRequest {
				t.Errorf("POST %s with %q: %d, want 400", p.path, bad, r.Status)
			}
		}
	}
	// Plain text still works, and JSON sent to the API as a form (curl -d)
	// is still read as JSON.
	cl.Post("/staff/kiosks", url.Values{"name": {"Waiting room ☃"}}).Want(http.StatusCreated)
	body, _ := json.Marshal(holdBody(c.Types[0].ID, c.Next(time.Monday, 10, 0), clientID()))
	if r := a.do(t, "POST", "/v1/holds", body, "Content-Type", "application/x-www-form-urlencoded"); r.Status != http.StatusCreated {
		t.Errorf("POST /v1/holds, JSON labelled a form: %d, want 201", r.Status)
	}
}
