package web_test

// Tests of the admin pages: staff accounts and kiosk device tokens.

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

func TestStaffAccounts(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	page := admin.Get("/staff/users").Want(http.StatusOK)
	if !strings.Contains(page.Text(`[data-testid="table"]`), c.Staff.Email) {
		t.Error("the accounts list lacks the staff account")
	}
	email := "Nurse-" + uuid.NewString()[:8] + "@Example.org"
	r := admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Nurse"}, "password": {"a long password"}, "role": {"staff"}}).Want(http.StatusCreated)
	if r.Text(`[data-testid="notice"]`) != "Account created." || !strings.Contains(r.Text(`[data-testid="table"]`), strings.ToLower(email)) {
		t.Errorf("after creating: %q", r.Text(`[data-testid="notice"]`))
	}
	if strings.Contains(r.Body, "a long password") {
		t.Error("the page shows the password")
	}
	nurse := a.newClient(t)
	nurse.Get("/staff/login")
	nurse.Post("/staff/login", url.Values{"email": {email}, "password": {"a long password"}}).WantRedirect("/staff/day")
	nurse.Get("/staff/users").Want(http.StatusForbidden)

	before := a.auditCount(t, c.ID)
	if r := admin.Post("/staff/users", url.Values{"email": {email}, "name": {"Again"}, "password": {"a long password"}, "role": {"staff"}}); r.Status != http.StatusConflict || !strings.Contains(r.Text(`[role="alert"]`), "already an account") {
		t.Errorf("duplicate e-mail: %d %q", r.Status, r.Text(`[role="alert"]`))
	}
	if r := admin.Post("/staff/users", url.Values{"email": {"short@example.org"}, "name": {"S"}, "password": {"short"}, "role": {"staff"}}); r.Status != http.StatusBadRequest || !strings.Contains(r.Text(`[role="alert"]`), "at least 12 characters") {
		t.Errorf("short password: %d %q", r.Status, r.Text(`[role="alert"]`))
	}
	if r := admin.Post("/staff/users", url.Values{"email": {"boss@example.org"}, "name": {"B"}, "password": {"a long password"}, "role": {"owner"}}); r.Status != http.StatusBadRequest {
		t.Errorf("unknown role: %d", r.Status)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("refused accounts wrote %d rows", n-before)
	}
}

var kioskLink = regexp.MustCompile(`/kiosk/([a-z0-9-]+)\?device=([A-Za-z0-9_%-]+)`)

// createKioskToken makes a kiosk token named name as admin and returns the
// device link the page shows (once): the board's slug and the token,
// escaped for a URL.
func createKioskToken(t *testing.T, admin *client, name string) (slug, device string) {
	t.Helper()
	r := admin.Post("/staff/kiosks", url.Values{"name": {name}}).Want(http.StatusCreated)
	m := kioskLink.FindStringSubmatch(r.Text(`[data-testid="notice"]`))
	if m == nil {
		t.Fatalf("the page does not show the device link: %q", r.Text(`[data-testid="notice"]`))
	}
	return m[1], m[2]
}

func TestStaffKioskTokens(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	board := func(query string) int {
		t.Helper()
		return a.do(t, "GET", "/kiosk/"+c.Slug+query, nil).Status
	}
	if s := board(""); s != http.StatusOK {
		t.Fatalf("before any token the board is public: %d", s)
	}

	create := func(name string) string {
		t.Helper()
		slug, device := createKioskToken(t, admin, name)
		if slug != c.Slug {
			t.Fatalf("the device link is for the board of %q, want %q", slug, c.Slug)
		}
		tok, _ := url.QueryUnescape(device)
		if strings.Contains(admin.Get("/staff/kiosks").Body, device) {
			t.Error("the device link is shown again: it must be shown once")
		}
		return tok
	}
	tok1 := create("Waiting room 1")
	if s := board(""); s != http.StatusForbidden {
		t.Errorf("with a token made, the board without it: %d, want 403", s)
	}
	if s := board("?device=" + url.QueryEscape(tok1)); s != http.StatusOK {
		t.Errorf("the board with its token: %d", s)
	}
	if s := board("?device=k_madeup"); s != http.StatusForbidden {
		t.Errorf("the board with a made-up token: %d", s)
	}
	// The board's stream needs the token too.
	if st := board("/live"); st != http.StatusForbidden {
		t.Errorf("the board's stream without the token: %d", st)
	}
	tok2 := create("Waiting room 2")

	page := admin.Get("/staff/kiosks").Want(http.StatusOK)
	id1 := kioskTokenID(page, "Waiting room 1")
	if id1 == "" {
		t.Fatal("no revoke option for Waiting room 1")
	}
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id1}}).Want(http.StatusOK)
	if s := board("?device=" + url.QueryEscape(tok1)); s != http.StatusForbidden {
		t.Errorf("the revoked token still opens the board: %d", s)
	}
	if s := board("?device=" + url.QueryEscape(tok2)); s != http.StatusOK {
		t.Errorf("the other token stopped working: %d", s)
	}
	if s := board(""); s != http.StatusForbidden {
		t.Errorf("with one token still active, the board without a token: %d", s)
	}
	if txt := admin.Get("/staff/kiosks").Text(`[data-testid="table"]`); !strings.Contains(txt, "Revoked") {
		t.Errorf("the list does not show the revoked token: %q", txt)
	}
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id1}}).Want(http.StatusNotFound)
	if r := admin.Post("/staff/kiosks", url.Values{"name": {"  "}}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a token without a name: %d", r.Status)
	}
}

// kioskTokenID is the id the kiosk page's Revoke button of the token
// named name posts.
func kioskTokenID(page *response, name string) string {
	var id string
	page.Doc().Find(`form[data-testid="kiosk-revoke"] input[name="id"]`).Each(func(_ int, o *goquery.Selection) {
		if n, _ := o.Attr("data-name"); n == name {
			id, _ = o.Attr("value")
		}
	})
	return id
}
