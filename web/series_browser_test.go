package web_test

// The series dialog in headless Chromium: from a free time's booking
// dialog, a weekly series of six sessions; the week whose time is booked
// already is listed apart with its nearest free times, one of which is
// ticked instead; booking makes the six sessions in one go, each marked
// on the day grid with its place in the series. axe finds nothing
// serious in the dialog.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/testkit"
)

func TestSeriesBrowserBookSixWeeks(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	start := c.Next(time.Wednesday, 10, 0)
	third := start.AddDate(0, 0, 14)
	a.bookDirect(t, c, c.Type0(), sp.ID, third, "Someone Else")
	day := start.In(c.Loc).Format(time.DateOnly)
	s := startBrowser(t, "series", 1280, 1400)
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
	if !s.Until(stafferWait, gridLiveIn) {
		t.Fatalf("the day grid's stream never sent its first state\n%s", s.snapshot())
	}
	s.Do(stafferWait, "open the series dialog",
		chromedp.Click(chromedp.CSS(freeCell(sp.ID, start))),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] #desk-name`)),
		chromedp.SendKeys(chromedp.CSS(`#desk-name`), "Series Patient"),
		chromedp.SendKeys(chromedp.CSS(`#desk-email`), "series@example.org"),
		chromedp.Click(chromedp.CSS(`[data-testid="series-open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-dialog"] #series-count`)),
	)
	if got := evalJS[string](s, `document.querySelector("#series-name").value`); got != "Series Patient" {
		t.Errorf("the series dialog's name is %q, want what was typed", got)
	}
	testkit.WaitFor(t, stafferWait, "the booking dialog's hold to go", func() bool { return len(a.deskHolds(t, c.ID)) == 0 })
	s.Do(stafferWait, "show the times",
		chromedp.Click(chromedp.CSS(`[data-testid="series-plan"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-free"]`)),
	)
	if n := evalJS[int](s, `document.querySelectorAll('[data-testid="series-free"] input[name=starts]:checked').length`); n != 5 {
		t.Errorf("%d free sessions ticked, want 5\n%s", n, s.snapshot())
	}
	alt := evalJS[string](s, `(document.querySelector('[data-testid="series-alternatives"] input[name=starts]') || {}).value || ""`)
	if want := third.Add(-30 * time.Minute).UTC().Format(time.RFC3339); alt != want {
		t.Errorf("the booked week's first alternative is %q, want %s (09:30, the nearest)", alt, want)
	}
	if bad := axeSerious(t, s); len(bad) > 0 {
		t.Errorf("axe, the series dialog: %v", bad)
	}
	s.Do(stafferWait, "tick the alternative and book",
		chromedp.Click(chromedp.CSS(`[data-testid="series-alternatives"] input[name=starts]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="series-book"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="desk-booked"]`)),
	)
	if got := evalJS[string](s, `document.querySelector('[data-testid="desk-booked"]').innerText`); !strings.Contains(got, "6") {
		t.Errorf("the booked message %q does not say 6 sessions", got)
	}
	var n, positions int
	err := a.Pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT series_position) FROM bookings
		WHERE clinic_id = $1 AND patient_name = 'Series Patient' AND status = 'confirmed' AND series_id IS NOT NULL`, c.ID).Scan(&n, &positions)
	if err != nil || n != 6 || positions != 6 {
		t.Fatalf("%d sessions (%d places) booked, want 6 in one series (%v)", n, positions, err)
	}
	var alternative int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND patient_name = 'Series Patient'
		AND slot_start = $2`, c.ID, third.Add(-30*time.Minute)).Scan(&alternative); err != nil || alternative != 1 {
		t.Errorf("the alternative at 09:30 booked %d times (%v), want once", alternative, err)
	}
	if !s.Until(stafferWait, fmt.Sprintf(`[...document.querySelectorAll('[data-testid="series-mark"]')].some(e => e.textContent.trim() === %q)`, "1/6")) {
		t.Errorf("the day grid does not mark the first session 1/6\n%s", s.snapshot())
	}
	// The receptionist cancels the whole course from its first session's
	// dialog: the box "also the later sessions" makes one cancel of all six.
	s.Do(stafferWait, "open the first session's dialog",
		chromedp.Click(chromedp.CSS(`button[data-testid="grid-booking"]:has([data-testid="series-mark"])`)),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog [data-testid="cancel-later"]`)),
	)
	if bad := axeSerious(t, s); len(bad) > 0 {
		t.Errorf("axe, the session's dialog: %v", bad)
	}
	s.Do(stafferWait, "cancel it and the later ones",
		chromedp.Click(chromedp.CSS(`#desk-dialog [data-testid="cancel-later"]`)),
		chromedp.SendKeys(chromedp.CSS(`#desk-dialog [data-testid="cancel-form"] input[name="reason"]`), "course ended early"),
		chromedp.Click(chromedp.CSS(`#desk-dialog [data-testid="cancel-form"] button[type="submit"]`)),
	)
	if !s.Until(stafferWait, `document.body.innerText.includes("Cancelled 6 sessions of the series of Series Patient.")`) {
		t.Errorf("the day grid does not say the six sessions were cancelled\n%s", s.snapshot())
	}
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings
		WHERE clinic_id = $1 AND patient_name = 'Series Patient' AND status = 'confirmed'`, c.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d sessions still booked after cancelling the course (%v), want 0", n, err)
	}
}
