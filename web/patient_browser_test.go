package web_test

// End-to-end tests of the patient pages in headless Chromium: what two
// patients and a waiting-room screen see, a booking with the keyboard
// alone, and the held panel in view on a phone and a desktop.

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
)

// Two patients and a waiting-room screen watch the same week: a hold, a
// booking and a cancel show up everywhere without a reload.
func TestE2EBrowserTwoPatientsAndTheKioskSeeEachChangeLive(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(1, 10, 0) // tomorrow, so the kiosk shows it too
	cellID := grid.CellID(sp.ID, start)
	gridURL := a.URL + c.BookURL(typ, start, sp.ID)
	blockID := kioskTypeBlockID(typ)
	const wait = 10 * time.Second

	tabA := startBrowser(t, "browser A", 1280, 900)
	tabB := startBrowser(t, "browser B", 1280, 900)
	kiosk := tabB.NewTab("kiosk tab")
	defer func() { tabA.Report(); tabB.Report(); kiosk.Report() }()

	tabA.Do(wait, "open the week", chromedp.Navigate(gridURL), chromedp.WaitVisible(cellIn(cellID, "free")))
	tabB.Do(wait, "open the week", chromedp.Navigate(gridURL), chromedp.WaitVisible(cellIn(cellID, "free")))
	kiosk.Do(wait, "open the kiosk", chromedp.Navigate(a.URL+"/kiosk/"+c.Slug), chromedp.WaitVisible(chromedp.CSS("#"+blockID)))
	// Tomorrow: 16 times of two specialists free.
	if !kiosk.Until(time.Second, kioskFreeIs(blockID, 1, 32)) {
		t.Fatalf("the kiosk does not count tomorrow's 32 free %s appointments:\n%s", typ.Name, kiosk.snapshot())
	}
	// Let the pages' streams connect (htmx loads deferred), and mark B's and
	// the kiosk's documents: a reload would lose the mark.
	for _, tab := range []*browserTab{tabA, tabB, kiosk} {
		if !tab.Until(wait, `typeof htmx !== "undefined"`) {
			t.Fatalf("%s: htmx never loaded", tab.name)
		}
	}
	evalJS[bool](tabB, `window.__noReload = true`)
	evalJS[bool](kiosk, `window.__noReload = true`)
	defer func() {
		for _, tab := range []*browserTab{tabB, kiosk} {
			if !evalJS[bool](tab, `window.__noReload === true`) {
				t.Errorf("%s reloaded the page: the changes must arrive in place", tab.name)
			}
		}
	}()

	w := sharedWeek{tabA: tabA, tabB: tabB, kiosk: kiosk, cellID: cellID, blockID: blockID, start: start, sp: sp}
	kioskLive := w.holdAndWatch(t)
	w.bookAndWatch(t, kioskLive)

	// A cancels through the manage link, with the confirmation step.
	tabA.Do(wait, "cancel",
		chromedp.Click(chromedp.CSS(`a[data-testid="cancel-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button.danger`)),
	)
	if h := evalJS[string](tabA, `document.querySelector("h1").innerText`); h != "Cancel this appointment?" {
		t.Errorf("cancel asks %q", h)
	}
	tabA.Do(wait, "confirm the cancel",
		chromedp.Click(chromedp.CSS(`button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="summary"][data-status="cancelled"]`)),
	)
	tabB.Do(wait, "see the cell free again", chromedp.WaitVisible(cellIn(cellID, "free")))
	if kioskLive && !kiosk.Until(wait, kioskFreeIs(blockID, 1, 32)) {
		t.Errorf("the kiosk does not count 10:00 free again after the cancel")
	}
	// B can hold the freed time right away, from the live cell.
	tabB.Do(wait, "hold the freed time",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)),
	)
	if !kiosk.Until(2*time.Second, `document.querySelector('[data-testid="kiosk"]') !== null`) {
		t.Error("the kiosk page went away")
	}
}

// sharedWeek is two browsers and a kiosk tab on one week, and the cell and
// kiosk block they watch.
type sharedWeek struct {
	tabA, tabB, kiosk *browserTab
	cellID, blockID   string
	start             time.Time
	sp                db.Specialist
}

// holdAndWatch: A holds the time; B and the kiosk see it, without a
// reload. It reports whether the kiosk followed.
func (w sharedWeek) holdAndWatch(t *testing.T) (kioskLive bool) {
	tabA, tabB, kiosk, cellID, blockID := w.tabA, w.tabB, w.kiosk, w.cellID, w.blockID
	const wait = 10 * time.Second
	// A holds the time.
	tabA.Do(wait, "hold the slot",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)),
	)
	if err := tabA.try(wait, chromedp.WaitVisible(cellIn(cellID, "mine"))); err != nil {
		t.Errorf("A's own cell never turned \"mine\": %v", err)
	}
	// The panel and A's own cell say until when the time is A's.
	if !tabA.Until(3*time.Second, `/until \d\d:\d\d/.test((document.querySelector("#hold-panel .hold-until") || {}).textContent || "") && /until \d\d:\d\d/.test((document.querySelector("li#`+cellID+` .hold-until") || {}).textContent || "")`) {
		t.Errorf("the panel or the cell does not say until when the time is held: %q", evalJS[string](tabA, `(document.querySelector("#hold-panel .hold-until") || {}).textContent || ""`))
	}
	// B sees it held, without reloading.
	tabB.Do(wait, "see the cell turn held", chromedp.WaitVisible(cellIn(cellID, "held")))
	if note := evalJS[string](tabB, `document.querySelector("li#`+cellID+`").innerText`); !strings.Contains(note, "Held") {
		t.Errorf("B's held cell says %q: the state must be readable as text", note)
	}
	if !tabB.Until(2*time.Second, `(() => {
		const li = document.querySelector("li#`+cellID+`");
		const a = document.getElementById("grid-announcer");
		return (a && a.textContent.trim() !== "") || !!li.closest("[aria-live]");
	})()`) {
		t.Errorf("nothing announces the change of the cell B is looking at (#grid-announcer stays empty and the cell is in no aria-live region)")
	}
	tabB.Shot("grid-held-cell")
	kioskLive = kiosk.Until(wait, kioskFreeIs(blockID, 1, 31))
	if !kioskLive {
		t.Errorf("the kiosk still counts 10:00 free %s after A held it: the board is not live", wait)
	}

	return kioskLive
}

// bookAndWatch: A books the time; B sees it taken, the kiosk neither the
// time nor the patient.
func (w sharedWeek) bookAndWatch(t *testing.T, kioskLive bool) {
	tabA, tabB, kiosk, cellID, blockID := w.tabA, w.tabB, w.kiosk, w.cellID, w.blockID
	const wait = 10 * time.Second
	// A books.
	tabA.Do(wait, "fill in and confirm",
		chromedp.SendKeys(chromedp.CSS("#name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
		chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)),
	)
	if loc := evalJS[string](tabA, `location.pathname`); !managePath.MatchString(loc) {
		t.Errorf("A landed on %q, want /manage/{token}", loc)
	}
	summary := evalJS[string](tabA, `document.querySelector('[data-testid="summary"]').innerText`)
	if !strings.Contains(summary, w.start.Format("Monday 2 January 2006, 15:04")) || !strings.Contains(summary, w.sp.Name) {
		t.Errorf("the confirmation says:\n%s", summary)
	}
	tabA.Shot("confirmation")
	tabB.Do(wait, "see the cell turn taken", chromedp.WaitVisible(cellIn(cellID, "taken")))
	if kioskLive && !kiosk.Until(time.Second, kioskFreeIs(blockID, 1, 31)) {
		t.Errorf("the kiosk counts the booked 10:00 free again")
	}
	if txt := evalJS[string](kiosk, `document.querySelector('[data-testid="kiosk"]').innerText`); regexp.MustCompile(`\d\d:\d\d\d\d:\d\d`).MatchString(txt) {
		t.Errorf("the kiosk's times run together (%q): nothing separates them on the screen", clip(regexp.MustCompile(`\d\d:\d\d(\d\d:\d\d)+`).FindString(txt), 40))
	}
	if html := evalJS[string](kiosk, `document.documentElement.outerHTML`); strings.Contains(html, "Ada") || strings.Contains(html, "ada@example.org") {
		t.Errorf("the kiosk shows the patient's details")
	}
	kiosk.Shot("kiosk")

}

// The whole booking flow with the keyboard alone.
func TestE2EBrowserKeyboardOnlyBooking(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[1]
	start := c.At(2, 11, 30)
	cellID := grid.CellID(sp.ID, start)
	const wait = 10 * time.Second

	p := startBrowser(t, "keyboard browser", 1280, 900)
	defer p.Report()
	p.Do(wait, "open the week", chromedp.Navigate(a.URL+c.BookURL(typ, start, sp.ID)), chromedp.WaitVisible(cellIn(cellID, "free")))
	if !p.Until(wait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded")
	}

	// tabTo presses Tab until cond holds for document.activeElement.
	tabTo := func(what, cond string, max int) int {
		t.Helper()
		for i := 1; i <= max; i++ {
			p.Do(wait, "press Tab", chromedp.KeyEvent(kb.Tab))
			if evalJS[bool](p, `(() => { const el = document.activeElement; return !!el && (`+cond+`); })()`) {
				return i
			}
		}
		t.Fatalf("%s is not reachable with %d Tabs (focus is on %s)", what, max,
			evalJS[string](p, `(() => { const el = document.activeElement; return el ? el.outerHTML.slice(0, 200) : "nothing"; })()`))
		return 0
	}

	n := tabTo("the slot button", `el.matches("li#`+cellID+` button")`, 300)
	t.Logf("the slot is %d Tabs away", n)
	outline := evalJS[string](p, `(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + " " + s.outlineWidth; })()`)
	if strings.HasPrefix(outline, "none") || strings.HasSuffix(outline, " 0px") {
		t.Errorf("the focused slot button shows no focus (outline %q)", outline)
	}
	p.Do(wait, "Enter holds", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)))
	p.Shot("keyboard-held")

	n = tabTo("the name field", `el.id === "name"`, 300)
	t.Logf("the name field is %d Tabs away after the hold", n)
	p.Do(wait, "type the name", chromedp.KeyEvent("Grace Hopper"))
	p.Do(wait, "Tab", chromedp.KeyEvent(kb.Tab))
	if id := evalJS[string](p, `document.activeElement.id`); id != "email" {
		t.Fatalf("one Tab after the name, focus is on %q, want the e-mail field", id)
	}
	p.Do(wait, "type the e-mail", chromedp.KeyEvent("grace@example.org"))
	tabTo("the confirm button", `el.matches('[data-testid="details-form"] button[type="submit"]')`, 5)
	p.Do(wait, "Enter confirms", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)))
	summary := evalJS[string](p, `document.querySelector('[data-testid="summary"]').innerText`)
	for _, want := range []string{"Grace Hopper", start.Format("15:04"), sp.Name} {
		if !strings.Contains(summary, want) {
			t.Errorf("the booked page lacks %q:\n%s", want, summary)
		}
	}
	p.Shot("keyboard-booked")
}

// After a click on a time, the patient sees the held panel and its form
// without hunting for it, on a 360 px phone and on a desktop screen; the
// phone page does not scroll sideways.
func TestE2EBrowserHeldPanelInViewOnPhoneAndDesktop(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	for i, size := range []struct {
		name string
		w, h int
	}{{"phone-360", 360, 740}, {"desktop-1280", 1280, 800}} {
		sp := c.Specialists[i]
		start := c.At(2, 10, 0)
		cellID := grid.CellID(sp.ID, start)
		p := startBrowser(t, size.name+" browser", size.w, size.h)
		p.Do(10*time.Second, "open the week",
			chromedp.EmulateViewport(int64(size.w), int64(size.h)),
			chromedp.Navigate(a.URL+c.BookURL(typ, start, sp.ID)),
			chromedp.WaitVisible(cellIn(cellID, "free")),
		)
		if !p.Until(10*time.Second, `typeof htmx !== "undefined"`) {
			t.Fatal("htmx never loaded")
		}
		p.Do(10*time.Second, "hold", chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
			chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)))
		time.Sleep(300 * time.Millisecond)
		inView := evalJS[string](p, `(() => {
			const r = document.querySelector('#hold-panel [data-testid="held"] h2').getBoundingClientRect();
			return Math.round(r.top) + "/" + window.innerHeight;
		})()`)
		top, vh, _ := strings.Cut(inView, "/")
		ti, _ := strconv.Atoi(top)
		vi, _ := strconv.Atoi(vh)
		if ti < 0 || ti > vi {
			t.Errorf("%s: after the click the \"Held for you\" panel is at y=%d px, outside the %d px window: the patient does not see it or its form", size.name, ti, vi)
		}
		p.Shot(size.name + "-booking-held")
		w := evalJS[string](p, `document.documentElement.scrollWidth + "/" + window.innerWidth`)
		sw, iw, _ := strings.Cut(w, "/")
		pageWidth, _ := strconv.Atoi(sw)
		windowWidth, _ := strconv.Atoi(iw)
		if pageWidth > windowWidth {
			t.Errorf("%s: the page is %d px wide in a %d px window: it scrolls sideways", size.name, pageWidth, windowWidth)
		}
		if evalJS[bool](p, `(() => { const el = document.querySelector(".skip"); if (!el) return false; const r = el.getBoundingClientRect(); return r.width > 1 && r.height > 1 && r.bottom > 0 && r.right > 0; })()`) {
			t.Logf("note: the \"Skip to content\" link is visible without focus")
		}
		p.Report()
	}
}
