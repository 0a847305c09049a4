package web_test

// The admins' pages in a German browser and in an English one: settings
// (the zone picker), the appointment types (with their German fields),
// the specialists and the staff accounts, read as a person reads them, no
// English sentence of the catalogue on the German ones, axe clean in both.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/seed"
	"github.com/clinic/booking/internal/staff"
)

// adminPage opens path, waits for what marks it, and checks it reads in
// one language and passes axe.
func adminPage(t *testing.T, tab *browserTab, url, visible, what string, english []string) string {
	t.Helper()
	openPage(t, tab, url, visible)
	got := recordsText(tab)
	if english != nil {
		noEnglish(t, what, got, english)
	}
	if v := axeSerious(t, tab); len(v) > 0 {
		t.Errorf("axe on %s: %s", what, strings.Join(v, "; "))
	}
	return got
}

func TestStaffAdminPagesInGermanAndEnglishBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t, withPool(freshPool(t)))
	demo, err := seed.Run(context.Background(), a.Pool, "demo-password", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	admin := a.newAccount(t, demo.Clinic.ID, staff.RoleAdmin)
	english := englishOf(t, demo)
	ty, sp := demo.Types[1], demo.Specialists[0]

	de := startBrowser(t, "German admin", 1280, 900)
	defer de.Report()
	de.Do(polishWait, "a German browser", askingFor("de-DE,de;q=0.9"))
	signInBrowser(de, a, admin)

	got := adminPage(t, de, a.URL+"/staff/settings", `select#timezone`, "the German settings", english)
	if zone := evalJS[string](de, `document.querySelector("#timezone").selectedOptions[0].textContent`); !strings.HasPrefix(zone, "Berliner Zeit (Europa/Berlin), UTC+") {
		t.Errorf("the German zone picker shows %q", zone)
	}
	if !strings.Contains(got, "Praxiseinstellungen") || !strings.Contains(got, "Zeitzone") {
		t.Errorf("the settings page is not German:\n%s", clip(got, 800))
	}
	de.Shot("de-admin-1-settings")

	got = adminPage(t, de, a.URL+"/staff/types", `[data-testid="type-list"]`, "the German list of types", english)
	if !strings.Contains(got, "Sprechstunde") || !strings.Contains(got, "Terminarten") {
		t.Errorf("the German list of types:\n%s", clip(got, 800))
	}
	adminPage(t, de, a.URL+"/staff/types/"+ty.ID.String(), `#nameDe`, "the German type form", english)
	if v := evalJS[string](de, `document.querySelector("#nameDe").value`); v != "Sprechstunde" {
		t.Errorf("the German name field holds %q", v)
	}
	de.Do(polishWait, "rename the type in German",
		chromedp.SetValue(chromedp.CSS(`#nameDe`), "Sprechstunde am Vormittag"),
		chromedp.Click(chromedp.CSS(`[data-testid="type-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#nameDe`)),
	)
	if !de.Until(polishWait, `document.querySelector("h1").textContent === "Sprechstunde am Vormittag"`) {
		t.Errorf("after saving the heading is %q", innerText(de, "h1"))
	}
	de.Shot("de-admin-2-type")

	got = adminPage(t, de, a.URL+"/staff/specialists", `table`, "the German specialists", english)
	if !strings.Contains(got, "Behandler/innen") {
		t.Errorf("the specialists page is not German:\n%s", clip(got, 800))
	}
	got = adminPage(t, de, a.URL+"/staff/specialists/"+sp.ID.String(), `[data-testid="hours-form"]`, "a German specialist's page", english)
	if !strings.Contains(got, "Montag") || !strings.Contains(got, "Wochenzeiten") {
		t.Errorf("the specialist's page is not German:\n%s", clip(got, 800))
	}

	openPage(t, de, a.URL+"/staff/users", `[data-testid="table"]`)
	de.Do(polishWait, "open a row's Disable", chromedp.Click(chromedp.CSS(`tr[data-account] details.confirm summary`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-account] details.confirm[open] button.danger`)))
	got = recordsText(de)
	noEnglish(t, "the German accounts page", got, english)
	if !strings.Contains(got, "Was jede Rolle darf") || !strings.Contains(got, "Konto deaktivieren") {
		t.Errorf("the accounts page is not German:\n%s", clip(got, 1200))
	}
	if v := axeSerious(t, de); len(v) > 0 {
		t.Errorf("axe on the German accounts page: %s", strings.Join(v, "; "))
	}
	de.Shot("de-admin-3-accounts")

	en := startBrowser(t, "English admin", 1280, 900)
	defer en.Report()
	en.Do(polishWait, "an English browser", askingFor("en-GB,en;q=0.9"))
	signInBrowser(en, a, admin)
	if got := adminPage(t, en, a.URL+"/staff/settings", `select#timezone`, "the English settings", nil); !strings.Contains(got, "Clinic settings") {
		t.Errorf("the English settings page:\n%s", clip(got, 600))
	}
	if zone := evalJS[string](en, `document.querySelector("#timezone").selectedOptions[0].textContent`); !strings.HasPrefix(zone, "Berlin time (Europe/Berlin), UTC+") {
		t.Errorf("the English zone picker shows %q", zone)
	}
	adminPage(t, en, a.URL+"/staff/types", `[data-testid="type-list"]`, "the English list of types", nil)
	adminPage(t, en, a.URL+"/staff/types/"+ty.ID.String(), `#nameDe`, "the English type form", nil)
	adminPage(t, en, a.URL+"/staff/specialists", `table`, "the English specialists", nil)
	adminPage(t, en, a.URL+"/staff/specialists/"+sp.ID.String(), `[data-testid="hours-form"]`, "an English specialist's page", nil)
	if got := adminPage(t, en, a.URL+"/staff/users", `[data-testid="table"]`, "the English accounts page", nil); !strings.Contains(got, "What each role may do") {
		t.Errorf("the English accounts page:\n%s", clip(got, 800))
	}
}
