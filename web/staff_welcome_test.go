package web_test

// Tests of the one-time sign-in link a new clinic's admin (or a reset
// account) chooses a password with, and of the home page of a server
// without clinics.

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

const chosenPassword = "seven silver lanterns"

// linkedAdmin is a clinic made as `clinic clinic create` makes it: its
// admin has no password, only the sign-in link.
func (a *app) linkedAdmin(t testing.TB) (clinics.Clinic, staff.Account, string) {
	t.Helper()
	slug := "wel-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	var acc staff.Account
	var l staff.Link
	c, err := a.Deps.Clinics.Create(context.Background(), clinics.Input{Slug: slug, Name: "Welcome " + slug, Timezone: "Europe/Berlin"},
		staff.ActorCLI, func(q *db.Queries, c clinics.Clinic) error {
			var err error
			acc, l, err = staff.CreateFirstAdmin(context.Background(), q, c.ID, "owner-"+slug+"@example.org", time.Now())
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	return c, acc, "/staff/welcome/" + l.Token
}

func TestWelcomeLinkSetsThePasswordAndSignsIn(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	_, acc, path := a.linkedAdmin(t)
	cl := a.newClient(t)
	page := cl.Get(path).Want(http.StatusOK)
	if got := page.Text(`[data-testid="account-email"]`); got != acc.Email {
		t.Fatalf("the page shows %q, want the account's e-mail %s", got, acc.Email)
	}
	f := page.Form(`[data-testid="choose-password"] form`)
	if f.Action != path || f.Values.Get("_csrf") == "" || !f.Values.Has("password") || !f.Values.Has("confirm") {
		t.Fatalf("form %+v", f)
	}
	if page.Header.Get("Cache-Control") != "no-store" {
		t.Error("the page with the link's token may be cached")
	}

	r := cl.Post(path, url.Values{"password": {chosenPassword}, "confirm": {chosenPassword + "!"}}).Want(http.StatusBadRequest)
	if r.Text(`[data-testid="confirm-error"]`) == "" || strings.Contains(r.Body, chosenPassword) {
		t.Fatalf("a mismatch does not name the field confirm (or echoes the password):\n%s", clip(r.Body, 2000))
	}
	r = cl.Post(path, url.Values{"password": {"too short"}, "confirm": {"too short"}}).Want(http.StatusBadRequest)
	if !strings.Contains(r.Text(`[data-testid="password-error"]`), "12") {
		t.Fatalf("a short password: %q", r.Text(`[data-testid="password-error"]`))
	}
	r = cl.Post(path, url.Values{"password": {acc.Email}, "confirm": {acc.Email}}).Want(http.StatusBadRequest)
	if !strings.Contains(r.Text(`[data-testid="password-error"]`), "e-mail") {
		t.Fatalf("the e-mail as password: %q", r.Text(`[data-testid="password-error"]`))
	}
	// Another site cannot post the form.
	a.newClient(t).PostRaw(path, url.Values{"password": {chosenPassword}, "confirm": {chosenPassword}, "_csrf": {f.Values.Get("_csrf")}}, nil).Want(http.StatusForbidden)

	cl.Post(path, url.Values{"password": {chosenPassword}, "confirm": {chosenPassword}}).WantRedirect("/staff/day")
	cl.Get("/staff").Want(http.StatusOK)

	// Used: a clear page, never a second use.
	other := a.newClient(t)
	gone := other.Get(path).Want(http.StatusGone)
	if !strings.Contains(gone.Text(`[data-testid="link-error"]`), "used") {
		t.Fatalf("a used link says %q", gone.Text(`[data-testid="link-error"]`))
	}
	again := url.Values{"password": {"an other new password"}, "confirm": {"an other new password"}, "_csrf": {f.Values.Get("_csrf")}}
	cl.Post(path, again).Want(http.StatusGone)

	// The chosen password signs in on the sign-in form.
	login := a.newClient(t)
	login.Get("/staff/login").Want(http.StatusOK)
	login.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {chosenPassword}}).WantRedirect("/staff/day")
}

func TestWelcomeLinkTamperedOrExpired(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	_, _, path := a.linkedAdmin(t)
	cl := a.newClient(t)
	tampered := path[:len(path)-3] + "AAA"
	if tampered == path {
		tampered = path[:len(path)-3] + "BBB"
	}
	for _, p := range []string{tampered, "/staff/welcome/short", path + "x"} {
		r := cl.Get(p).Want(http.StatusNotFound)
		if r.Text(`[data-testid="link-error"]`) == "" {
			t.Errorf("%s: no explanation", p)
		}
	}
	cl.Get(path).Want(http.StatusOK)
	token := strings.TrimPrefix(path, "/staff/welcome/")
	h := sha256.Sum256([]byte(token))
	if _, err := a.Pool.Exec(context.Background(), `UPDATE staff_signin_links SET expires_at = now() - interval '1 minute' WHERE token_hash = $1`, h[:]); err != nil {
		t.Fatal(err)
	}
	r := cl.Get(path).Want(http.StatusGone)
	if !strings.Contains(r.Text(`[data-testid="link-error"]`), "expired") {
		t.Fatalf("an expired link says %q", r.Text(`[data-testid="link-error"]`))
	}
	cl.Post(path, url.Values{"password": {chosenPassword}, "confirm": {chosenPassword}}).Want(http.StatusGone)
}

// A reset account's sessions elsewhere end when its link sets a new
// password; other accounts' sessions stay.
func TestWelcomeLinkEndsTheAccountsOtherSessions(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	before := a.signIn(t, c.Admin)
	colleague := a.signIn(t, c.Staff)
	_, l, err := a.Deps.Staff.ResetLink(context.Background(), c.Admin.Email, c.Slug, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	path := "/staff/welcome/" + l.Token
	cl := a.newClient(t)
	cl.Get(path).Want(http.StatusOK)
	cl.Post(path, url.Values{"password": {chosenPassword}, "confirm": {chosenPassword}}).WantRedirect("/staff/day")
	cl.Get("/staff").Want(http.StatusOK)
	before.Get("/staff").WantRedirect("/staff/login")
	colleague.Get("/staff").Want(http.StatusOK)
}

// Two browsers post one link at the same moment: one is signed in, the
// other is told the link was used.
func TestWelcomeLinkUsedConcurrentlyOnce(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	_, _, path := a.linkedAdmin(t)
	browsers := []*client{a.newClient(t), a.newClient(t)}
	for _, b := range browsers {
		b.Get(path).Want(http.StatusOK)
	}
	var signedIn, gone atomic.Int32
	testkit.Together(len(browsers), func(i int) {
		r := browsers[i].Post(path, url.Values{"password": {chosenPassword}, "confirm": {chosenPassword}})
		switch {
		case r.Status == http.StatusSeeOther && r.Header.Get("Location") == "/staff/day":
			signedIn.Add(1)
		case r.Status == http.StatusGone:
			gone.Add(1)
		default:
			t.Errorf("browser %d: %d %s", i, r.Status, clip(r.Body, 500))
		}
	})
	if signedIn.Load() != 1 || gone.Load() != 1 {
		t.Fatalf("%d signed in, %d told the link was used; want 1 and 1", signedIn.Load(), gone.Load())
	}
}

// The form's posts count against the address's sign-in allowance.
func TestWelcomeLinkPostsAreRateLimited(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{LoginsPerMinute: 1})) // per address: 4
	_, _, path := a.linkedAdmin(t)
	avoidWindowEdge(20 * time.Second)
	cl := a.newClient(t)
	cl.Get(path).Want(http.StatusOK)
	for range 4 {
		cl.Post(path, url.Values{"password": {chosenPassword}, "confirm": {"not the same one"}}).Want(http.StatusBadRequest)
	}
	r := cl.Post(path, url.Values{"password": {chosenPassword}, "confirm": {chosenPassword}}).Want(http.StatusTooManyRequests)
	retryAfter(t, r)
	// The link was not used up by the refused attempt.
	a.newClient(t).Get(path).Want(http.StatusOK)
}

func TestHomeWithoutClinicSaysHowToCreateOne(t *testing.T) {
	t.Parallel()
	a := newApp(t, withPool(freshPool(t)))
	r := a.newClient(t).Get("/").Want(http.StatusOK)
	cmd := r.Text(`[data-testid="create-command"]`)
	for _, want := range []string{"bin/clinic clinic create", "--slug", "--name", "--timezone", "--admin-email"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("the command %q lacks %s", cmd, want)
		}
	}
}
