package web_test

// The code step in headless Chromium, in English and in German: the held
// time stays on the page, a wrong code says how many tries are left, the
// right one books.

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/grid"
)

func TestE2EBrowserCodeStep(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a, srv := verifyApp(t, program.Options{})
	const wait = 10 * time.Second
	for i, lang := range []struct {
		code                            string
		title, sent, tries, booked, btn string
	}{
		{"en", "Confirm your e-mail address", "We sent a six-digit code to", "4 tries left", "You are booked", "Confirm and book"},
		{"de", "Bestätigen Sie Ihre E-Mail-Adresse", "Wir haben einen sechsstelligen Code an", "Noch 4 Versuche", "Ihr Termin ist gebucht", "Bestätigen und buchen"},
	} {
		c := a.speaking(t, a.patientClinic(t), lang.code)
		a.setVerification(t, c, clinics.VerifyAlways)
		typ, sp := c.Type0(), c.Specialists[0]
		start := c.At(1+i, 10, 0)
		cellID := grid.CellID(sp.ID, start)
		email := uniqueEmail("browser-" + lang.code)

		tab := startBrowser(t, "code step "+lang.code, 1280, 900)
		tab.Do(wait, "open the week and hold", askingFor(lang.code),
			chromedp.Navigate(a.URL+c.BookURL(typ, start, sp.ID)),
			chromedp.WaitVisible(cellIn(cellID, "free")),
			chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
			chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)),
		)
		when := innerText(tab, `#hold-panel strong`)
		tab.Do(wait, "fill in and confirm",
			chromedp.SendKeys(chromedp.CSS("#name"), "Ada Lovelace"),
			chromedp.SendKeys(chromedp.CSS("#email"), email),
			chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="code-step"]`)),
		)
		panel := innerText(tab, "#hold-panel")
		for _, want := range []string{lang.title, lang.sent, email, when, lang.btn} {
			if !strings.Contains(panel, want) {
				t.Errorf("%s: the code step does not show %q:\n%s", lang.code, want, panel)
			}
		}
		code := codeSentTo(t, srv, i+1, email)
		tab.Do(wait, "type a wrong code",
			chromedp.SendKeys(chromedp.CSS("#code"), wrongCode(t, code)),
			chromedp.Click(chromedp.CSS(`[data-testid="code-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="code-error"]`)),
		)
		if msg := innerText(tab, `[data-testid="code-error"]`); !strings.Contains(msg, lang.tries) {
			t.Errorf("%s: a wrong code says %q, want %q", lang.code, msg, lang.tries)
		}
		tab.Do(wait, "type the code",
			chromedp.SendKeys(chromedp.CSS("#code"), code),
			chromedp.Click(chromedp.CSS(`[data-testid="code-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)),
		)
		if h := innerText(tab, "h1"); h != lang.booked {
			t.Errorf("%s: the confirmation's heading is %q", lang.code, h)
		}
		tab.Shot("code-step-" + lang.code)
		tab.Report()
	}
}
