package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// The settings page shows and saves when online bookings must prove
// their e-mail address; a value it does not offer is 400 in place.
func TestSettingsVerification(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)

	page := admin.Get("/staff/settings").Want(http.StatusOK)
	if n := page.Doc().Find(`select[name="verification"] option`).Length(); n != 3 {
		t.Fatalf("%d verification options, want 3", n)
	}
	f := page.Form(settingsForm)
	if got := f.Values.Get("verification"); got != "past_allowance" {
		t.Fatalf("a new clinic's verification is %q, want past_allowance", got)
	}
	bad := cloneValues(f.Values)
	bad.Set("verification", "sometimes")
	r := admin.Post("/staff/settings", bad).Want(http.StatusBadRequest)
	if r.Text(`[data-testid="verification-error"]`) == "" {
		t.Fatal("a bad verification value is not named in place")
	}
	v := cloneValues(f.Values)
	v.Set("verification", "always")
	admin.Post("/staff/settings", v).WantRedirect("/staff/settings?saved=1")
	got, err := db.New(a.Pool).ClinicGet(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verification != "always" {
		t.Fatalf("stored verification %q", got.Verification)
	}
	if v := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values.Get("verification"); v != "always" {
		t.Fatalf("the page shows %q after the save", v)
	}
}
