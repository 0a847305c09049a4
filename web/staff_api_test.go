package web_test

// Tests of the staff JSON API (/v1/staff): ETag and If-Match, the CSRF
// header, roles and clinic scoping.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/testkit"
)

// staffJSON sends a JSON request as the signed-in browser cl, with its
// CSRF token in the header htmx sends (hdr may override or, with "",
// leave it out), and decodes the answer.
func staffJSON(cl *client, method, path, body string, hdr ...string) (*response, map[string]any) {
	cl.t.Helper()
	r := cl.send(method, path, body, append([]string{"X-CSRF-Token", cl.CSRF}, hdr...)...)
	var out map[string]any
	_ = json.Unmarshal([]byte(r.Body), &out)
	return r, out
}

func TestStaffAPIUsesETagAndIfMatch(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	other := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)
	path := "/v1/staff/specialists/" + c.Specialists[0].ID.String()

	res, body := staffJSON(admin, http.MethodGet, path, "")
	etag := res.Header.Get("ETag")
	if res.Status != 200 || etag != `"v1"` || body["name"] != "Specialist 1" {
		t.Fatalf("GET: %d %q %v", res.Status, etag, body)
	}
	if hours, _ := body["hours"].([]any); len(hours) != 5 {
		t.Fatalf("hours %v", body["hours"])
	}

	t.Run("PatchWithoutIfMatchIs428", func(t *testing.T) {
		res, body := staffJSON(admin, http.MethodPatch, path, `{"priority":99}`)
		if res.Status != http.StatusPreconditionRequired || body["error"] == nil {
			t.Fatalf("%d %v", res.Status, body)
		}
	})
	t.Run("PatchWithCurrentETagSaves", func(t *testing.T) {
		res, body := staffJSON(admin, http.MethodPatch, path, `{"priority":99}`, "If-Match", etag)
		if res.Status != 200 || body["priority"] != 99.0 || res.Header.Get("ETag") != `"v2"` {
			t.Fatalf("%d %v %q", res.Status, body, res.Header.Get("ETag"))
		}
	})
	t.Run("PatchWithStaleETagIs412AndChangesNothing", func(t *testing.T) {
		res, body := staffJSON(admin, http.MethodPatch, path, `{"priority":1}`, "If-Match", etag)
		if res.Status != http.StatusPreconditionFailed || body["error"].(map[string]any)["code"] != "CONCURRENCY_CONFLICT" {
			t.Fatalf("%d %v", res.Status, body)
		}
		_, now := staffJSON(admin, http.MethodGet, path, "")
		if now["priority"] != 99.0 {
			t.Fatalf("a stale write changed the row: %v", now)
		}
	})
	t.Run("HoursUnderTheSpecialistsVersion", func(t *testing.T) {
		hours := `{"hours":[{"weekday":1,"start":"08:00","end":"12:00"},{"weekday":1,"start":"13:00","end":"17:00"}]}`
		res, _ := staffJSON(admin, http.MethodPut, path+"/hours", hours, "If-Match", `"v2"`)
		if res.Status != 200 || res.Header.Get("ETag") != `"v3"` {
			t.Fatalf("PUT hours: %d %q", res.Status, res.Header.Get("ETag"))
		}
		res, _ = staffJSON(admin, http.MethodPut, path+"/hours", hours, "If-Match", `"v2"`)
		if res.Status != http.StatusPreconditionFailed {
			t.Fatalf("stale PUT hours: %d", res.Status)
		}
		res, body := staffJSON(admin, http.MethodPut, path+"/hours", `{"hours":[{"weekday":1,"start":"08:00","end":"12:00"},{"weekday":1,"start":"11:00","end":"13:00"}]}`, "If-Match", `"v3"`)
		if res.Status != http.StatusBadRequest || !strings.Contains(body["error"].(map[string]any)["message"].(string), "overlaps") {
			t.Fatalf("overlapping hours: %d %v", res.Status, body)
		}
	})
	t.Run("WithoutTheCSRFHeaderIs403", func(t *testing.T) {
		res, _ := staffJSON(admin, http.MethodPatch, path, `{"priority":5}`, "If-Match", `"v3"`, "X-CSRF-Token", "")
		if res.Status != http.StatusForbidden {
			t.Fatalf("%d", res.Status)
		}
	})
	t.Run("AnotherClinicsSpecialistIs404", func(t *testing.T) {
		res, _ := staffJSON(admin, http.MethodGet, "/v1/staff/specialists/"+other.Specialists[0].ID.String(), "")
		if res.Status != http.StatusNotFound {
			t.Fatalf("%d", res.Status)
		}
		res, _ = staffJSON(admin, http.MethodPatch, "/v1/staff/specialists/"+other.Specialists[0].ID.String(), `{"priority":5}`, "If-Match", `"v1"`)
		if res.Status != http.StatusNotFound {
			t.Fatalf("%d", res.Status)
		}
	})
	t.Run("StaffRoleCannotEditSpecialists", func(t *testing.T) {
		st := a.signIn(t, c.Staff)
		res, _ := staffJSON(st, http.MethodPatch, path, `{"priority":5}`, "If-Match", `"v3"`)
		if res.Status != http.StatusForbidden {
			t.Fatalf("%d", res.Status)
		}
	})
	t.Run("NotSignedInIs401", func(t *testing.T) {
		if r := a.do(t, http.MethodGet, path, nil); r.Status != http.StatusUnauthorized {
			t.Fatalf("%d", r.Status)
		}
	})
}
