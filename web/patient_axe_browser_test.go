package web_test

// Every patient page and the kiosk board, in English and in German, with
// a week that has a booked time, a time held by another patient and free
// times: axe-core finds nothing serious or critical on any of them.

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/grid"
)

func TestE2EBrowserAxeOnEveryPatientPageWithBookedHeldAndFree(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	for _, lang := range []string{"en", "de"} {
		c := a.patientClinic(t)
		if _, err := a.Pool.Exec(context.Background(), `UPDATE clinics SET language = $2 WHERE id = $1`, c.ID, lang); err != nil {
			t.Fatal(err)
		}
		typ, sp := c.Type0(), c.Specialists[0]
		mine, booked, held := c.At(2, 10, 0), c.At(2, 10, 30), c.At(2, 11, 0)
		a.bookDirect(t, c, typ, sp.ID, booked, "Taken Patient")
		a.holdOf(t, typ.ID, sp.ID, held, clientID())
		entries, _ := pwOffered(t, a, c, c.At(3, 10, 0), "Ada Waiting")
		offer := pwOfferLink(t, a, c, entries[0].ID)

		axe := func(tab *browserTab, page string) {
			t.Helper()
			if bad := axeSerious(t, tab); len(bad) > 0 {
				t.Errorf("%s, %s: axe finds: %s", lang, page, strings.Join(bad, "; "))
			}
		}
		bookedAndHeld := func(tab *browserTab, page string) {
			t.Helper()
			for id, state := range map[string]string{grid.CellID(sp.ID, booked): "taken", grid.CellID(sp.ID, held): "held"} {
				tab.Do(polishWait, page+": the "+state+" time", chromedp.WaitVisible(cellIn(id, state)))
			}
		}

		phone := startBrowser(t, lang+" phone", 390, 844)
		phone.Do(polishWait, "phone", chromedp.EmulateViewport(390, 844), askingFor(lang))
		openPage(t, phone, a.URL+c.BookURL(typ, mine, sp.ID), "li#"+grid.CellID(sp.ID, mine))
		bookedAndHeld(phone, "type page at 390 px")
		axe(phone, "type page at 390 px")
		phone.Report()

		tab := startBrowser(t, lang+" desktop", 1280, 900)
		tab.Do(polishWait, "desktop", chromedp.EmulateViewport(1280, 900), askingFor(lang))
		openPage(t, tab, a.URL+"/c/"+c.Slug, `[data-testid="types"]`)
		axe(tab, "clinic page")
		openPage(t, tab, a.URL+c.BookURL(typ, mine, sp.ID), "li#"+grid.CellID(sp.ID, mine))
		bookedAndHeld(tab, "type page at 1280 px")
		axe(tab, "type page at 1280 px")
		tab.Do(polishWait, "hold a time",
			chromedp.Click(chromedp.CSS("li#"+grid.CellID(sp.ID, mine)+" button")),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="details-form"]`)),
		)
		axe(tab, "hold panel")
		tab.Do(polishWait, "send the form empty",
			chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#hold-panel .field-error`)),
		)
		axe(tab, "form with errors")
		tab.Do(polishWait, "book",
			chromedp.SendKeys(chromedp.CSS("#name"), "Emmy Noether"),
			chromedp.SendKeys(chromedp.CSS("#email"), "emmy-"+lang+"@example.org"),
			chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)),
		)
		axe(tab, "confirmation")
		manage := evalJS[string](tab, `location.pathname`)
		openPage(t, tab, a.URL+manage, "main h1")
		axe(tab, "manage page")
		openPage(t, tab, a.URL+manage+"/reschedule", `[data-testid="current-time"]`)
		to := grid.CellID(uuid.Nil, c.At(2, 12, 0))
		tab.Do(polishWait, "ask to move",
			chromedp.WaitVisible(chromedp.CSS("li#"+to+" button")),
			chromedp.Click(chromedp.CSS("li#"+to+" button")),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="move-confirm"]`)),
		)
		axe(tab, "move's confirm step")
		openPage(t, tab, a.URL+manage+"/cancel", "main h1")
		axe(tab, "cancel page")

		openPage(t, tab, a.URL+pwJoinPath(c, typ), `[data-testid="waitlist-form"]`)
		axe(tab, "waitlist form")
		tab.Do(polishWait, "join the waitlist",
			chromedp.SendKeys(chromedp.CSS(`[data-testid="waitlist-form"] #name`), "Lise Meitner"),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="waitlist-form"] #email`), "lise-"+lang+"@example.org"),
			chromedp.Click(chromedp.CSS(`[data-testid="waitlist-form"] button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-joined"]`)),
		)
		axe(tab, "waitlist joined")
		place := evalJS[string](tab, `document.querySelector('[data-testid="waitlist-place-link"]').getAttribute("href")`)
		openPage(t, tab, a.URL+place, `[data-testid="waitlist-place"]`)
		axe(tab, "waitlist place")
		openPage(t, tab, a.URL+offer, `[data-testid="offer"]`)
		axe(tab, "waitlist offer")
		openPage(t, tab, a.URL+"/c/"+c.Slug+"/find", "main h1")
		axe(tab, "find my booking")
		openPage(t, tab, a.URL+"/c/"+c.Slug+"/privacy", "main h1")
		axe(tab, "privacy")
		tab.Do(polishWait, "open the board", chromedp.Navigate(a.URL+"/kiosk/"+url.PathEscape(c.Slug)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-block"]`)))
		axe(tab, "kiosk board")
		tab.Report()
	}
}
