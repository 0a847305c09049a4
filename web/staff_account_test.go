package web_test

// Tests of Your account (a staff member changes their own password) and
// of the sign-in links admins make on the Staff accounts page.

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

const changedPassword = "copper kettle under snow"

// changeForm is the form of Your account.
func changeForm(current, next, confirm string) url.Values {
	return url.Values{"current": {current}, "password": {next}, "confirm": {confirm}}
}

// sessionStored says whether the session store still has token.
func (a *app) sessionStored(t testing.TB, token string) bool {
	t.Helper()
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions WHERE token = $1`, token).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// signInWith signs email in with pw in a new browser and returns the
// status of the sign-in.
func (a *app) signInWith(t testing.TB, email, pw string) int {
	t.Helper()
	cl := a.newClient(t)
	cl.Get("/staff/login").Want(http.StatusOK)
	return cl.Post("/staff/login", url.Values{"email": {email}, "password": {pw}}).Status
}

// Every role opens Your account from the header link.
func TestAccountPageForEveryRole(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	for _, role := range staff.Roles {
		acc := a.newAccount(t, c.ID, role)
		cl := a.signIn(t, acc)
		link := cl.Get("/staff").Want(http.StatusOK).Doc().Find(`[data-testid="account-link"]`)
		if href, _ := link.Attr("href"); href != "/staff/account" || text(link) != acc.Email {
			t.Errorf("%s: the header link is %q %q", role, href, text(link))
		}
		page := cl.Get("/staff/account").Want(http.StatusOK)
		f := page.Form(`[data-testid="password-form"]`)
		if f.Action != "/staff/account" || !f.Values.Has("current") || !f.Values.Has("password") || !f.Values.Has("confirm") || f.Values.Get("_csrf") == "" {
			t.Errorf("%s: the form %+v", role, f)
		}
		if page.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: the page may be cached", role)
		}
	}
	a.newClient(t).Get("/staff/account").WantRedirect("/staff/login")
}

// Refusals name their field, echo no password and write nothing; the
// change stores the new password, ends the account's other sessions and
// their streams, and keeps this browser signed in under a new token.
func TestAccountChangePassword(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	acc := a.newAccount(t, c.ID, staff.RoleReception)
	cl := a.signIn(t, acc)
	elsewhere := a.signIn(t, acc)
	stream := openStaffLive(t, a, elsewhere, "?view=day")
	colleague := a.signIn(t, c.Staff)
	cl.Get("/staff/account").Want(http.StatusOK)

	before := a.auditCount(t, c.ID)
	for _, tc := range []struct {
		form        url.Values
		field, says string
	}{
		{changeForm("not the password", changedPassword, changedPassword), "current", "not right"},
		{changeForm(password, changedPassword, changedPassword+"!"), "confirm", "not the same"},
		{changeForm(password, "too short", "too short"), "password", "12"},
		{changeForm(password, acc.Email, acc.Email), "password", "e-mail"},
		{changeForm(password, "password1234", "password1234"), "password", "common"},
	} {
		r := cl.Post("/staff/account", tc.form).Want(http.StatusBadRequest)
		if msg := r.Text(`[data-testid="` + tc.field + `-error"]`); !strings.Contains(msg, tc.says) {
			t.Errorf("%v: %s says %q, want %q", tc.form, tc.field, msg, tc.says)
		}
		if strings.Contains(r.Body, changedPassword) || strings.Contains(r.Body, password) {
			t.Errorf("%v: the page echoes a password", tc.form)
		}
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Fatalf("refused changes wrote %d audit rows", n-before)
	}

	oldToken := cl.Cookie()
	r := cl.Post("/staff/account", changeForm(password, changedPassword, changedPassword)).Want(http.StatusOK)
	if msg := r.Text(`[data-testid="notice"]`); !strings.Contains(msg, "changed") || !strings.Contains(msg, "signed out") {
		t.Errorf("the notice says %q", msg)
	}
	row := a.lastAudit(t, c.ID)
	if row.Action != "staff.change_password" || row.EntityID != acc.ID.String() || row.Actor != acc.Actor() || a.auditCount(t, c.ID) != before+1 {
		t.Errorf("the audit row: %s %s %s", row.Action, row.EntityID, row.Actor)
	}
	if all := string(row.Before) + string(row.After) + row.Reason; strings.Contains(all, changedPassword) || strings.Contains(all, "$2a$") {
		t.Errorf("the audit row holds password material: %s", all)
	}

	// This browser stays in, under a new token; the old one is gone.
	if cl.Cookie() == oldToken || a.sessionStored(t, oldToken) {
		t.Error("the session token was not renewed")
	}
	cl.Get("/staff").Want(http.StatusOK)
	cl.Get("/staff/account").Want(http.StatusOK)
	// The other browser of the account is out, and its stream ends.
	wantStreamEnd(t, stream, "access-ended")
	elsewhere.Get("/staff").WantRedirect("/staff/login")
	colleague.Get("/staff").Want(http.StatusOK)

	if s := a.signInWith(t, acc.Email, password); s != http.StatusUnauthorized {
		t.Errorf("the old password signs in: %d", s)
	}
	if s := a.signInWith(t, acc.Email, changedPassword); s != http.StatusSeeOther {
		t.Errorf("the new password does not sign in: %d", s)
	}
}

// Tries of the current password count as sign-in attempts: past the
// allowance even the right one is refused with 429 and Retry-After.
func TestAccountWrongCurrentPasswordIsRateLimited(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{LoginsPerMinute: 3})) // per account
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	avoidWindowEdge(20 * time.Second)
	cl := a.signIn(t, c.Staff) // the first of the account's three
	cl.Get("/staff/account").Want(http.StatusOK)
	for range 2 {
		cl.Post("/staff/account", changeForm("a guess at it", changedPassword, changedPassword)).Want(http.StatusBadRequest)
	}
	r := cl.Post("/staff/account", changeForm(password, changedPassword, changedPassword)).Want(http.StatusTooManyRequests)
	retryAfter(t, r)
	if s := a.signInWith(t, c.Staff.Email, changedPassword); s == http.StatusSeeOther {
		t.Error("the refused change was made")
	}
	cl.Get("/staff").Want(http.StatusOK)
}

var welcomeLink = regexp.MustCompile(`https?://[^ ]+(/staff/welcome/[A-Za-z0-9_-]+)`)

// makeLink makes a sign-in link for id as admin and returns its path.
func makeLink(t *testing.T, a *app, admin *client, id string) string {
	t.Helper()
	r := admin.Post("/staff/users/link", url.Values{"id": {id}}).Want(http.StatusCreated)
	notice := r.Text(`[data-testid="notice"]`)
	m := welcomeLink.FindStringSubmatch(notice)
	if m == nil || !strings.HasPrefix(m[0], a.URL+"/staff/welcome/") {
		t.Fatalf("the page does not show the link: %q", notice)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Error("the page with the link may be cached")
	}
	return m[1]
}

// An admin's link: shown once, audited, the older link replaced, the
// account's sessions and streams ended, the link works once.
func TestAccountAdminMakesSignInLink(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	target := a.newAccount(t, c.ID, staff.RoleStaff)
	targetCl := a.signIn(t, target)
	stream := openStaffLive(t, a, targetCl, "?view=day")
	colleague := a.signIn(t, c.Staff)

	page := admin.Get("/staff/users").Want(http.StatusOK).Doc()
	if page.Find(`[data-testid="user-link-form"] input[name="id"][value="`+target.ID.String()+`"]`).Length() != 1 ||
		page.Find(`[data-testid="user-link-form"] input[name="id"][value="`+c.Admin.ID.String()+`"]`).Length() != 0 {
		t.Error("the link form does not offer the others' accounts only")
	}
	before := a.auditCount(t, c.ID)
	first := makeLink(t, a, admin, target.ID.String())
	row := a.lastAudit(t, c.ID)
	if row.Action != "staff.reset_password" || row.EntityID != target.ID.String() || row.Actor != c.Admin.Actor() || a.auditCount(t, c.ID) != before+1 {
		t.Errorf("the audit row: %s %s %s", row.Action, row.EntityID, row.Actor)
	}
	if strings.Contains(admin.Get("/staff/users").Body, strings.TrimPrefix(first, "/staff/welcome/")) {
		t.Error("the link is shown again")
	}
	wantStreamEnd(t, stream, "access-ended")
	targetCl.Get("/staff").WantRedirect("/staff/login")
	colleague.Get("/staff").Want(http.StatusOK)
	admin.Get("/staff").Want(http.StatusOK)

	path := makeLink(t, a, admin, target.ID.String())
	a.newClient(t).Get(first).Want(http.StatusGone)
	b := a.newClient(t)
	b.Get(path).Want(http.StatusOK)
	b.Post(path, url.Values{"password": {changedPassword}, "confirm": {changedPassword}}).WantRedirect("/staff/day")
	b.Get("/staff").Want(http.StatusOK)
	a.newClient(t).Get(path).Want(http.StatusGone)
	if s := a.signInWith(t, target.Email, changedPassword); s != http.StatusSeeOther {
		t.Errorf("the password chosen with the link does not sign in: %d", s)
	}
}

// Links are for admins, for others' accounts, and for enabled accounts.
func TestAccountSignInLinkRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	target := a.newAccount(t, c.ID, staff.RoleStaff)
	targetCl := a.signIn(t, target)
	before := a.auditCount(t, c.ID)

	for _, role := range []string{staff.RoleStaff, staff.RoleReception} {
		cl := a.signIn(t, a.newAccount(t, c.ID, role))
		r := cl.Post("/staff/users/link", url.Values{"id": {target.ID.String()}}).Want(http.StatusForbidden)
		if !strings.Contains(r.Body, "Only an admin") {
			t.Errorf("%s: the refusal says %s", role, clip(r.Body, 300))
		}
	}
	r := admin.Post("/staff/users/link", url.Values{"id": {c.Admin.ID.String()}}).Want(http.StatusBadRequest)
	if !strings.Contains(r.Text(`[role="alert"]`), "Your account") {
		t.Errorf("one's own account: %q", r.Text(`[role="alert"]`))
	}
	admin.Post("/staff/users/link", url.Values{"id": {"not-an-id"}}).Want(http.StatusBadRequest)
	if n := a.auditCount(t, c.ID); n != before {
		t.Fatalf("refused links wrote %d audit rows", n-before)
	}
	targetCl.Get("/staff").Want(http.StatusOK)
	admin.Get("/staff").Want(http.StatusOK)

	admin.Post("/staff/users/access", url.Values{"id": {target.ID.String()}, "action": {"disable"}}).Want(http.StatusOK)
	r = admin.Post("/staff/users/link", url.Values{"id": {target.ID.String()}}).Want(http.StatusConflict)
	if msg := r.Text(`[role="alert"]`); !strings.Contains(msg, "disabled") || !strings.Contains(msg, "enable") {
		t.Errorf("a disabled account: %q", msg)
	}
	if welcomeLink.MatchString(r.Body) {
		t.Error("a link was shown for a disabled account")
	}
}
