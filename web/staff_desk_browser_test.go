package web_test

// The desk dialog in headless Chromium (see browser_test.go): a free
// time's button on the day grid opens the dialog, which holds the time (an online patient
// is refused it); Escape closes it and lets the time go; opened again,
// filled in and submitted, it books exactly that time and closes. The
// dialog does all of this before htmx has settled it.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/clinic/booking/internal/testkit"
	"github.com/google/uuid"
)

// freeCell is the day grid's button of sp's free time at start.
func freeCell(sp uuid.UUID, start time.Time) string {
	return fmt.Sprintf(`button.cell.free[data-specialist=%q][data-start=%q]`, sp.String(), start.UTC().Format(time.RFC3339))
}

func TestDeskBrowserBookByClicking(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	start := c.Next(time.Wednesday, 10, 0)
	day := start.In(c.Loc).Format(time.DateOnly)
	s := startBrowser(t, "desk", 1280, 1000)
	defer s.Report()
	s.RecordLive()

	s.Do(stafferWait, "sign in",
		chromedp.Navigate(a.URL+"/staff/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), c.Admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="daygrid"]`)),
		chromedp.Navigate(a.URL+"/staff/day?date="+day),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="daygrid"]`)),
	)
	if !s.Until(stafferWait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded on the day grid")
	}
	// The stream's first state replaces the whole grid: the cell is
	// clicked once it is in, not while it lands.
	if !s.Until(stafferWait, gridLiveIn) {
		t.Fatalf("the day grid's stream never sent its first state\n%s", s.snapshot())
	}
	// htmx settles what it swaps in a timer later; made long here, every
	// step below acts on a dialog that has not settled, as a quick hand
	// (or a busy machine) can: the dialog must work from the moment it
	// shows. Without app.js processing the dialog as it is swapped in,
	// Escape does nothing.
	evalJS[bool](s, `(htmx.config.defaultSettleDelay = 2000, true)`)
	cell := freeCell(sp.ID, start)
	s.Do(stafferWait, "open the dialog",
		chromedp.Click(chromedp.CSS(cell)),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] #desk-name`)),
	)
	if !evalJS[bool](s, `document.querySelector("#desk-dialog dialog").contains(document.activeElement)`) {
		t.Error("the opened dialog does not have the focus")
	}
	if got := evalJS[string](s, `document.querySelector('[data-testid="desk-time"]').innerText`); !strings.Contains(got, "10:00") {
		t.Errorf("the dialog's time reads %q", got)
	}
	patient := clientID()
	wantError(t, a.postHold(t, c.Types[0].ID, sp.ID, start, patient), http.StatusLocked, "SLOT_HELD", "")

	s.Do(stafferWait, "press Escape", chromedp.KeyEvent("\u001b"))
	if !s.Until(stafferWait, `document.getElementById("desk-dialog").innerHTML.trim() === ""`) {
		t.Fatalf("Escape did not close the dialog\n%s", s.snapshot())
	}
	testkit.WaitFor(t, stafferWait, "the desk hold to go", func() bool { return len(a.deskHolds(t, c.ID)) == 0 })
	// The grid shows the patient's hold and then its release before the
	// cell is clicked again: a live update landing during the click would
	// replace the node under it.
	h := a.holdOf(t, c.Types[0].ID, sp.ID, start, patient)
	if !s.Until(stafferWait, `document.querySelector(".block.held") !== null`) {
		t.Fatalf("the patient's hold never showed\n%s", s.snapshot())
	}
	a.release(t, h, patient)
	if !s.Until(stafferWait, `document.querySelector(".block.held") === null && document.querySelector(`+fmt.Sprintf("%q", cell)+`) !== null`) {
		t.Fatalf("the released hold stayed on the grid\n%s", s.snapshot())
	}

	s.Do(stafferWait, "book from the dialog",
		chromedp.Click(chromedp.CSS(cell)),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] #desk-name`)),
		chromedp.SendKeys(chromedp.CSS(`#desk-name`), "Browser Patient"),
		chromedp.SendKeys(chromedp.CSS(`#desk-email`), "browser@example.org"),
		chromedp.Click(chromedp.CSS(`#desk-dialog button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="desk-booked"]`)),
	)
	if n := evalJS[int](s, `document.querySelectorAll("#desk-dialog dialog").length`); n != 0 {
		t.Errorf("%d dialogs left open after booking", n)
	}
	// The grid shows the booking in place of the free time, by itself.
	if !s.Until(stafferWait, fmt.Sprintf(`document.querySelector(%q) === null && document.querySelectorAll("button.block.booking").length === 1`, cell)) {
		t.Errorf("the day grid does not show the new booking\n%s", s.snapshot())
	}
	rows := a.bookingsOf(t, c, start.Add(-time.Hour), start.Add(time.Hour))
	if len(rows) != 1 || !rows[0].SlotStart.Equal(start) || rows[0].SpecialistID != sp.ID || rows[0].PatientName != "Browser Patient" {
		t.Fatalf("bookings %+v, want Browser Patient at %s with %s", rows, start, sp.Name)
	}
}
