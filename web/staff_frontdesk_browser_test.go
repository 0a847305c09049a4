package web_test

// The front desk at a receptionist's 1440 px in headless Chromium (see
// browser_test.go): signing in lands on the day plan; a caller known to
// the clinic is found by typing their name; a new caller is booked with a
// name and a phone number only; the "Booked" message shows in the
// viewport although the page is scrolled; the week plan fits the screen
// with every column and name whole; axe finds nothing serious with booked,
// held and free times in view.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/booking"
)

// inViewport says, in JavaScript, whether the element sel lies wholly in
// the window as it is scrolled.
func inViewport(sel string) string {
	return `(() => { const e = document.querySelector(` + jsString(sel) + `); if (!e) return false;
		const r = e.getBoundingClientRect();
		return r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; })()`
}

func TestFrontDeskBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.deskClinic(t)
	sp1, sp2 := c.Specialists[0], c.Specialists[1]
	day := c.Next(time.Wednesday, 9, 0)
	date := day.Format(time.DateOnly)
	a.bookAs(t, c, c.Type0(), sp1.ID, day, booking.Patient{Name: "Ada Lovelace", Email: "ada@example.org", Phone: "+49 30 1234567"})
	a.bookAs(t, c, c.Types[1], sp2.ID, day.Add(time.Hour), booking.Patient{Name: "Maximiliane Schwarzenberger", Phone: "+49 40 555000"})
	a.holdOf(t, c.Type0().ID, sp2.ID, day.Add(3*time.Hour), clientID())

	s := startBrowser(t, "frontdesk", 1440, 900)
	defer s.Report()
	s.RecordLive()
	signInBrowser(s, a, a.newAccount(t, c.ID, "reception"))
	if path := evalJS[string](s, `location.pathname`); path != "/staff/day" {
		t.Errorf("signing in lands on %q, want the day plan", path)
	}
	if !s.Until(stafferWait, `document.querySelector('[data-testid="daygrid"]') !== null`) {
		t.Fatalf("signing in does not show the day plan\n%s", s.snapshot())
	}

	openGrid(t, s, a, c, "/staff/day?date="+date)
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the day plan with booked, held and free times: %s", strings.Join(v, "; "))
	}
	frontDeskLookUp(t, s, freeCell(sp1.ID, day.Add(90*time.Minute)))
	// The page scrolled to its end, as after looking at the late rows:
	// the message must still be where the eye is.
	frontDeskCaller(t, a, c, s, freeCell(sp1.ID, day.Add(7*time.Hour+30*time.Minute)))

	openGrid(t, s, a, c, "/staff/week?specialist="+sp2.ID.String()+"&date="+date)
	frontDeskWeekFits(t, s)
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the week plan: %s", strings.Join(v, "; "))
	}
	s.Do(stafferWait, "open the appointment list", chromedp.Navigate(a.URL+"/staff?date="+date), chromedp.WaitVisible(chromedp.CSS(`[data-testid="phone-booking"]`)))
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the appointment list: %s", strings.Join(v, "; "))
	}
}

// frontDeskLookUp: typing part of a known patient's name offers them;
// choosing them fills the dialog; the booking is made and the dialog
// closes.
func frontDeskLookUp(t *testing.T, s *browserTab, cell string) {
	t.Helper()
	s.Do(stafferWait, "open the dialog and type a name",
		chromedp.Click(chromedp.CSS(cell)),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] #desk-name`)),
		chromedp.SendKeys(chromedp.CSS(`#desk-name`), "lovel"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="desk-match"]`)),
	)
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the dialog with the look-up open: %s", strings.Join(v, "; "))
	}
	s.Do(stafferWait, "choose the patient", chromedp.Click(chromedp.CSS(`[data-testid="desk-match"]`)))
	for id, want := range map[string]string{"desk-name": "Ada Lovelace", "desk-phone": "+49 30 1234567", "desk-email": "ada@example.org"} {
		if got := evalJS[string](s, `document.getElementById("`+id+`").value`); got != want {
			t.Errorf("#%s reads %q after choosing, want %q", id, got, want)
		}
	}
	s.Do(stafferWait, "book", chromedp.Click(chromedp.CSS(`#desk-dialog button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="desk-booked"]`)))
	s.Do(stafferWait, "close the message", chromedp.Click(chromedp.CSS(`[data-booked-close]`)))
	if !s.Until(stafferWait, `document.querySelector('[data-testid="desk-booked"]') === null`) {
		t.Error("the booked message does not close")
	}
}

// frontDeskCaller: a caller with a name and a phone number and no e-mail
// is booked, from a late row with the page scrolled to its end; the
// message shows in the viewport.
func frontDeskCaller(t *testing.T, a *app, c clinic, s *browserTab, cell string) {
	t.Helper()
	if !s.Until(stafferWait, `document.querySelector(`+jsString(cell)+`) !== null`) {
		t.Fatalf("the late free time is not on the grid\n%s", s.snapshot())
	}
	s.Do(stafferWait, "scroll to the late row and open it",
		chromedp.ScrollIntoView(chromedp.CSS(cell)),
		chromedp.Click(chromedp.CSS(cell)),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] #desk-name`)),
		chromedp.SendKeys(chromedp.CSS(`#desk-name`), "Phone Caller"),
		chromedp.SendKeys(chromedp.CSS(`#desk-phone`), "030 7654321"),
	)
	evalJS[bool](s, `(window.scrollTo(0, document.documentElement.scrollHeight), true)`)
	s.Do(stafferWait, "book without an e-mail",
		chromedp.Click(chromedp.CSS(`#desk-dialog button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="desk-booked"]`)),
	)
	if msg := evalJS[string](s, `document.querySelector('[data-testid="desk-booked"]').innerText`); !strings.Contains(msg, "Booked Phone Caller") {
		t.Errorf("the message reads %q", msg)
	}
	if evalJS[float64](s, `scrollY`) == 0 {
		t.Error("the page is not scrolled: the check below proves nothing")
	}
	if !evalJS[bool](s, inViewport(`[data-testid="desk-booked"]`)) {
		t.Errorf("the booked message is out of view: %s", evalJS[string](s, `JSON.stringify(document.querySelector('[data-testid="desk-booked"]').getBoundingClientRect())`))
	}
	var email string
	if err := a.Pool.QueryRow(context.Background(), `SELECT patient_email FROM bookings WHERE clinic_id = $1 AND patient_name = 'Phone Caller'`, c.ID).Scan(&email); err != nil || email != "" {
		t.Errorf("the caller's booking: e-mail %q, %v", email, err)
	}
}

// frontDeskWeekFits: at 1440 px the week's seven days fit, nothing
// scrolls sideways and no patient's name is cut.
func frontDeskWeekFits(t *testing.T, s *browserTab) {
	t.Helper()
	if w := evalJS[int](s, `document.documentElement.scrollWidth`); w > 1440 {
		t.Errorf("the week plan is %d px wide at 1440", w)
	}
	if over := evalJS[int](s, `(() => { const e = document.querySelector(".daygrid-scroll"); return e.scrollWidth - e.clientWidth; })()`); over > 1 {
		t.Errorf("the week plan scrolls sideways by %d px inside its frame", over)
	}
	if right := evalJS[float64](s, `[...document.querySelectorAll(".grid-head")].pop().getBoundingClientRect().right`); right > 1440 {
		t.Errorf("the last day's column ends at %.0f px", right)
	}
	if cut := evalJS[[]string](s, `[...document.querySelectorAll(".daygrid .block")].filter(b => b.scrollHeight > b.clientHeight + 1 || b.scrollWidth > b.clientWidth + 1).map(b => b.innerText + " " + b.scrollWidth + "/" + b.clientWidth + " " + b.scrollHeight + "/" + b.clientHeight)`); len(cut) > 0 {
		t.Errorf("blocks with their text cut: %q", cut)
	}
	if n := evalJS[int](s, `document.querySelectorAll(".daygrid .block.booking").length`); n == 0 {
		t.Error("the week shows no booking: the check above proves nothing")
	}
}

// TestFrontDeskScreenshot writes docs/screens/front-desk.png, the day
// plan with the booking dialog open at 1440 px, when CLINIC_DOCS_SHOT=1
// (run by hand to refresh it).
func TestFrontDeskScreenshot(t *testing.T) {
	if os.Getenv("CLINIC_DOCS_SHOT") != "1" {
		t.Skip("CLINIC_DOCS_SHOT=1 refreshes docs/screens/front-desk.png")
	}
	needChromium(t)
	a := newApp(t)
	c := a.deskClinic(t)
	day := c.Next(time.Wednesday, 9, 0)
	for i, p := range []booking.Patient{{Name: "Marta Schulz", Phone: "+49 30 1234567"}, {Name: "Tobias Keller", Email: "tobias@example.org"}, {Name: "Ines Roth", Phone: "0171 555 0101"}} {
		a.bookAs(t, c, c.Types[i%2], c.Specialists[i%2].ID, day.Add(time.Duration(i)*90*time.Minute), p)
	}
	a.holdOf(t, c.Type0().ID, c.Specialists[1].ID, day.Add(5*time.Hour), clientID())
	ctx := context.Background()
	for i, name := range []string{"Dr. Anna Weber", "Dr. Jonas Brandt"} {
		if _, err := a.Pool.Exec(ctx, `UPDATE specialists SET name = $1 WHERE id = $2`, name, c.Specialists[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE clinics SET name = 'Praxis am Park' WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	s := startBrowser(t, "shot", 1440, 900)
	defer s.Report()
	s.RecordLive()
	signInBrowser(s, a, c.Admin)
	openGrid(t, s, a, c, "/staff/day?date="+day.Format(time.DateOnly))
	s.Do(stafferWait, "open the dialog",
		chromedp.Click(chromedp.CSS(freeCell(c.Specialists[0].ID, day.Add(4*time.Hour)))),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] #desk-name`)),
		chromedp.SendKeys(chromedp.CSS(`#desk-name`), "Mart"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="desk-match"]`)),
	)
	png, err := chromedp.Run(s.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join("..", "docs", "screens"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "screens", "front-desk.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
