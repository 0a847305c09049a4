package web_test

// The demo clinic, speaking German, booked on a phone in headless
// Chromium: no page of the flow, no e-mail and no calendar file says any
// of the seed's English words (its types' names and descriptions, the
// zone's IANA name) or any English sentence of the pages' catalogue.

import (
	"context"
	"maps"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/chromedp/chromedp"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/seed"
	"github.com/clinic/booking/internal/testkit"
)

// englishOf is what a German reader must never see: the seed's English
// texts and the catalogue's English sentences (those without
// placeholders that German says otherwise), of every area's file.
func englishOf(t *testing.T, demo seed.Demo) []string {
	t.Helper()
	out := []string{"Europe/Berlin"}
	for _, ty := range demo.Types {
		out = append(out, ty.Name, ty.Description)
	}
	read := func(lang string) map[string]string {
		files, err := filepath.Glob("../internal/i18n/locales/*" + lang + ".toml")
		if err != nil || len(files) == 0 {
			t.Fatalf("the %s message files: %v", lang, err)
		}
		all := map[string]string{}
		for _, f := range files {
			var m map[string]string
			if _, err := toml.DecodeFile(f, &m); err != nil {
				t.Fatal(err)
			}
			maps.Copy(all, m)
		}
		return all
	}
	en, de := read("en"), read("de")
	for k, v := range en {
		if len(v) >= 8 && !strings.Contains(v, "{") && v != de[k] {
			out = append(out, v)
		}
	}
	return out
}

// noEnglish fails for each English text s holds.
func noEnglish(t *testing.T, what, s string, english []string) {
	t.Helper()
	flat := strings.Join(strings.Fields(s), " ")
	for _, e := range english {
		if strings.Contains(flat, e) {
			t.Errorf("%s says %q in English:\n%s", what, e, clip(flat, 1200))
		}
	}
}

func TestE2EBrowserGermanDemoOnAPhoneHasNoEnglish(t *testing.T) {
	t.Parallel()
	needChromium(t)
	srv := testkit.SMTP(t)
	cfg, err := mail.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	sender, err := mail.NewSMTP(cfg, "Praxis <praxis@example.org>")
	if err != nil {
		t.Fatal(err)
	}
	a := newApp(t, withPool(freshPool(t)), withOptions(program.Options{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Mail:           program.MailOptions{Sender: sender, Workers: 2, Retry: fastRetry, Queue: ownQueue()},
	}))
	demo, err := seed.Run(context.Background(), a.Pool, "demo-password", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pool.Exec(context.Background(), `UPDATE clinics SET language = 'de' WHERE id = $1`, demo.Clinic.ID); err != nil {
		t.Fatal(err)
	}
	english := englishOf(t, demo)

	tab := startBrowser(t, "German phone", 390, 844)
	defer tab.Report()
	tab.Do(polishWait, "a German phone", chromedp.EmulateViewport(390, 844), askingFor("de-DE,de;q=0.9"))
	openPage(t, tab, a.URL+"/c/demo", `[data-testid="types"]`)
	noEnglish(t, "the clinic page", innerText(tab, "body"), english)
	if body := innerText(tab, "body"); !strings.Contains(body, "Sprechstunde") || !strings.Contains(body, "Berliner Zeit") || !strings.Contains(body, "+49 30 1234 5678") {
		t.Errorf("the German clinic page lacks its type, zone or phone:\n%s", clip(body, 800))
	}
	tab.Shot("de-phone-1-clinic")

	// The consultation, next week (the seed's hours are on weekdays).
	ty := demo.Types[1]
	openPage(t, tab, a.URL+"/c/demo/book/"+ty.ID.String()+"?week="+time.Now().AddDate(0, 0, 7).Format(time.DateOnly), `li[data-state="free"]`)
	noEnglish(t, "the booking page", innerText(tab, "body"), english)
	tab.Shot("de-phone-2-week")
	tab.Do(polishWait, "hold the first free time",
		chromedp.Click(chromedp.CSS(`li[data-state="free"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="details-form"]`)),
	)
	noEnglish(t, "the held panel", innerText(tab, "#hold-panel"), english)
	tab.Do(polishWait, "send the form empty",
		chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel .field-error`)),
	)
	noEnglish(t, "the form's errors", innerText(tab, "#hold-panel"), english)
	tab.Shot("de-phone-3-held")
	tab.Do(polishWait, "fill in and book",
		chromedp.SendKeys(chromedp.CSS("#name"), "Emmy Noether"),
		chromedp.SendKeys(chromedp.CSS("#email"), "emmy@example.org"),
		chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)),
	)
	noEnglish(t, "the confirmation", innerText(tab, "body"), english)
	tab.Shot("de-phone-4-booked")
	manage := evalJS[string](tab, `location.pathname`)
	openPage(t, tab, a.URL+manage+"/reschedule", `[data-testid="current-time"]`)
	noEnglish(t, "the move page", innerText(tab, "body"), english)
	tab.Shot("de-phone-5-move")

	// The calendar file and the confirmation e-mail with its own.
	cal := a.newClient(t).Get(manage + "/calendar.ics").Want(http.StatusOK)
	noEnglish(t, "the calendar file", strings.ReplaceAll(cal.Body, "\r\n ", ""), english)
	if !strings.Contains(cal.Body, "Sprechstunde") {
		t.Errorf("the calendar file does not name the type in German:\n%s", cal.Body)
	}
	var confirmation testkit.ParsedMail
	for _, m := range srv.WaitFor(t, 1, 20*time.Second) {
		if p := testkit.ParseReceived(t, m); p.To == "emmy@example.org" {
			confirmation = p
		}
	}
	noEnglish(t, "the e-mail's subject", confirmation.Subject, english)
	noEnglish(t, "the e-mail's text", confirmation.Text, english)
	noEnglish(t, "the e-mail's HTML", confirmation.HTML, english)
	for name, data := range confirmation.Attachments {
		noEnglish(t, "the e-mail's "+name, strings.ReplaceAll(string(data), "\r\n ", ""), english)
	}
	if !strings.Contains(confirmation.Text, "Sprechstunde") || !strings.Contains(confirmation.Text, "Berliner Zeit") {
		t.Errorf("the e-mail does not name the type or the zone in German:\n%s", confirmation.Text)
	}
	if os.Getenv("CLINIC_SCREENS") != "" {
		t.Logf("screenshots in %s", screenshotDir(t))
	}
}
