package web_test

// Tests of staff sign-in and sign-out: the form, its session-free CSRF
// token, the session it renews and the cookie it sets.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

func TestStaffSignIn(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})

	t.Run("WrongEmailAndWrongPasswordReadTheSame", func(t *testing.T) {
		t.Parallel()
		cl := a.newClient(t)
		cl.Get("/staff/login").Want(http.StatusOK)
		wrongPw := cl.Post("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {"not the password"}})
		wrongMail := cl.Post("/staff/login", url.Values{"email": {"nobody-" + uuid.NewString()[:8] + "@example.org"}, "password": {password}})
		if wrongPw.Status != http.StatusUnauthorized || wrongMail.Status != wrongPw.Status {
			t.Fatalf("wrong password: %d, wrong e-mail: %d; want 401 for both", wrongPw.Status, wrongMail.Status)
		}
		pwSays, mailSays := wrongPw.Text(`[data-testid="login-error"]`), wrongMail.Text(`[data-testid="login-error"]`)
		if pwSays == "" || pwSays != mailSays {
			t.Fatalf("wrong password says %q, wrong e-mail says %q: they must read the same", pwSays, mailSays)
		}
		if v, _ := wrongPw.Doc().Find(`input#email`).Attr("value"); v != c.Admin.Email {
			t.Errorf("the form lost the e-mail typed: %q", v)
		}
		if strings.Contains(wrongPw.Body, "not the password") {
			t.Error("the page echoes the password")
		}
		cl.Get("/staff").WantRedirect("/staff/login")
	})

	t.Run("SessionIsRenewedAndCookieIsHttpOnlyLax", func(t *testing.T) {
		t.Parallel()
		wantSessionRenewedOnSignIn(t, a, c.Admin)
	})

	t.Run("SecureCookiesWhenConfigured", func(t *testing.T) {
		t.Parallel()
		secure := newApp(t, withOptions(program.Options{SecureCookies: true}))
		res, err := http.Get(secure.URL + "/staff/login")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if len(res.Cookies()) == 0 {
			t.Fatal("the sign-in form sets no cookie")
		}
		for _, ck := range res.Cookies() {
			if !ck.Secure {
				t.Fatalf("SecureCookies: the cookie %s is not Secure", ck.Name)
			}
		}
	})

	t.Run("SignOutDestroysTheSession", func(t *testing.T) {
		t.Parallel()
		cl := a.signIn(t, c.Admin)
		token := cl.Cookie()
		cl.Post("/staff/logout", nil).WantRedirect("/staff/login")
		cl.Get("/staff").WantRedirect("/staff/login")
		// Replaying the old cookie from another browser opens nothing.
		a.clientWithSession(t, token).Get("/staff").WantRedirect("/staff/login")
		var n int
		if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions WHERE token = $1`, token).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatal("the session is still in the store after sign-out")
		}
	})

	t.Run("SignInWithoutCSRFTokenIsRefused", func(t *testing.T) {
		t.Parallel()
		cl := a.newClient(t)
		cl.Get("/staff/login").Want(http.StatusOK)
		cl.PostRaw("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {password}}, nil).Want(http.StatusForbidden)
		cl.Get("/staff").WantRedirect("/staff/login")
		// Nor from a browser that never opened the form.
		a.newClient(t).PostRaw("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {password}, "_csrf": {"forged"}}, nil).Want(http.StatusForbidden)
	})
}

// wantSessionRenewedOnSignIn signs acc in from a browser that has a
// session already: the session token must change, and its cookie be
// HttpOnly and Lax.
func wantSessionRenewedOnSignIn(t *testing.T, a *app, acc account) {
	// A browser with a session from before (a patient's, say: the
	// sign-in form makes none).
	sm := a.Deps.Sessions
	ctx, err := sm.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	sm.Put(ctx, "clientId", "b_before")
	token, _, err := sm.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := &http.Cookie{Name: "clinic_session", Value: token, Path: "/"}
	cl := a.clientWithSession(t, token)
	cl.Get("/staff/login").Want(http.StatusOK)
	if cl.CSRF == "" {
		t.Fatal("the sign-in page has no CSRF token")
	}
	res := cl.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {password}}).WantRedirect("/staff/day")
	after := res.Cookie("clinic_session")
	if after == nil {
		t.Fatal("sign-in sets no session cookie")
	}
	if after.Value == before.Value {
		t.Fatal("the session token is the same before and after sign-in: it must be renewed (session fixation)")
	}
	if !after.HttpOnly || after.SameSite != http.SameSiteLaxMode || after.Path != "/" {
		t.Errorf("cookie flags: HttpOnly=%v SameSite=%v Path=%q; want HttpOnly, Lax, /", after.HttpOnly, after.SameSite, after.Path)
	}
	if after.Secure {
		t.Error("Secure cookie over plain HTTP without SecureCookies")
	}
	cl.Get("/staff").Want(http.StatusOK)
	// The token seen before sign-in opens nothing; the new one does.
	a.clientWithSession(t, before.Value).Get("/staff").WantRedirect("/staff/login")
	a.clientWithSession(t, after.Value).Get("/staff").Want(http.StatusOK)
}

func TestStaffSignInCSRFNeedsNoSession(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	signInForm := func(tok string) url.Values {
		return url.Values{"email": {c.Admin.Email}, "password": {password}, "_csrf": {tok}}
	}

	t.Run("TheFormSetsNoSessionAndSignsIn", func(t *testing.T) {
		t.Parallel()
		cl := a.newClient(t)
		page := cl.Get("/staff/login").Want(http.StatusOK)
		if ck := page.Cookie("clinic_session"); ck != nil {
			t.Errorf("the sign-in form sets a session cookie %q: an anonymous visit must store nothing", ck.Value)
		}
		if cl.CSRF == "" {
			t.Fatal("the sign-in form has no CSRF token")
		}
		ck := page.Cookie("clinic_login")
		if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
			t.Fatalf("the form's CSRF cookie: %+v; want HttpOnly, Lax", ck)
		}
		if strings.Contains(cl.CSRF, ck.Value) {
			t.Error("the form field repeats the cookie: it must be its signature")
		}
		cl.PostRaw("/staff/login", signInForm(cl.CSRF), nil).WantRedirect("/staff/day")
		cl.Get("/staff").Want(http.StatusOK)
	})

	t.Run("WithoutAWrongOrAnothersTokenIsRefused", func(t *testing.T) {
		t.Parallel()
		first, second := a.newClient(t), a.newClient(t)
		first.Get("/staff/login").Want(http.StatusOK)
		second.Get("/staff/login").Want(http.StatusOK)
		if first.CSRF == second.CSRF {
			t.Fatal("two browsers got the same sign-in token")
		}
		for what, r := range map[string]*response{
			"no token":              first.PostRaw("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {password}}, nil),
			"a wrong token":         first.PostRaw("/staff/login", signInForm("00"+first.CSRF[2:]), nil),
			"another browser's":     first.PostRaw("/staff/login", signInForm(second.CSRF), nil),
			"a token but no cookie": a.newClient(t).PostRaw("/staff/login", signInForm(first.CSRF), nil),
		} {
			if r.Status != http.StatusForbidden {
				t.Errorf("sign-in with %s: %d, want 403", what, r.Status)
			}
		}
		first.Get("/staff").WantRedirect("/staff/login")
	})

	t.Run("SecureCookiesWhenConfigured", func(t *testing.T) {
		t.Parallel()
		secure := newApp(t, withOptions(program.Options{SecureCookies: true}))
		cl := secure.newClient(t)
		if ck := cl.Get("/staff/login").Cookie("clinic_login"); ck == nil || !ck.Secure {
			t.Fatalf("SecureCookies: the sign-in form's cookie %+v is not Secure", ck)
		}
	})
}
