package web_test

// Tests of the staff's second factor: set-up on Your account, the code
// step of signing in (a real code, a wrong one, a replayed one, recovery
// codes), the sign-in link's code step, and the limits the codes count
// against.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/pquerna/otp/totp"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

// factor is an account's second factor as its set-up showed it.
type factor struct {
	Secret   string
	Recovery []string
}

// code is the factor's code at t.
func (f factor) code(t testing.TB, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCode(f.Secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nextCode is the code of the next time step: the set-up used the
// current one, and a code is taken once.
func (f factor) nextCode(t testing.TB) string { return f.code(t, time.Now().Add(30*time.Second)) }

// setUpSecondFactor turns acc's second factor on through Your account
// from the signed-in browser cl: the key the page shows, a first code
// made from it with the library, and the recovery codes shown once.
func setUpSecondFactor(t testing.TB, cl *client) factor {
	t.Helper()
	page := cl.Get("/staff/account/second-factor").Want(http.StatusOK)
	secret := page.Text(`[data-testid="totp-secret"]`)
	if secret == "" {
		t.Fatal("the set-up page shows no key")
	}
	if src, _ := page.Doc().Find(`[data-testid="second-factor-qr"]`).Attr("src"); !strings.HasPrefix(src, "data:image/svg+xml;base64,") {
		t.Fatalf("the set-up page shows no QR code: %q", clip(src, 60))
	}
	// Reloading keeps the key until it is confirmed.
	if again := cl.Get("/staff/account/second-factor").Text(`[data-testid="totp-secret"]`); again != secret {
		t.Fatalf("the key changed on reload: %q, then %q", secret, again)
	}
	f := factor{Secret: secret}
	cl.Post("/staff/account/second-factor", url.Values{"code": {"000000"}}).Want(http.StatusBadRequest)
	done := cl.Post("/staff/account/second-factor", url.Values{"code": {f.code(t, time.Now())}}).Want(http.StatusOK)
	done.Doc().Find(`[data-testid="recovery-code"]`).Each(func(_ int, s *goquery.Selection) {
		f.Recovery = append(f.Recovery, strings.TrimSpace(s.Text()))
	})
	if len(f.Recovery) != 10 {
		t.Fatalf("%d recovery codes shown, want 10", len(f.Recovery))
	}
	return f
}

// passwordStep signs acc's password in from a new browser, which then
// waits for the code.
func (a *app) passwordStep(t testing.TB, acc account) *client {
	t.Helper()
	cl := a.newClient(t)
	cl.Get("/staff/login").Want(http.StatusOK)
	cl.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {password}}).WantRedirect("/staff/login/code")
	cl.Get("/staff/login/code").Want(http.StatusOK)
	return cl
}

// withFactor is a new account of role with its second factor on.
func (a *app) withFactor(t testing.TB, c clinic, role string) (account, factor) {
	t.Helper()
	acc := a.newAccount(t, c.ID, role)
	return acc, setUpSecondFactor(t, a.signIn(t, acc))
}

func TestSecondFactorSignIn(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})

	t.Run("RealCodeSignsIn", func(t *testing.T) {
		t.Parallel()
		acc, f := a.withFactor(t, c, "staff")
		cl := a.passwordStep(t, acc)
		before := cl.Cookie()
		cl.Post("/staff/login/code", url.Values{"code": {f.nextCode(t)}}).WantRedirect("/staff/day")
		if cl.Cookie() == before {
			t.Error("the session token is the same before and after the code: it must be renewed")
		}
		cl.Get("/staff").Want(http.StatusOK)
	})

	t.Run("PasswordAloneGrantsNothing", func(t *testing.T) {
		t.Parallel()
		acc, _ := a.withFactor(t, c, "admin")
		cl := a.passwordStep(t, acc)
		cl.Get("/staff").WantRedirect("/staff/login")
		cl.Get("/staff/account").WantRedirect("/staff/login")
		cl.send(http.MethodGet, "/v1/staff/specialists/"+c.Specialists[0].ID.String(), nil).Want(http.StatusUnauthorized)
	})

	t.Run("CodeStepRunsOut", func(t *testing.T) {
		t.Parallel()
		acc, f := a.withFactor(t, c, "staff")
		cl := a.passwordStep(t, acc)
		// Five minutes pass: the session's deadline for the code, moved back.
		sm := a.Deps.Sessions
		ctx, err := sm.Load(context.Background(), cl.Cookie())
		if err != nil {
			t.Fatal(err)
		}
		sm.Put(ctx, "codeUntil", time.Now().Add(-time.Second).Unix())
		if _, _, err := sm.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		cl.Post("/staff/login/code", url.Values{"code": {f.nextCode(t)}}).WantRedirect("/staff/login")
		cl.Get("/staff").WantRedirect("/staff/login")
	})

	t.Run("WrongCodeReadsLikeAWrongPassword", func(t *testing.T) {
		t.Parallel()
		acc, f := a.withFactor(t, c, "staff")
		cl := a.passwordStep(t, acc)
		wrong := "123456"
		if wrong == f.nextCode(t) || wrong == f.code(t, time.Now()) {
			wrong = "654321"
		}
		for _, typed := range []string{wrong, "abcd-efgh-ijkl-mnop", "", "12345"} {
			res := cl.Post("/staff/login/code", url.Values{"code": {typed}}).Want(http.StatusUnauthorized)
			if got := res.Text(`[data-testid="login-error"]`); got != "The code is not right." {
				t.Errorf("code %q: says %q", typed, got)
			}
		}
		cl.Get("/staff").WantRedirect("/staff/login")
		// The right code still works after wrong ones.
		cl.Post("/staff/login/code", url.Values{"code": {f.nextCode(t)}}).WantRedirect("/staff/day")
	})

	t.Run("ReplayedCodeIsRefused", func(t *testing.T) {
		t.Parallel()
		acc, f := a.withFactor(t, c, "staff")
		code := f.nextCode(t)
		a.passwordStep(t, acc).Post("/staff/login/code", url.Values{"code": {code}}).WantRedirect("/staff/day")
		other := a.passwordStep(t, acc)
		other.Post("/staff/login/code", url.Values{"code": {code}}).Want(http.StatusUnauthorized)
		other.Get("/staff").WantRedirect("/staff/login")
		// Nor is the set-up's own code (an older step) taken again.
		other.Post("/staff/login/code", url.Values{"code": {f.code(t, time.Now())}}).Want(http.StatusUnauthorized)
	})

}

func TestSecondFactorRecoveryAndLinks(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})

	t.Run("RecoveryCodeUsedTwiceAtOnceWinsOnce", func(t *testing.T) {
		t.Parallel()
		acc, f := a.withFactor(t, c, "reception")
		browsers := []*client{a.passwordStep(t, acc), a.passwordStep(t, acc), a.passwordStep(t, acc), a.passwordStep(t, acc)}
		// Typed as people type it: upper case, no dashes.
		typed := strings.ToUpper(strings.ReplaceAll(f.Recovery[3], "-", ""))
		statuses := make([]int, len(browsers))
		testkit.Together(len(browsers), func(i int) {
			statuses[i] = browsers[i].Post("/staff/login/code", url.Values{"code": {typed}}).Status
		})
		won := 0
		for i, st := range statuses {
			switch st {
			case http.StatusSeeOther:
				won++
				browsers[i].Get("/staff").Want(http.StatusOK)
			case http.StatusUnauthorized:
				browsers[i].Get("/staff").WantRedirect("/staff/login")
			default:
				t.Errorf("browser %d: %d", i, st)
			}
		}
		if won != 1 {
			t.Fatalf("%d sign-ins with one recovery code, want exactly 1 (statuses %v)", won, statuses)
		}
		// Used is gone; the others still work, once each.
		a.passwordStep(t, acc).Post("/staff/login/code", url.Values{"code": {f.Recovery[3]}}).Want(http.StatusUnauthorized)
		a.passwordStep(t, acc).Post("/staff/login/code", url.Values{"code": {f.Recovery[4]}}).WantRedirect("/staff/day")
		var left int
		if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM staff_recovery_codes WHERE staff_user_id = $1`, acc.ID).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 8 {
			t.Errorf("%d recovery codes left, want 8", left)
		}
	})

	t.Run("SignInLinkStillAsksForTheCode", func(t *testing.T) {
		t.Parallel()
		acc, f := a.withFactor(t, c, "staff")
		_, link, err := a.Deps.Staff.MakeSignInLink(context.Background(), c.Admin.User(c.ID), acc.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		cl := a.newClient(t)
		cl.Get("/staff/welcome/" + link.Token).Want(http.StatusOK)
		newPassword := "a new and long enough passphrase 7"
		cl.Post("/staff/welcome/"+link.Token, url.Values{"password": {newPassword}, "confirm": {newPassword}}).WantRedirect("/staff/login/code")
		cl.Get("/staff").WantRedirect("/staff/login")
		cl.Get("/staff/login/code").Want(http.StatusOK)
		cl.Post("/staff/login/code", url.Values{"code": {f.nextCode(t)}}).WantRedirect("/staff/day")
		cl.Get("/staff").Want(http.StatusOK)
	})

	t.Run("AccountsWithoutOneSignInAsBefore", func(t *testing.T) {
		t.Parallel()
		acc := a.newAccount(t, c.ID, "staff")
		a.signIn(t, acc).Get("/staff/account").Want(http.StatusOK)
		cl := a.newClient(t)
		cl.Get("/staff/login/code").WantRedirect("/staff/login")
	})

	t.Run("TheSecretIsSealedAtRest", func(t *testing.T) {
		t.Parallel()
		acc, f := a.withFactor(t, c, "staff")
		var sealed []byte
		if err := a.Pool.QueryRow(context.Background(), `SELECT secret_sealed FROM staff_second_factors WHERE staff_user_id = $1`, acc.ID).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(sealed), f.Secret) || len(sealed) < len(f.Secret) {
			t.Fatal("the stored secret is the secret")
		}
		var n int
		if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log WHERE entity_id = $1 AND (before::text LIKE '%' || $2 || '%' OR after::text LIKE '%' || $2 || '%')`,
			acc.ID.String(), f.Secret).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatal("an audit row holds the secret")
		}
	})
}

func TestSecondFactorCodesCountAgainstSignInLimits(t *testing.T) {
	t.Parallel()
	// Two attempts a minute per account from an unknown browser, eight per
	// address.
	a := newApp(t, withOptions(program.Options{LoginsPerMinute: 2}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	acc := a.newAccount(t, c.ID, "staff")
	// Set up from a session made behind the form's back: the sign-in would
	// spend the allowance under test.
	cl := a.clientWithSession(t, staffSession(t, a, acc))
	cl.Get("/staff").Want(http.StatusOK)
	f := setUpSecondFactor(t, cl)
	avoidWindowEdge(10 * time.Second)
	step := a.passwordStep(t, acc) // the password: one attempt
	step.Post("/staff/login/code", url.Values{"code": {"000000"}}).Want(http.StatusUnauthorized)
	res := step.Post("/staff/login/code", url.Values{"code": {f.nextCode(t)}}).Want(http.StatusTooManyRequests)
	if retryAfter(t, res) < 1 {
		t.Error("no Retry-After")
	}
	step.Get("/staff").WantRedirect("/staff/login")
}

// staffSession is a session token signed in as acc, stored directly.
func staffSession(t testing.TB, a *app, acc account) string {
	t.Helper()
	sm := a.Deps.Sessions
	ctx, err := sm.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	sm.Put(ctx, "staffId", acc.ID.String())
	token, _, err := sm.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// Past the per-minute limits, codes from browsers not known to the
// account are counted by the hour too: someone who has the password
// cannot try codes all day at the per-minute rate.
func TestSecondFactorCodesPerAccountPerHour(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{CodeTriesPerHour: 3}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	acc := a.newAccount(t, c.ID, "staff")
	cl := a.clientWithSession(t, staffSession(t, a, acc))
	cl.Get("/staff").Want(http.StatusOK)
	f := setUpSecondFactor(t, cl)
	for range 3 {
		step := a.passwordStep(t, acc)
		step.Post("/staff/login/code", url.Values{"code": {"000000"}}).Want(http.StatusUnauthorized)
	}
	step := a.passwordStep(t, acc)
	res := step.Post("/staff/login/code", url.Values{"code": {f.nextCode(t)}}).Want(http.StatusTooManyRequests)
	if retryAfter(t, res) < 60 {
		t.Errorf("Retry-After %d s, want the rest of the hour", retryAfter(t, res))
	}
	step.Get("/staff").WantRedirect("/staff/login")
}
