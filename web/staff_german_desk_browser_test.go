package web_test

// The front desk in headless Chromium for a receptionist whose browser
// asks for German: signing in lands on the day grid, which speaks German
// with the clinic's German type names; the desk dialog books a caller and
// says so in German; the grid, updated live, and a booking's dialog hold
// no English; axe finds nothing serious with booked, held and free times
// in view; the footer's switcher leads back to English.

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// shownWords says, in JavaScript, what a reader meets in the element sel:
// its text (a short block's type line too, which its height may hide),
// the names and hints of its controls, and the page's title.
func shownWords(sel string) string {
	return `(() => { const e = document.querySelector(` + jsString(sel) + `); if (!e) return "";
		const named = [...e.querySelectorAll("[aria-label], [title], [placeholder]")]
			.map(n => [n.getAttribute("aria-label"), n.getAttribute("title"), n.getAttribute("placeholder")].filter(Boolean).join(" "));
		return e.innerText + " " + e.textContent + " " + named.join(" ") + " " + document.title; })()`
}

// blockText says, in JavaScript, all the text of the booking block of id.
func blockText(id string) string {
	return `(document.querySelector('button[data-booking="` + id + `"]') || {textContent: ""}).textContent`
}

func TestStaffGermanDeskBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	g := newGermanDesk(t, newApp(t))
	a, c, day, date, english := g.a, g.c, g.day, g.date, g.english
	sp1, ada := c.Specialists[0], g.ada

	s := startBrowser(t, "German desk", 1440, 900)
	defer s.Report()
	s.RecordLive()
	s.Do(stafferWait, "ask for German", askingFor("de-DE,de;q=0.9"), chromedp.Navigate(a.URL+"/staff/login"), chromedp.WaitVisible(chromedp.CSS(`#email`)))
	// The sign-in page's own title is set by its handler, the form's words
	// by the staff frame: the form is checked here.
	noEnglish(t, "the sign-in form", evalJS[string](s, `document.querySelector("form[action='/staff/login']").innerText`), english)
	signInBrowser(s, a, a.newAccount(t, c.ID, "reception"))
	if path := evalJS[string](s, `location.pathname`); path != "/staff/day" {
		t.Errorf("signing in lands on %q, want the day grid", path)
	}

	openGrid(t, s, a, c, "/staff/day?date="+date)
	if h := innerText(s, "h1"); !strings.Contains(h, "Tag") || !strings.Contains(h, "Berliner Zeit") {
		t.Errorf("the German day grid is headed %q", h)
	}
	if block := evalJS[string](s, blockText(ada.Booking.ID.String())); !strings.Contains(block, "Sprechstunde · Gebucht") {
		t.Errorf("Ada's block reads %q", block)
	}
	if evalJS[int](s, `document.querySelectorAll(".daygrid .cell.free").length`) == 0 || evalJS[int](s, `document.querySelectorAll('[data-testid="grid-held"]').length`) != 1 {
		t.Fatalf("the grid lacks free or held times: axe below would prove less\n%s", s.snapshot())
	}
	noEnglish(t, "the German day grid", evalJS[string](s, shownWords("body")), english)
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the German day grid with booked, held and free times: %s", strings.Join(v, "; "))
	}

	// The desk dialog books a caller.
	s.Do(stafferWait, "open the desk dialog",
		chromedp.Click(chromedp.CSS(freeCell(sp1.ID, day.Add(time.Hour)))),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] #desk-name`)),
	)
	noEnglish(t, "the German desk dialog", evalJS[string](s, shownWords("#desk-dialog")), english)
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the German desk dialog: %s", strings.Join(v, "; "))
	}
	s.Do(stafferWait, "book a caller",
		chromedp.SendKeys(chromedp.CSS(`#desk-name`), "Bert Anrufer"),
		chromedp.SendKeys(chromedp.CSS(`#desk-phone`), "030 7654321"),
		chromedp.Click(chromedp.CSS(`#desk-dialog button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="desk-booked"]`)),
	)
	if msg := innerText(s, `[data-testid="desk-booked"]`); !strings.Contains(msg, "Bert Anrufer ist gebucht für") {
		t.Errorf("the German success notice reads %q", msg)
	}
	noEnglish(t, "the German success notice", evalJS[string](s, shownWords(`[data-testid="desk-booked"]`)), english)

	// The grid shows the new booking live, in German.
	if !s.Until(stafferWait, `[...document.querySelectorAll('[data-testid="grid-booking"]')].some(b => b.textContent.includes("Bert Anrufer") && b.textContent.includes("Sprechstunde · Gebucht"))`) {
		t.Errorf("the live grid does not show the new booking in German\n%s", s.snapshot())
	}
	noEnglish(t, "the live-updated German grid", evalJS[string](s, shownWords(`[data-testid="daygrid"]`)), english)
	s.Do(stafferWait, "close the notice", chromedp.Click(chromedp.CSS(`[data-booked-close]`)))

	germanBookingDialogBrowser(t, s, ada.Booking.ID.String(), english)
	germanBackToEnglishBrowser(t, s, ada.Booking.ID.String(), date)
}

// germanBookingDialogBrowser: a booking's dialog says its type, state and
// mark in German, and no English; axe finds nothing serious in it.
func germanBookingDialogBrowser(t *testing.T, s *browserTab, id string, english []string) {
	t.Helper()
	s.Do(stafferWait, "open Ada's booking",
		chromedp.Click(chromedp.CSS(`button[data-booking="`+id+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="booking-dialog"]`)),
	)
	dialog := evalJS[string](s, shownWords(`[data-testid="booking-dialog"]`))
	for _, want := range []string{"Sprechstunde", "Gebucht", "Nicht vermerkt"} {
		if !strings.Contains(dialog, want) {
			t.Errorf("the German booking dialog does not say %q: %s", want, dialog)
		}
	}
	noEnglish(t, "the German booking dialog", dialog, english)
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the German booking dialog: %s", strings.Join(v, "; "))
	}
	s.Do(stafferWait, "close the booking", chromedp.Click(chromedp.CSS(`[data-mark-close]`)))
}

// germanBackToEnglishBrowser: the footer's switcher leads back to the
// same grid, in English.
func germanBackToEnglishBrowser(t *testing.T, s *browserTab, id, date string) {
	t.Helper()
	s.Do(stafferWait, "switch to English",
		chromedp.Click(chromedp.CSS(`[data-testid="lang-switch"] a[data-lang="en"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.daygrid`)),
	)
	if !s.Until(stafferWait, `document.querySelector("h1").innerText.startsWith("Day") && document.documentElement.lang === "en"`) {
		t.Errorf("the switch does not lead back to the English grid: %q", innerText(s, "h1"))
	}
	if block := evalJS[string](s, blockText(id)); !strings.Contains(block, "Consultation · Booked") {
		t.Errorf("after the switch Ada's block reads %q", block)
	}
	if path := evalJS[string](s, `location.pathname + location.search`); path != "/staff/day?date="+date {
		t.Errorf("the switch leads to %q", path)
	}
}
