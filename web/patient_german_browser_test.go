package web_test

// A booking in headless Chromium on the pages of a clinic that speaks
// German: the words, the confirmation's date, and the live cells another
// German browser is sent.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/i18n"
)

// askingFor makes every request of the tab, its streams' too, ask for
// acceptLanguage.
func askingFor(acceptLanguage string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
			Headers: network.Headers{"Accept-Language": acceptLanguage},
		})
		return err
	})
}

// innerText is the visible text of the first element sel finds.
func innerText(tab *browserTab, sel string) string {
	return evalJS[string](tab, `(document.querySelector(`+jsString(sel)+`) || {innerText: ""}).innerText`)
}

func jsString(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

func TestE2EBrowserGermanBooking(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.speaking(t, a.patientClinic(t), "de")
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(1, 14, 30)
	cellID := grid.CellID(sp.ID, start)
	gridURL := a.URL + c.BookURL(typ, start, sp.ID)
	const wait = 10 * time.Second

	// Browsers that name no language the pages speak: the clinic's German.
	tabA := startBrowser(t, "German browser A", 1280, 900)
	tabB := startBrowser(t, "German browser B", 1280, 900)
	defer func() { tabA.Report(); tabB.Report() }()
	for _, tab := range []*browserTab{tabA, tabB} {
		tab.Do(wait, "open the week", askingFor("fr-FR,fr;q=0.9"), chromedp.Navigate(gridURL), chromedp.WaitVisible(cellIn(cellID, "free")))
		if !tab.Until(wait, `typeof htmx !== "undefined"`) {
			t.Fatalf("%s: htmx never loaded", tab.name)
		}
	}
	page := innerText(tabA, "body")
	for _, want := range []string{"Termin buchen", "Nächste Woche", "Wählen Sie eine freie Zeit", i18n.For("de").Day(start.In(c.Loc)), "Deutsch"} {
		if !strings.Contains(page, want) {
			t.Errorf("the German booking page does not show %q:\n%s", want, clip(page, 1500))
		}
	}
	if lang := evalJS[string](tabA, `document.documentElement.lang`); lang != "de" {
		t.Errorf("<html lang=%q>, want de", lang)
	}

	tabA.Do(wait, "hold the slot",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)),
	)
	panel := innerText(tabA, "#hold-panel")
	for _, want := range []string{"Für Sie reserviert", "Uhr für Sie frei", "Ihr Name", "Termin bestätigen", "Diese Zeit freigeben"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the held panel does not show %q:\n%s", want, panel)
		}
	}
	// The page's script says the hold is over in German too (its words
	// come from the page: with app.js's English literals back, this fails).
	if over := evalJS[string](tabA, `document.querySelector("#hold-panel .hold-until").dataset.over`); !strings.HasPrefix(over, "Ihre Reservierung") {
		t.Errorf("the panel's words for an ended hold are %q", over)
	}
	// B's grid hears of it, in German.
	tabB.Do(wait, "see the cell turn held", chromedp.WaitVisible(cellIn(cellID, "held")))
	if note := innerText(tabB, "li#"+cellID); !strings.Contains(note, "Reserviert") {
		t.Errorf("B's live held cell says %q, want Reserviert", note)
	}

	tabA.Do(wait, "fill in and confirm",
		chromedp.SendKeys(chromedp.CSS("#name"), "Emmy Noether"),
		chromedp.SendKeys(chromedp.CSS("#email"), "emmy@example.org"),
		chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)),
	)
	if h := innerText(tabA, "h1"); h != "Ihr Termin ist gebucht" {
		t.Errorf("the confirmation's heading is %q", h)
	}
	summary := innerText(tabA, `[data-testid="summary"]`)
	when := i18n.For("de").LongDateTime(start.In(c.Loc)) // "Dienstag, 24. November 2026, 14:30"
	for _, want := range []string{when, "Bestätigt", "Wann", sp.Name} {
		if !strings.Contains(summary, want) {
			t.Errorf("the confirmation does not show %q:\n%s", want, summary)
		}
	}
	tabA.Shot("german-confirmation")
	tabB.Do(wait, "see the cell turn taken", chromedp.WaitVisible(cellIn(cellID, "taken")))
	if note := innerText(tabB, "li#"+cellID); !strings.Contains(note, "Vergeben") {
		t.Errorf("B's live taken cell says %q, want Vergeben", note)
	}

	// The switcher turns B's page English, and B's live cells with it.
	tabB.Do(wait, "switch to English",
		chromedp.Click(chromedp.CSS(`[data-testid="lang-switch"] a[data-lang="en"]`)),
		chromedp.WaitVisible(cellIn(cellID, "taken")),
	)
	if lang := evalJS[string](tabB, `document.documentElement.lang`); lang != "en" {
		t.Errorf("after switching, <html lang=%q>", lang)
	}
	if note := innerText(tabB, "li#"+cellID); !strings.Contains(note, "Taken") {
		t.Errorf("after switching, the cell says %q, want Taken", note)
	}
}
