package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/clinic/booking/web"
)

// Staff changes are limited per account: past the limit a change is
// refused with 429, Retry-After and a message naming the limit, reading
// still works, and another account of the clinic is not affected.
func TestStaffChangesAreRateLimitedPerAccount(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{StaffWritesPerMinute: 3})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	for i := range 3 {
		admin.Post("/staff/kiosks", url.Values{"name": {"Lobby " + string(rune('A'+i))}}).Want(http.StatusCreated)
	}
	r := admin.Post("/staff/kiosks", url.Values{"name": {"One too many"}}).Want(http.StatusTooManyRequests)
	if r.Header.Get("Retry-After") == "" {
		t.Error("a refused change has no Retry-After")
	}
	if body := string(r.Body); !strings.Contains(body, "at most 3 per minute") {
		t.Errorf("the refusal does not name the limit: %s", pgClip(body, 300))
	}
	admin.Get("/staff/kiosks").Want(http.StatusOK)

	other := stfSignIn(t, app, stfNewAccount(t, app.Pool, c.ID, "admin"))
	other.Post("/staff/kiosks", url.Values{"name": {"Front desk"}}).Want(http.StatusCreated)
}
