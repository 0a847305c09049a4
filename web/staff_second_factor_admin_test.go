package web_test

// Tests of what admins do with second factors (require one of everyone,
// reset a colleague's) and of the account's list of sessions.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/testkit"
)

func TestSecondFactorRequiredForEveryone(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	// A colleague signed in before the clinic required it.
	before := a.signIn(t, c.Staff)
	stream := openStaffLive(t, a, before, "?view=day")

	res := admin.Post("/staff/users/second-factor/require", url.Values{"required": {"on"}}).Want(http.StatusOK)
	if !strings.Contains(res.Text(`[data-testid="second-factor-required-state"]`), "must have") {
		t.Fatalf("the users page says %q", res.Text(`[data-testid="second-factor-required-state"]`))
	}
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log WHERE clinic_id = $1 AND action = 'clinic.require_second_factor' AND actor = $2`,
		c.ID, c.Admin.Actor()).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d audit rows of the requirement (%v), want 1", n, err)
	}

	// Its calendar stream, open from before, shows nothing more.
	wantStreamEnd(t, stream, "access-ended")

	t.Run("SessionOpenBeforeIsTakenToTheSetUp", func(t *testing.T) {
		before.Get("/staff").WantRedirect("/staff/account/second-factor")
		before.Get("/staff/users").WantRedirect("/staff/account/second-factor")
		before.Get("/staff/account").WantRedirect("/staff/account/second-factor")
		page := before.Get("/staff/account/second-factor").Want(http.StatusOK)
		if page.Text(`[data-testid="second-factor-required"]`) == "" {
			t.Error("the set-up does not say the clinic requires it")
		}
		before.Post("/staff/bookings", url.Values{}).WantRedirect("/staff/account/second-factor")
		before.HXPost("/staff/desk/release", url.Values{"_csrf": {before.CSRF}}).Want(http.StatusForbidden)
		before.send(http.MethodGet, "/v1/staff/specialists/"+c.Specialists[0].ID.String(), nil).Want(http.StatusForbidden)
	})

	t.Run("NextSignInGoesToTheSetUpUntilDone", func(t *testing.T) {
		acc := a.newAccount(t, c.ID, "reception")
		cl := a.newClient(t)
		cl.Get("/staff/login").Want(http.StatusOK)
		cl.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {password}}).WantRedirect("/staff/account/second-factor")
		cl.Get("/staff/day").WantRedirect("/staff/account/second-factor")
		setUpSecondFactor(t, cl)
		cl.Get("/staff").Want(http.StatusOK)
		cl.Get("/staff/account").Want(http.StatusOK)
	})

	t.Run("TheAdminToo", func(t *testing.T) {
		admin.Get("/staff/users").WantRedirect("/staff/account/second-factor")
		setUpSecondFactor(t, admin)
		admin.Get("/staff/users").Want(http.StatusOK)
	})
}

func TestSecondFactorAdminReset(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	acc, f := a.withFactor(t, c, "staff")
	colleague := a.passwordStep(t, acc)
	colleague.Post("/staff/login/code", url.Values{"code": {f.nextCode(t)}}).WantRedirect("/staff/day")
	colleague.Get("/staff").Want(http.StatusOK)
	// A second browser of the colleague's, signed in before the list of
	// sessions existed (no row of it there).
	old := a.clientWithSession(t, staffSession(t, a, acc))

	t.Run("StaffAndReceptionMayNot", func(t *testing.T) {
		for _, role := range []string{"staff", "reception"} {
			cl := a.signIn(t, a.newAccount(t, c.ID, role))
			cl.Post("/staff/users/second-factor/reset", url.Values{"id": {acc.ID.String()}}).Want(http.StatusForbidden)
			cl.Post("/staff/users/second-factor/require", url.Values{"required": {"on"}}).Want(http.StatusForbidden)
		}
		colleague.Get("/staff").Want(http.StatusOK)
	})

	admin := a.signIn(t, c.Admin)
	if got := factorColumn(t, admin, acc.Email); got != "on" {
		t.Errorf("the accounts page says the second factor is %q, want on", got)
	}
	admin.Post("/staff/users/second-factor/reset", url.Values{"id": {acc.ID.String()}}).Want(http.StatusOK)
	if got := factorColumn(t, admin, acc.Email); got != "off" {
		t.Errorf("after the reset the accounts page says %q, want off", got)
	}
	colleague.Get("/staff").WantRedirect("/staff/login")
	old.Get("/staff").WantRedirect("/staff/login")
	var after string
	if err := a.Pool.QueryRow(context.Background(), `SELECT coalesce(after::text, '') FROM audit_log WHERE clinic_id = $1 AND action = 'staff.reset_second_factor' AND entity_id = $2 AND actor = $3`,
		c.ID, acc.ID.String(), c.Admin.Actor()).Scan(&after); err != nil {
		t.Fatalf("no audit row of the reset: %v", err)
	}
	if strings.Contains(after, f.Secret) || strings.Contains(after, "secret") {
		t.Errorf("the audit row holds a secret: %s", after)
	}
	// The password alone signs in now; the old codes are gone.
	a.signIn(t, acc)
	admin.Post("/staff/users/second-factor/reset", url.Values{"id": {c.Admin.ID.String()}}).Want(http.StatusBadRequest)
	admin.Post("/staff/users/second-factor/reset", url.Values{"id": {"nope"}}).Want(http.StatusBadRequest)
	admin.Post("/staff/users/second-factor/require", url.Values{"required": {"maybe"}}).Want(http.StatusBadRequest)
}

func TestStaffSessionsList(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	acc := a.newAccount(t, c.ID, "reception")
	here := a.newClient(t)
	here.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0")
	here.Get("/staff/login").Want(http.StatusOK)
	here.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {password}}).WantRedirect("/staff/day")
	here.Get("/staff").Want(http.StatusOK)
	there := a.signIn(t, acc)
	third := a.signIn(t, acc)

	page := here.Get("/staff/account").Want(http.StatusOK)
	rows := page.Doc().Find(`[data-testid="session"]`)
	if rows.Length() != 3 {
		t.Fatalf("%d sessions listed, want 3", rows.Length())
	}
	if page.Doc().Find(`[data-testid="session-current"]`).Length() != 1 {
		t.Fatal("the list does not mark this browser")
	}
	if !strings.Contains(text(rows), there.IP) {
		t.Errorf("the list does not show the other browser's address %s: %s", there.IP, text(rows))
	}
	// End one of the others (the forms of the other sessions).
	form := page.Doc().Find(`[data-testid="session-end"] input[name="id"]`)
	if form.Length() != 2 {
		t.Fatalf("%d end buttons, want 2 (not for this browser)", form.Length())
	}
	id, _ := form.First().Attr("value")
	here.Post("/staff/account/sessions/end", url.Values{"id": {id}}).Want(http.StatusOK)
	ended, alive := 0, 0
	for _, cl := range []*client{there, third} {
		if res := cl.Get("/staff"); res.Status == http.StatusOK {
			alive++
		} else {
			res.WantRedirect("/staff/login")
			ended++
		}
	}
	if ended != 1 || alive != 1 {
		t.Fatalf("after ending one session: %d ended, %d alive", ended, alive)
	}
	here.Post("/staff/account/sessions/end", url.Values{"id": {id}}).Want(http.StatusNotFound)
	// Someone else's session is not one's to end.
	other := a.signIn(t, a.newAccount(t, c.ID, "staff"))
	otherID := sessionIDs(t, other)[0]
	here.Post("/staff/account/sessions/end", url.Values{"id": {otherID}}).Want(http.StatusNotFound)
	other.Get("/staff").Want(http.StatusOK)

	here.Post("/staff/account/sessions/end-others", nil).Want(http.StatusOK)
	there.Get("/staff").WantRedirect("/staff/login")
	third.Get("/staff").WantRedirect("/staff/login")
	here.Get("/staff").Want(http.StatusOK)
	if ids := sessionIDs(t, here); len(ids) != 1 {
		t.Fatalf("%d sessions left, want this one", len(ids))
	}
	if got := here.Get("/staff/account").Text(`[data-testid="session"]`); !strings.Contains(got, "Firefox on Linux") {
		t.Errorf("the browser reads %q", got)
	}
}

// sessionIDs are the ids of the sessions Your account lists for cl.
func sessionIDs(t testing.TB, cl *client) []string {
	t.Helper()
	var ids []string
	for _, n := range cl.Get("/staff/account").Want(http.StatusOK).Doc().Find(`[data-testid="session"]`).Nodes {
		for _, at := range n.Attr {
			if at.Key == "data-session" {
				ids = append(ids, at.Val)
			}
		}
	}
	return ids
}

// factorColumn is what the accounts page says of email's second factor.
func factorColumn(t testing.TB, admin *client, email string) string {
	t.Helper()
	got := ""
	admin.Get("/staff/users").Want(http.StatusOK).Doc().Find(`[data-testid="table"] tbody tr`).Each(func(_ int, row *goquery.Selection) {
		if strings.TrimSpace(row.Find("td").First().Text()) == email {
			got = strings.TrimSpace(row.Find(`td[data-testid="factor"]`).Text())
		}
	})
	return got
}
