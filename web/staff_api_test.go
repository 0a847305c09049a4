package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// apiStaff is a signed-in staff browser session for the JSON API.
type apiStaff struct {
	t    *testing.T
	ts   *httptest.Server
	http *http.Client
	csrf string
}

func apiSignIn(t *testing.T, ts *httptest.Server, clinicID [16]byte, role string) *apiStaff {
	t.Helper()
	email := strings.ToLower("api-" + t.Name()[len(t.Name())-6:] + "-" + role + "@example.org")
	email = regexp.MustCompile(`[^a-z0-9@.-]`).ReplaceAllString(email, "x")
	hash, _ := bcrypt.GenerateFromPassword([]byte("correct horse battery"), bcrypt.MinCost)
	if _, err := db.New(testkit.DB(t)).StaffUserUpsert(context.Background(), db.StaffUserUpsertParams{
		ClinicID: clinicID, Email: email, Name: "API", PasswordHash: string(hash), Role: role,
	}); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	a := &apiStaff{t: t, ts: ts, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	a.csrf = a.token("/staff/login")
	res, err := a.http.PostForm(ts.URL+"/staff/login", url.Values{"email": {email}, "password": {"correct horse battery"}, "_csrf": {a.csrf}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", res.StatusCode)
	}
	a.csrf = a.token("/staff")
	return a
}

func (a *apiStaff) token(path string) string {
	a.t.Helper()
	res, err := a.http.Get(a.ts.URL + path)
	if err != nil {
		a.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(b)
	if m == nil {
		a.t.Fatalf("no CSRF token on %s", path)
	}
	return string(m[1])
}

func (a *apiStaff) do(method, path, body string, hdr map[string]string) (*http.Response, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", a.csrf)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := a.http.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res, out
}

func TestStaffAPIUsesETagAndIfMatch(t *testing.T) {
	t.Parallel()
	ts := newServer(t, nil)
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	admin := apiSignIn(t, ts, c.ID, "admin")
	path := "/v1/staff/specialists/" + c.Specialists[0].ID.String()

	res, body := admin.do(http.MethodGet, path, "", nil)
	etag := res.Header.Get("ETag")
	if res.StatusCode != 200 || etag != `"v1"` || body["name"] != "Specialist 1" {
		t.Fatalf("GET: %d %q %v", res.StatusCode, etag, body)
	}
	if hours, _ := body["hours"].([]any); len(hours) != 5 {
		t.Fatalf("hours %v", body["hours"])
	}

	t.Run("PatchWithoutIfMatchIs428", func(t *testing.T) {
		res, body := admin.do(http.MethodPatch, path, `{"priority":99}`, nil)
		if res.StatusCode != http.StatusPreconditionRequired || body["error"] == nil {
			t.Fatalf("%d %v", res.StatusCode, body)
		}
	})
	t.Run("PatchWithCurrentETagSaves", func(t *testing.T) {
		res, body := admin.do(http.MethodPatch, path, `{"priority":99}`, map[string]string{"If-Match": etag})
		if res.StatusCode != 200 || body["priority"] != 99.0 || res.Header.Get("ETag") != `"v2"` {
			t.Fatalf("%d %v %q", res.StatusCode, body, res.Header.Get("ETag"))
		}
	})
	t.Run("PatchWithStaleETagIs412AndChangesNothing", func(t *testing.T) {
		res, body := admin.do(http.MethodPatch, path, `{"priority":1}`, map[string]string{"If-Match": etag})
		if res.StatusCode != http.StatusPreconditionFailed || body["error"].(map[string]any)["code"] != "CONCURRENCY_CONFLICT" {
			t.Fatalf("%d %v", res.StatusCode, body)
		}
		_, now := admin.do(http.MethodGet, path, "", nil)
		if now["priority"] != 99.0 {
			t.Fatalf("a stale write changed the row: %v", now)
		}
	})
	t.Run("HoursUnderTheSpecialistsVersion", func(t *testing.T) {
		hours := `{"hours":[{"weekday":1,"start":"08:00","end":"12:00"},{"weekday":1,"start":"13:00","end":"17:00"}]}`
		res, _ := admin.do(http.MethodPut, path+"/hours", hours, map[string]string{"If-Match": `"v2"`})
		if res.StatusCode != 200 || res.Header.Get("ETag") != `"v3"` {
			t.Fatalf("PUT hours: %d %q", res.StatusCode, res.Header.Get("ETag"))
		}
		res, _ = admin.do(http.MethodPut, path+"/hours", hours, map[string]string{"If-Match": `"v2"`})
		if res.StatusCode != http.StatusPreconditionFailed {
			t.Fatalf("stale PUT hours: %d", res.StatusCode)
		}
		res, body := admin.do(http.MethodPut, path+"/hours", `{"hours":[{"weekday":1,"start":"08:00","end":"12:00"},{"weekday":1,"start":"11:00","end":"13:00"}]}`, map[string]string{"If-Match": `"v3"`})
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body["error"].(map[string]any)["message"].(string), "overlaps") {
			t.Fatalf("overlapping hours: %d %v", res.StatusCode, body)
		}
	})
	t.Run("WithoutTheCSRFHeaderIs403", func(t *testing.T) {
		res, _ := admin.do(http.MethodPatch, path, `{"priority":5}`, map[string]string{"If-Match": `"v3"`, "X-CSRF-Token": ""})
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("%d", res.StatusCode)
		}
	})
	t.Run("AnotherClinicsSpecialistIs404", func(t *testing.T) {
		res, _ := admin.do(http.MethodGet, "/v1/staff/specialists/"+other.Specialists[0].ID.String(), "", nil)
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("%d", res.StatusCode)
		}
		res, _ = admin.do(http.MethodPatch, "/v1/staff/specialists/"+other.Specialists[0].ID.String(), `{"priority":5}`, map[string]string{"If-Match": `"v1"`})
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("%d", res.StatusCode)
		}
	})
	t.Run("StaffRoleCannotEditSpecialists", func(t *testing.T) {
		st := apiSignIn(t, ts, c.ID, "staff")
		res, _ := st.do(http.MethodPatch, path, `{"priority":5}`, map[string]string{"If-Match": `"v3"`})
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("%d", res.StatusCode)
		}
	})
	t.Run("NotSignedInIs401", func(t *testing.T) {
		res, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%d", res.StatusCode)
		}
	})
}
