package web_test

// The day grid in headless Chromium (see browser_test.go): bookings sit in
// their specialists' columns at their rows on the page; a hold made online
// shows hatched and goes on release, and a booking made online appears in
// place, without a reload; the arrow keys move between times and
// bookings; axe finds nothing serious or critical on the day and week
// views, at 1280 px and at a 1024 px tablet's width.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// signInBrowser signs acc in through the form.
func signInBrowser(b *browserTab, a *app, acc account) {
	b.t.Helper()
	b.Do(stafferWait, "sign in",
		chromedp.Navigate(a.URL+"/staff/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), acc.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.staff-head`)),
	)
}

// openGrid opens a grid page and waits for its scripts and its stream,
// and for the stream's first state, which replaces the grid the page came
// with (b must RecordLive): what the test then focuses or reads is not
// replaced under it.
func openGrid(t *testing.T, b *browserTab, a *app, c clinic, path string) {
	t.Helper()
	b.Do(stafferWait, "open "+path, chromedp.Navigate(a.URL+path), chromedp.WaitVisible(chromedp.CSS(`.daygrid`)))
	if !b.Until(stafferWait, `typeof htmx !== "undefined" && document.querySelector(".daygrid .grid-time").style.gridRow !== ""`) {
		t.Fatalf("the grid was never laid out\n%s", b.snapshot())
	}
	waitForStream(t, a, "staff:"+c.ID.String(), stafferWait)
	if !b.Until(stafferWait, gridLiveIn) {
		t.Fatalf("the grid's stream never sent its first state\n%s", b.snapshot())
	}
}

// blockAt says, in JavaScript, whether the booking block of id lies on the
// row labelled hhmm and under the column headed name, on the page.
func blockAt(id uuid.UUID, hhmm, name string) string {
	return fmt.Sprintf(`(() => {
		const b = document.querySelector('button.block.booking[data-booking="%s"]');
		const row = [...document.querySelectorAll(".grid-time")].find(e => e.textContent.trim() === %q);
		const head = [...document.querySelectorAll(".grid-head")].find(e => e.textContent.includes(%q));
		if (!b || !row || !head) return false;
		const r = b.getBoundingClientRect(), l = row.getBoundingClientRect(), h = head.getBoundingClientRect();
		const mid = (r.left + r.right) / 2;
		return Math.abs(r.top - l.top) < 4 && mid > h.left && mid < h.right && r.height > 10;
	})()`, id, hhmm, name)
}

// axeSerious runs axe-core on the page and returns its serious and
// critical violations.
func axeSerious(t *testing.T, b *browserTab) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core (npm install, make static): %v", err)
	}
	evalJS[bool](b, string(src)+";true")
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	type result struct {
		Passes int      `json:"passes"`
		Bad    []string `json:"bad"`
	}
	res, err := chromedp.Run(ctx, chromedp.Evaluate[result](`axe.run(document).then(r => ({
		passes: r.passes.length,
		bad: r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
			.map(v => v.id + ": " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")),
	}))`, chromedp.EvalAwaitPromise))
	if err != nil || res.Passes == 0 {
		t.Fatalf("axe did not run: %v (%d rules passed)", err, res.Passes)
	}
	out := res.Bad
	return out
}

func TestStaffDayGridBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t, withOptions(program.Options{TrustedProxies: loopbackProxy}))
	c := a.deskClinic(t)
	sp1, sp2 := c.Specialists[0], c.Specialists[1]
	day := c.Next(time.Wednesday, 9, 0)
	date := day.Format(time.DateOnly)
	b1 := a.bookDirect(t, c, c.Type0(), sp1.ID, day, "Ada Patient")
	b2 := a.bookDirect(t, c, c.Type0(), sp1.ID, day.Add(2*time.Hour), "Ben Patient")
	b3 := a.bookAs(t, c, c.Type0(), sp2.ID, day, booking.Patient{Name: "Cleo Patient", Email: "cleo@example.org"})
	s := startBrowser(t, "grid", 1280, 1000)
	defer s.Report()
	s.RecordLive()
	signInBrowser(s, a, a.newAccount(t, c.ID, "reception"))
	openGrid(t, s, a, c, "/staff/day?date="+date)

	for _, w := range []struct {
		id         uuid.UUID
		hhmm, name string
	}{{b1.Booking.ID, "09:00", sp1.Name}, {b2.Booking.ID, "11:00", sp1.Name}, {b3.Booking.ID, "09:00", sp2.Name}} {
		if !evalJS[bool](s, blockAt(w.id, w.hhmm, w.name)) {
			t.Errorf("the booking at %s with %s is not on its row and column", w.hhmm, w.name)
		}
	}
	if got := evalJS[string](s, `getComputedStyle(document.querySelector('[data-booking="`+b2.Booking.ID.String()+`"]')).gridRowStart`); got != "6" {
		t.Errorf("the 11:00 block starts at grid row %q, want 6", got)
	}
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the day view: %s", strings.Join(v, "; "))
	}
	gridKeyboard(t, s)
	gridLiveOnline(t, a, c, s, day)

	openGrid(t, s, a, c, "/staff/week?specialist="+sp1.ID.String()+"&date="+date)
	if n := evalJS[int](s, `document.querySelectorAll('[data-testid="grid-col"]').length`); n != 7 {
		t.Errorf("the week view has %d columns", n)
	}
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the week view: %s", strings.Join(v, "; "))
	}
	gridTablet(t, a, c, s, date)
}

// gridKeyboard: the grid is one tab stop; the arrow keys move down a
// column and across to the next.
func gridKeyboard(t *testing.T, s *browserTab) {
	t.Helper()
	if n := evalJS[int](s, `document.querySelectorAll('.daygrid [tabindex="0"]').length`); n != 1 {
		t.Errorf("the grid has %d tab stops, want 1", n)
	}
	const active = `(() => { const e = document.activeElement; return (e.dataset.gc || "") + "/" + (e.dataset.gr || ""); })()`
	s.Do(stafferWait, "focus the first free time", chromedp.Focus(chromedp.CSS(`.daygrid [tabindex="0"]`)))
	start := evalJS[string](s, active)
	s.Do(stafferWait, "press down", chromedp.KeyEvent(kb.ArrowDown))
	down := evalJS[string](s, active)
	s.Do(stafferWait, "press right", chromedp.KeyEvent(kb.ArrowRight))
	right := evalJS[string](s, active)
	var c0, r0, c1, r1, c2, r2 int
	fmt.Sscanf(start, "%d/%d", &c0, &r0)
	fmt.Sscanf(down, "%d/%d", &c1, &r1)
	fmt.Sscanf(right, "%d/%d", &c2, &r2)
	if c1 != c0 || r1 <= r0 || c2 != c0+1 {
		t.Errorf("focus went %s, then %s (down), then %s (right)", start, down, right)
	}
	if n := evalJS[int](s, `document.querySelectorAll('.daygrid [tabindex="0"]').length`); n != 1 {
		t.Errorf("after moving, the grid has %d tab stops", n)
	}
}

// gridLiveOnline: a patient holds 14:00 with the second specialist online:
// the open grid shows it hatched, then not once released; booked, it is a
// block at its row, all without a reload.
func gridLiveOnline(t *testing.T, a *app, c clinic, s *browserTab, day time.Time) {
	t.Helper()
	sp := c.Specialists[1]
	start := day.Add(5 * time.Hour)
	evalJS[bool](s, `(window.__noReload = true)`)
	client := clientID()
	h := a.holdOf(t, c.Type0().ID, sp.ID, start, client)
	held := `document.querySelector('.block.held[data-gc="3"][data-gr="12"]')`
	if !s.Until(stafferWait, held+` !== null`) {
		t.Fatalf("the online hold never showed\n%s", s.snapshot())
	}
	if bg := evalJS[string](s, `getComputedStyle(`+held+`).backgroundImage`); !strings.Contains(bg, "repeating-linear-gradient") {
		t.Errorf("the hold is not hatched: %q", bg)
	}
	a.release(t, h, client)
	if !s.Until(stafferWait, held+` === null`) {
		t.Fatal("the released hold stayed on the grid")
	}
	// Another patient, on another network, takes the released time.
	other := clientID()
	h = a.holdFrom(t, c.Type0().ID, sp.ID, start, other, "198.51.100.32")
	bk := a.book(t, c.Type0().ID, h, other)
	if !s.Until(stafferWait, blockAt(bk.Appointment.ID, "14:00", sp.Name)) {
		t.Fatalf("the online booking never appeared in place\n%s", s.snapshot())
	}
	if !evalJS[bool](s, `window.__noReload === true`) {
		t.Error("the page was reloaded")
	}
}

// gridTablet: at 1024 px the page does not scroll sideways (the grid
// scrolls inside itself) and the time column stays put.
func gridTablet(t *testing.T, a *app, c clinic, s *browserTab, date string) {
	t.Helper()
	s.Do(stafferWait, "tablet width", chromedp.EmulateViewport(1024, 768))
	openGrid(t, s, a, c, "/staff/day?date="+date)
	if w := evalJS[int](s, `document.documentElement.scrollWidth`); w > 1024 {
		t.Errorf("the page is %d px wide at 1024", w)
	}
	if pos := evalJS[string](s, `getComputedStyle(document.querySelector(".grid-time")).position`); pos != "sticky" {
		t.Errorf("the time column is %s, not sticky", pos)
	}
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the day view at 1024 px: %s", strings.Join(v, "; "))
	}
}

// TestStaffDayGridScreenshot writes docs/staff-day.png, a realistic day at
// 1280 px, when CLINIC_DOCS_SHOT=1 (it is run by hand to refresh it).
func TestStaffDayGridScreenshot(t *testing.T) {
	if os.Getenv("CLINIC_DOCS_SHOT") != "1" {
		t.Skip("CLINIC_DOCS_SHOT=1 refreshes docs/staff-day.png")
	}
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 4, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Check-up", DurationMin: 60, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}})
	ctx := context.Background()
	names := []string{"Dr. Anna Weber", "Dr. Jonas Brandt", "Dr. Lea Fischer", "Dr. Emre Kaya"}
	for i, sp := range c.Specialists {
		if _, err := a.Pool.Exec(ctx, `UPDATE specialists SET name = $1 WHERE id = $2`, names[i], sp.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Pool.Exec(ctx, `UPDATE clinics SET name = 'Praxis am Park' WHERE id = $1`, c.ID); err != nil {
		t.Fatal(err)
	}
	day := c.Next(time.Wednesday, 9, 0)
	utcDay := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	q := db.New(a.Pool)
	if _, err := q.OverrideInsert(ctx, db.OverrideInsertParams{ClinicID: c.ID, SpecialistID: c.Specialists[2].ID, Day: utcDay, StartMin: 12 * 60, EndMin: 17 * 60, Note: "Team meeting"}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.OverrideInsert(ctx, db.OverrideInsertParams{ClinicID: c.ID, SpecialistID: c.Specialists[3].ID, Day: utcDay, Closed: true, Note: "Training"}); err != nil {
		t.Fatal(err)
	}
	consult, checkup := c.Types[0], c.Types[1]
	for _, b := range []struct {
		sp      int
		typ     db.AppointmentType
		at      time.Duration
		name    string
		arrived bool
	}{
		{0, consult, 0, "Marta Schulz", true}, {0, checkup, 90 * time.Minute, "Tobias Keller", false},
		{0, consult, 4 * time.Hour, "Ines Roth", false}, {1, checkup, 30 * time.Minute, "Paul Lang", true},
		{1, consult, 3 * time.Hour, "Sofia Berger", false}, {1, consult, 6 * time.Hour, "Karl Vogt", false},
		{2, checkup, 3*time.Hour + 30*time.Minute, "Lena Hoffmann", false}, {2, consult, 5 * time.Hour, "David Meyer", false},
	} {
		conf := a.bookAs(t, c, b.typ, c.Specialists[b.sp].ID, day.Add(b.at), booking.Patient{Name: b.name, Email: strings.ToLower(strings.ReplaceAll(b.name, " ", ".")) + "@example.org"})
		if b.arrived {
			if _, err := a.Pool.Exec(ctx, `UPDATE bookings SET attendance = 'arrived' WHERE id = $1`, conf.Booking.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	a.holdOf(t, consult.ID, c.Specialists[1].ID, day.Add(2*time.Hour), clientID())
	s := startBrowser(t, "shot", 1280, 900)
	defer s.Report()
	s.RecordLive()
	signInBrowser(s, a, c.Admin)
	openGrid(t, s, a, c, "/staff/day?date="+day.Format(time.DateOnly))
	png, err := chromedp.Run(s.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "staff-day.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
