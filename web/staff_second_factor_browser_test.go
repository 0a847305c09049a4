package web_test

// The second factor in headless Chromium (see browser_test.go): a staff
// member sets it up from Your account (the QR code drawn, the key read
// from the page, a first code made from it with the library), sees the
// recovery codes, signs out, and signs in again with password and code.

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/testkit"
)

func TestSecondFactorBrowserSetUpAndSignIn(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	acc := a.newAccount(t, c.ID, "staff")
	b := startBrowser(t, "staff", 1280, 1000)
	defer b.Report()
	const wait = 15 * time.Second
	signIn := func(what string) {
		b.Do(wait, what,
			chromedp.Navigate(a.URL+"/staff/login"),
			chromedp.WaitVisible(chromedp.CSS(`#email`)),
			chromedp.SendKeys(chromedp.CSS(`#email`), acc.Email),
			chromedp.SendKeys(chromedp.CSS(`#password`), password),
			chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		)
	}
	signIn("sign in with the password")
	b.Do(wait, "open the set-up from Your account",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="daygrid"]`)),
		chromedp.Navigate(a.URL+"/staff/account"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sessions"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="second-factor-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="totp-secret"]`)),
	)
	if !b.Until(wait, `document.querySelector('[data-testid="second-factor-qr"]').naturalWidth > 0`) {
		t.Fatal("the QR code is not drawn")
	}
	f := factor{Secret: evalJS[string](b, `document.querySelector('[data-testid="totp-secret"]').textContent.trim()`)}
	b.Do(wait, "type the first code",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="second-factor-form"] #code`), f.code(t, time.Now())),
		chromedp.Click(chromedp.CSS(`[data-testid="second-factor-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="recovery-codes"]`)),
	)
	if n := evalJS[int](b, `document.querySelectorAll('[data-testid="recovery-code"]').length`); n != 10 {
		t.Fatalf("%d recovery codes shown, want 10", n)
	}
	b.Do(wait, "sign out",
		chromedp.Click(chromedp.CSS(`form[action="/staff/logout"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
	)
	signIn("sign in again")
	b.Do(wait, "type the code",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-code"] #code`)),
		chromedp.SendKeys(chromedp.CSS(`#code`), f.nextCode(t)),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login/code"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="daygrid"]`)),
	)
}
