package web_test

// Tests of the sign-in limits: per account, per address (the peer's, not
// one the client writes), and per known device, which strangers cannot
// turn into a lock-out of the account's owner.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

// inOneMinute runs attempt until a run falls within one rate-limit window,
// at most three times, and returns the problems of the last run: the
// limits count in fixed one-minute windows, so a run that crosses into the
// next is repeated (with fresh accounts).
func inOneMinute(need time.Duration, attempt func() []string) []string {
	for try := 0; ; try++ {
		avoidWindowEdge(need)
		window := time.Now().Unix() / 60
		problems := attempt()
		if time.Now().Unix()/60 != window && try < 2 {
			continue
		}
		return problems
	}
}

// signInLimited checks a 429 answer to a sign-in: Retry-After and the
// message in place. It returns the problem, or "".
func signInLimited(r *response, what string) string {
	if r.Status != http.StatusTooManyRequests {
		return fmt.Sprintf("%s: status %d, want 429", what, r.Status)
	}
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 61 {
		return fmt.Sprintf("%s: Retry-After %q, want the seconds until the window ends", what, r.Header.Get("Retry-After"))
	}
	if msg := r.Text(`[data-testid="login-error"]`); !strings.Contains(msg, "Too many sign-in attempts") {
		return fmt.Sprintf("%s: message in place %q", what, msg)
	}
	return ""
}

// accounts makes n staff accounts (quick to check: their hashes are cheap).
func (a *app) accounts(t testing.TB, c clinic, n int) []account {
	out := make([]account, n)
	for i := range out {
		out[i] = a.newAccount(t, c.ID, "staff")
	}
	return out
}

// loginForm is the sign-in form with an e-mail and a password.
func loginForm(email, pw string) url.Values { return url.Values{"email": {email}, "password": {pw}} }

func TestStaffLoginRateLimits(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{LoginsPerMinute: 2})) // per account 2, per address 8
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})

	t.Run("PerAccount", func(t *testing.T) {
		t.Parallel()
		for _, p := range inOneMinute(10*time.Second, func() []string { return signInPerAccount(t, a, a.accounts(t, c, 2)) }) {
			t.Error(p)
		}
	})

	t.Run("PerAddress", func(t *testing.T) {
		t.Parallel()
		for _, p := range inOneMinute(10*time.Second, func() []string {
			cl := a.newClient(t)
			cl.Get("/staff/login").Want(http.StatusOK)
			var problems []string
			var last *response
			for i, ac := range a.accounts(t, c, 9) {
				last = cl.Post("/staff/login", loginForm(ac.Email, "wrong"))
				if i < 8 && last.Status != http.StatusUnauthorized {
					problems = append(problems, fmt.Sprintf("attempt %d from one address (each on another account): %d, want 401", i+1, last.Status))
				}
			}
			if p := signInLimited(last, "ninth attempt from one address"); p != "" {
				problems = append(problems, p)
			}
			return problems
		}) {
			t.Error(p)
		}
	})

	// A client that connects directly cannot choose the address it is
	// counted under by sending X-Forwarded-For: otherwise the per-address
	// limit is no limit for anyone guessing passwords across accounts.
	t.Run("PerAddressIgnoresAForwardedForHeaderTheClientMadeUp", func(t *testing.T) {
		t.Parallel()
		for _, p := range inOneMinute(10*time.Second, func() []string {
			cl := a.newClient(t)
			cl.Get("/staff/login").Want(http.StatusOK)
			limited := 0
			for i, ac := range a.accounts(t, c, 10) {
				cl.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", 10+i))
				if cl.Post("/staff/login", loginForm(ac.Email, "wrong")).Status == http.StatusTooManyRequests {
					limited++
				}
			}
			if limited == 0 {
				return []string{fmt.Sprintf("10 attempts from one connection (%s), each claiming another X-Forwarded-For, were all let through; the per-address limit is 8: "+
					"the limiter must key on the peer's address (echo's c.RealIP() trusts X-Forwarded-For unless an IPExtractor is set)", cl.IP)}
			}
			return nil
		}) {
			t.Error(p)
		}
	})
}

// signInPerAccount: past two wrong passwords the account waits, even with
// the right one and from another address, while another account from the
// same address does not.
func signInPerAccount(t *testing.T, a *app, acc []account) []string {
	var problems []string
	check := func(r *response, want int, what string) {
		if want == http.StatusTooManyRequests {
			if p := signInLimited(r, what); p != "" {
				problems = append(problems, p)
			}
		} else if r.Status != want {
			problems = append(problems, fmt.Sprintf("%s: status %d, want %d", what, r.Status, want))
		}
	}
	cl := a.newClient(t)
	cl.Get("/staff/login").Want(http.StatusOK)
	for i := range 2 {
		check(cl.Post("/staff/login", loginForm(acc[0].Email, "wrong "+strconv.Itoa(i))), http.StatusUnauthorized, fmt.Sprintf("attempt %d", i+1))
	}
	check(cl.Post("/staff/login", loginForm(acc[0].Email, "wrong again")), http.StatusTooManyRequests, "third attempt")
	// Even the right password waits, and from another address too.
	check(cl.Post("/staff/login", loginForm(acc[0].Email, password)), http.StatusTooManyRequests, "right password while limited")
	other := a.newClient(t)
	other.Get("/staff/login").Want(http.StatusOK)
	check(other.Post("/staff/login", loginForm(strings.ToUpper(acc[0].Email), password)), http.StatusTooManyRequests, "same account (upper case) from another address")
	check(cl.Get("/staff"), http.StatusSeeOther, "the calendar after the refused sign-ins")
	// Another account from the first address is not limited by this one.
	check(cl.Post("/staff/login", loginForm(acc[1].Email, password)), http.StatusSeeOther, "another account from the same address")
	return problems
}

func TestStaffSignInFromAKnownDeviceIsNotLockedOutByStrangers(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{LoginsPerMinute: 5})) // per account 5, per address 20, per known device 10
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	for _, p := range inOneMinute(15*time.Second, func() []string { return knownDeviceAgainstStrangers(t, a, c) }) {
		t.Error(p)
	}
}

// knownDeviceAgainstStrangers: a stranger's guesses spend the account's
// allowance for unknown devices, not its owner's known browser's.
func knownDeviceAgainstStrangers(t *testing.T, a *app, c clinic) []string {
	acc := a.newAccount(t, c.ID, "staff")
	var problems []string
	want := func(r *response, status int, what string) {
		if r.Status != status {
			problems = append(problems, fmt.Sprintf("%s: %d, want %d", what, r.Status, status))
		}
	}

	// The owner's browser signed in before (and signed out).
	owner := a.newClient(t)
	owner.Get("/staff/login").Want(http.StatusOK)
	in := owner.Post("/staff/login", loginForm(acc.Email, password)).WantRedirect("/staff/day")
	dev := in.Cookie("clinic_device")
	if dev == nil {
		t.Fatal("sign-in sets no device cookie")
	}
	if !dev.HttpOnly || dev.SameSite != http.SameSiteLaxMode || dev.MaxAge < 300*24*3600 || dev.Secure {
		t.Errorf("device cookie: HttpOnly=%v SameSite=%v MaxAge=%d Secure=%v; want HttpOnly, Lax, about a year, not Secure over HTTP",
			dev.HttpOnly, dev.SameSite, dev.MaxAge, dev.Secure)
	}
	owner.Get("/staff").Want(http.StatusOK)
	owner.Post("/staff/logout", nil).WantRedirect("/staff/login")

	// A stranger tries five wrong passwords: the account's allowance for
	// unknown devices (which the owner's first sign-in used one of) runs out.
	stranger := a.newClient(t)
	stranger.Get("/staff/login").Want(http.StatusOK)
	for i := range 5 {
		r := stranger.Post("/staff/login", loginForm(acc.Email, fmt.Sprintf("guess %d", i)))
		if i < 4 {
			want(r, http.StatusUnauthorized, fmt.Sprintf("stranger's guess %d", i+1))
		} else {
			want(r, http.StatusTooManyRequests, "stranger's fifth guess")
		}
	}

	// The owner's browser still signs in with the right password ...
	owner.Get("/staff/login").Want(http.StatusOK)
	want(owner.Post("/staff/login", loginForm(acc.Email, password)), http.StatusSeeOther, "the right password from the known device")
	want(owner.Get("/staff"), http.StatusOK, "the calendar after signing in from the known device")

	// ... while an unknown device, even with the right password, waits.
	fresh := a.newClient(t)
	fresh.Get("/staff/login").Want(http.StatusOK)
	want(fresh.Post("/staff/login", loginForm(acc.Email, password)), http.StatusTooManyRequests, "the right password from an unknown device")

	// A device cookie is for the account it signed in: it does not make
	// the owner's browser known for another account.
	other := a.newAccount(t, c.ID, "staff")
	for i := range 6 {
		stranger.Post("/staff/login", loginForm(other.Email, fmt.Sprintf("guess %d", i)))
	}
	owner.Get("/staff/login").Want(http.StatusOK)
	want(owner.Post("/staff/login", loginForm(other.Email, password)), http.StatusTooManyRequests, "another account from the owner's browser")
	return problems
}

// A known device has its own limit: a stolen device cookie cannot guess fast.
func TestStaffSignInKnownDeviceHasALimitOfItsOwn(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{LoginsPerMinute: 2})) // per known device 4
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	for _, p := range inOneMinute(10*time.Second, func() []string {
		acc := a.newAccount(t, c.ID, "staff")
		cl := a.newClient(t)
		cl.Get("/staff/login").Want(http.StatusOK)
		cl.Post("/staff/login", loginForm(acc.Email, password)).WantRedirect("/staff/day")
		var statuses []int
		for i := range 5 {
			statuses = append(statuses, cl.Post("/staff/login", loginForm(acc.Email, fmt.Sprintf("guess %d", i))).Status)
		}
		// The sign-in came from an unknown device: it counted for the account.
		if want := []int{401, 401, 401, 401, 429}; fmt.Sprint(statuses) != fmt.Sprint(want) {
			return []string{fmt.Sprintf("guesses from a known device: %v, want %v", statuses, want)}
		}
		return nil
	}) {
		t.Fatal(p)
	}
}
