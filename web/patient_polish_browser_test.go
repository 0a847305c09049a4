package web_test

// What a patient sees around a booking, in headless Chromium: a move asks
// before it moves and opens on the appointment's week; the cancel page
// survives a reload; the confirmation says where the e-mail went and
// gives the whole link; the clinic's phone and e-mail on every page; the
// week fits a desktop in one row and a phone without screens of empty
// days; an empty form shows every error; the grid passes axe with booked,
// held and free times in view.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/testkit"
)

const polishWait = 10 * time.Second

// withContactDetails gives the clinic a phone and an e-mail.
func (a *app) withContactDetails(t *testing.T, c clinic) {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE clinics SET contact_phone = '+49 30 555 0100', contact_email = 'praxis@example.org' WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
}

// openPage loads url in tab and waits for htmx.
func openPage(t *testing.T, tab *browserTab, url string, visible string) {
	t.Helper()
	tab.Do(polishWait, "open "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(visible)))
	if !tab.Until(polishWait, `typeof htmx !== "undefined"`) {
		t.Fatalf("%s: htmx never loaded", url)
	}
}

// footerContact fails unless the page's footer shows the clinic's phone
// and e-mail as links.
func footerContact(t *testing.T, tab *browserTab, what string) {
	t.Helper()
	got := evalJS[string](tab, `(() => {
		const f = document.querySelector('[data-testid="privacy-footer"]');
		const p = f && f.querySelector('a[href^="tel:"]'), m = f && f.querySelector('a[href^="mailto:"]');
		return (p ? p.getAttribute("href") : "") + " " + (m ? m.getAttribute("href") : "");
	})()`)
	if got != "tel:+49305550100 mailto:praxis@example.org" {
		t.Errorf("%s: the footer's contact links are %q", what, got)
	}
}

func TestE2EBrowserMoveAsksFirstOnTheAppointmentsWeek(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	from := c.At(15, 10, 0) // a later week than today's
	to := from.Add(3 * time.Hour)
	conf := a.bookDirect(t, c, typ, sp.ID, from, "Marie Curie")

	tab := startBrowser(t, "phone", 390, 844)
	defer tab.Report()
	tab.Do(polishWait, "phone viewport", chromedp.EmulateViewport(390, 844))
	openPage(t, tab, a.URL+"/manage/"+conf.ManageToken+"/reschedule", `[data-testid="week-grid"]`)
	// The appointment's week, its time marked, said at the top.
	dates := evalJS[string](tab, `Array.from(document.querySelectorAll(".day")).map(d => d.dataset.date).join(" ")`)
	if !strings.Contains(dates, c.Week(from)) {
		t.Errorf("the move page opens on the days %s, not on the appointment's %s", dates, c.Week(from))
	}
	current := grid.CellID(uuid.Nil, from)
	if st := evalJS[string](tab, `(document.getElementById("`+current+`") || {dataset: {}}).dataset.state || ""`); st != "current" {
		t.Errorf("the appointment's own time is %q on the grid, want it marked current", st)
	}
	if top := evalJS[int](tab, `Math.round(document.querySelector('[data-testid="current-time"]').getBoundingClientRect().top)`); top < 0 || top > 300 {
		t.Errorf("on a phone \"Your current time\" is %d px down the page, want it near the top", top)
	}
	tab.Shot("move-phone-opened")

	// A tap asks; nothing moves until the patient says yes.
	target := grid.CellID(uuid.Nil, to)
	tab.Do(polishWait, "tap a new time",
		chromedp.Click(chromedp.CSS("li#"+target+" button")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="move-confirm"]`)),
	)
	if got, want := innerText(tab, `[data-testid="move-from"]`), from.In(c.Loc).Format("Monday 2 January 2006, 15:04"); !strings.Contains(got, want) {
		t.Errorf("the question's old time is %q, want %q", got, want)
	}
	if got, want := innerText(tab, `[data-testid="move-to"]`), to.In(c.Loc).Format("Monday 2 January 2006, 15:04"); !strings.Contains(got, want) {
		t.Errorf("the question's new time is %q, want %q", got, want)
	}
	if b := a.booking(t, conf.Booking.ID); !b.Start.Equal(from) || b.Status != "confirmed" {
		t.Fatalf("asking moved the booking: %v %s", b.Start, b.Status)
	}
	tab.Shot("move-phone-asks")
	tab.Do(polishWait, "say yes",
		chromedp.Click(chromedp.CSS(`[data-testid="move-yes"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="summary"]`)),
	)
	if got := innerText(tab, `[data-testid="summary"]`); !strings.Contains(got, to.In(c.Loc).Format("15:04")) {
		t.Errorf("after yes the booking reads:\n%s", got)
	}
}

func TestE2EBrowserCancelPageSurvivesReloadAndOffersBookingAgain(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	a.withContactDetails(t, c)
	conf := a.bookDirect(t, c, c.Type0(), c.Specialists[0].ID, c.At(4, 11, 0), "Lise Meitner")
	manage := a.URL + "/manage/" + conf.ManageToken

	tab := startBrowser(t, "patient", 1280, 900)
	defer tab.Report()
	openPage(t, tab, manage, `[data-testid="summary"]`)
	footerContact(t, tab, "the manage page")
	tab.Do(polishWait, "ask to cancel", chromedp.Click(chromedp.CSS(`a[data-testid="cancel-link"]`)), chromedp.WaitVisible(chromedp.CSS(`button.danger`)))
	footerContact(t, tab, "the cancel page")
	tab.Do(polishWait, "reload the question", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`button.danger`)))
	if h := innerText(tab, "h1"); h != "Cancel this appointment?" {
		t.Errorf("reloading the cancel page shows %q", h)
	}
	tab.Do(polishWait, "cancel",
		chromedp.Click(chromedp.CSS(`button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="summary"][data-status="cancelled"]`)),
	)
	again := evalJS[string](tab, `(document.querySelector('[data-testid="book-again"]') || {}).pathname || ""`)
	if again != c.BookPath(c.Type0()) {
		t.Errorf("after the cancel the way to book again is %q, want %q", again, c.BookPath(c.Type0()))
	}
	// The cancel page's address, opened again after the cancel.
	openPage(t, tab, manage+"/cancel", `[data-testid="summary"]`)
	if h := innerText(tab, "h1"); h == "Not found" || evalJS[string](tab, `document.querySelector('[data-testid="summary"]').dataset.status`) != "cancelled" {
		t.Errorf("the cancel address after the cancel shows %q", h)
	}
}

func TestE2EBrowserConfirmationSaysMailedWithTheWholeLink(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	a.withContactDetails(t, c)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(3, 9, 30)
	cellID := grid.CellID(sp.ID, start)

	tab := startBrowser(t, "patient", 1280, 900)
	defer tab.Report()
	openPage(t, tab, a.URL+"/c/"+c.Slug, `[data-testid="types"]`)
	footerContact(t, tab, "the clinic page")
	openPage(t, tab, a.URL+c.BookURL(typ, start, sp.ID), "li#"+cellID)
	footerContact(t, tab, "the booking page")
	tab.Do(polishWait, "hold, fill in, confirm",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="details-form"]`)),
		chromedp.SendKeys(chromedp.CSS("#name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
		chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)),
	)
	if got := innerText(tab, `[data-testid="mailed"]`); !strings.Contains(got, "ada@example.org") {
		t.Errorf("the confirmation says %q about the e-mail", got)
	}
	link := innerText(tab, `[data-testid="manage-link"]`)
	if want := evalJS[string](tab, `location.href`); link != want {
		t.Errorf("the manage link reads %q, want the whole address %q", link, want)
	}
	footerContact(t, tab, "the confirmation")
	tab.Shot("confirmation-mailed")
}

func TestE2EBrowserWeekFitsAndAnEmptyFormShowsEveryError(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1}) // Monday to Friday: the weekend is empty
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.Monday(10, 0)
	cellID := grid.CellID(sp.ID, start)

	desk := startBrowser(t, "desktop", 1280, 900)
	defer desk.Report()
	openPage(t, desk, a.URL+c.BookURL(typ, start, sp.ID), "li#"+cellID)
	if rows := evalJS[int](desk, `new Set(Array.from(document.querySelectorAll(".week-grid .day")).map(d => Math.round(d.getBoundingClientRect().top))).size`); rows != 1 {
		t.Errorf("on a 1280 px desktop the seven days take %d rows, want one", rows)
	}
	desk.Do(polishWait, "hold and send the form empty",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="details-form"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel .field-error`)),
	)
	errs := evalJS[string](desk, `Array.from(document.querySelectorAll("#hold-panel .has-error input")).map(i => i.id).join(" ")`)
	if errs != "name email" {
		t.Errorf("an empty form marks the fields %q, want both required ones (name email)", errs)
	}

	phone := startBrowser(t, "phone", 390, 844)
	defer phone.Report()
	phone.Do(polishWait, "phone viewport", chromedp.EmulateViewport(390, 844))
	openPage(t, phone, a.URL+c.BookURL(typ, start, sp.ID), "li#"+cellID)
	// Saturday and Sunday have no times: each is one short line.
	for _, d := range []int{5, 6} {
		date := c.Week(start.AddDate(0, 0, d))
		if h := evalJS[int](phone, `Math.round(document.querySelector('.day[data-date="`+date+`"]').getBoundingClientRect().height)`); h > 32 {
			t.Errorf("on a phone the empty day %s is %d px tall, want one short line", date, h)
		}
	}
	if w := evalJS[int](phone, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("on a phone the page is %d px wide", w)
	}
	phone.Shot("week-phone-empty-days")
}

func TestE2EBrowserPatientGridAxeCleanWithBookedHeldAndFree(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	mine, booked, held := c.At(2, 10, 0), c.At(2, 10, 30), c.At(2, 11, 0)
	a.bookDirect(t, c, typ, sp.ID, booked, "Taken Patient")
	a.holdOf(t, typ.ID, sp.ID, held, clientID())
	for _, size := range []struct {
		name string
		w, h int
	}{{"desktop-1280", 1280, 900}, {"phone-390", 390, 844}} {
		tab := startBrowser(t, size.name, size.w, size.h)
		tab.Do(polishWait, "viewport", chromedp.EmulateViewport(int64(size.w), int64(size.h)))
		openPage(t, tab, a.URL+c.BookURL(typ, mine, sp.ID), "li#"+grid.CellID(sp.ID, mine))
		if size.name == "desktop-1280" {
			tab.Do(polishWait, "hold one",
				chromedp.Click(chromedp.CSS("li#"+grid.CellID(sp.ID, mine)+" button")),
				chromedp.WaitVisible(cellIn(grid.CellID(sp.ID, mine), "mine")),
			)
		}
		for id, state := range map[string]string{grid.CellID(sp.ID, booked): "taken", grid.CellID(sp.ID, held): "held"} {
			tab.Do(polishWait, "see the "+state+" time", chromedp.WaitVisible(cellIn(id, state)))
		}
		if n := evalJS[int](tab, `document.querySelectorAll('li[data-state="free"]').length`); n == 0 {
			t.Fatalf("%s: no free time in view", size.name)
		}
		if bad := axeSerious(t, tab); len(bad) > 0 {
			t.Errorf("%s: axe finds serious problems with booked, held and free times in view: %v", size.name, bad)
		}
		tab.Report()
	}
}
