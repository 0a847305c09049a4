package web_test

// An end-to-end test of the staff side in headless Chromium (see
// browser_test.go): a staff member signs in and closes tomorrow while a
// patient's grid is open; the patient's grid drops tomorrow's slots without
// a reload; a patient books through the API and the open staff calendar
// shows it without a reload, and the staff member cancels it from there.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/testkit"
)

// waitForStream waits until the app has an open HTML stream of scope (the
// browser's live page connected), then lets it settle into its view.
func waitForStream(t *testing.T, a *app, scope string, d time.Duration) {
	t.Helper()
	re := regexp.MustCompile(`clinic_streams_open\{[^}]*scope="` + regexp.QuoteMeta(scope) + `"[^}]*\} (\d+)`)
	testkit.WaitFor(t, d, "a live stream of "+scope, func() bool {
		m := re.FindStringSubmatch(a.do(t, "GET", "/metrics", nil).Body)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n > 0
	})
	time.Sleep(500 * time.Millisecond)
}

// staffCalendarRun is the staff browser test's clinic, its two browsers
// and the days it works on.
type staffCalendarRun struct {
	a                 *app
	c                 clinic
	patient, staffer  *browserTab
	tomorrow          time.Time
	tomorrowS         string
	bookDay           time.Time
	bookDayS, gridURL string
}

// stafferWait is how long a step of the staff browser test may take.
const stafferWait = 15 * time.Second

// calStream is the calendar page's EventSource, in JavaScript.
const calStream = `document.querySelector("[sse-connect]")["htmx-internal-data"].sseEventSource`

// dayFree is a JavaScript count of the free cells of date on the grid.
func dayFree(date string) string {
	return fmt.Sprintf(`document.querySelectorAll('section#day-%s li[data-state="free"]').length`, date)
}

func TestStaffE2EBrowserOverrideAndLiveCalendar(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0]
	// The specialist works every day, so tomorrow has slots whatever today is.
	a.openWeekends(t, c, sp.ID)
	now := time.Now().In(c.Loc)
	r := &staffCalendarRun{a: a, c: c, tomorrow: time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, c.Loc)}
	r.tomorrowS = r.tomorrow.Format(time.DateOnly)
	r.bookDay = r.tomorrow.AddDate(0, 0, 1)
	r.bookDayS = r.bookDay.Format(time.DateOnly)
	monday := availability.DateOf(r.tomorrow, c.Loc)
	monday = monday.AddDays(-((int(monday.Weekday()) + 6) % 7))
	r.gridURL = a.URL + "/c/" + c.Slug + "/book/" + c.Types[0].ID.String() + "?week=" + monday.String() + "&specialist=" + sp.ID.String()

	r.patient = startBrowser(t, "patient", 1280, 1000)
	r.staffer = startBrowser(t, "staff", 1280, 1000)
	defer func() { r.patient.Report(); r.staffer.Report() }()

	freeBefore := r.openPatientGrid(t)
	r.closeTomorrow(t)
	r.patientGridLosesTomorrow(t, freeBefore)
	r.openCalendar(t)
	id := r.bookedShowsOnTheCalendar(t)
	r.twoUpdatesBackToBack(t)
	r.cancelFromTheLiveBlock(t, id)
}

// openPatientGrid opens the patient's grid before the change and returns
// how many of tomorrow's cells are free.
func (r *staffCalendarRun) openPatientGrid(t *testing.T) int {
	t.Helper()
	r.patient.Do(stafferWait, "open the booking grid", chromedp.Navigate(r.gridURL),
		chromedp.WaitVisible(chromedp.CSS(`section#day-`+r.tomorrowS+` li[data-state="free"]`)))
	freeBefore := evalJS[int](r.patient, dayFree(r.tomorrowS))
	if freeBefore != 16 {
		t.Fatalf("tomorrow shows %d free cells before the change, want 16 (09:00-17:00)", freeBefore)
	}
	if !r.patient.Until(stafferWait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded on the patient's page")
	}
	waitForStream(t, r.a, r.c.Types[0].ID.String(), stafferWait)
	// A cell marker: only a page that was not reloaded still carries it.
	evalJS[bool](r.patient, `(window.__noReload = true)`)
	return freeBefore
}

// closeTomorrow signs the staff member in through the form, opens the
// specialist and closes tomorrow.
func (r *staffCalendarRun) closeTomorrow(t *testing.T) {
	t.Helper()
	s := r.staffer
	s.Do(stafferWait, "sign in",
		chromedp.Navigate(r.a.URL+"/staff/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), r.c.Admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="daygrid"]`)),
	)
	s.Do(stafferWait, "open the specialist",
		chromedp.Navigate(r.a.URL+"/staff/specialists/"+r.c.Specialists[0].ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="override-form"]`)),
	)
	if !evalJS[bool](s, `document.querySelector('[data-testid="override-form"] input[name="closed"]').checked`) {
		t.Fatal("the override form is not set to 'closed all day'")
	}
	s.Do(stafferWait, "add the override",
		chromedp.SetValue(chromedp.CSS(`[data-testid="override-form"] #day`), r.tomorrowS),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="override-form"] #note`), "Team training"),
		chromedp.Click(chromedp.CSS(`[data-testid="override-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	)
	if n := evalJS[string](s, `document.querySelector("p.notice").innerText`); n != "Override added." {
		t.Fatalf("after adding the override the page says %q\n%s", n, s.snapshot())
	}
	if txt := evalJS[string](s, `document.querySelector('[data-testid="overrides"]').innerText`); !strings.Contains(txt, "closed") || !strings.Contains(txt, "Team training") {
		t.Errorf("the override list reads %q", txt)
	}
}

// patientGridLosesTomorrow: the patient's open grid loses tomorrow's free
// cells without a reload.
func (r *staffCalendarRun) patientGridLosesTomorrow(t *testing.T, freeBefore int) {
	t.Helper()
	p := r.patient
	if !p.Until(stafferWait, dayFree(r.tomorrowS)+` === 0`) {
		t.Errorf("%s after closing tomorrow, the patient's open grid still shows %d of tomorrow's cells as free (it had %d): "+
			"the live stream did not replace tomorrow's day block\n%s",
			stafferWait, evalJS[int](p, dayFree(r.tomorrowS)), freeBefore, p.snapshot())
	} else {
		txt := evalJS[string](p, `document.querySelector('section#day-`+r.tomorrowS+`').innerText`)
		cells := evalJS[int](p, `document.querySelectorAll('section#day-`+r.tomorrowS+` li.slot').length`)
		if !strings.Contains(txt, "No slots") && cells != 0 {
			t.Logf("tomorrow shows %d non-free cells: %q", cells, txt)
		}
	}
	if !evalJS[bool](p, `window.__noReload === true`) {
		t.Error("the patient's page was reloaded")
	}
	p.Shot("staff-e2e-patient-grid-after-override")
}

// openCalendar opens the staff calendar on the week of the day after
// tomorrow, and waits for its own stream.
func (r *staffCalendarRun) openCalendar(t *testing.T) {
	t.Helper()
	s := r.staffer
	s.Do(stafferWait, "open the calendar",
		chromedp.Navigate(r.a.URL+"/staff?date="+r.bookDayS),
		chromedp.WaitVisible(chromedp.CSS(`section#cal-`+r.bookDayS)),
	)
	if !s.Until(stafferWait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded on the calendar")
	}
	waitForStream(t, r.a, "staff:"+r.c.ID.String(), stafferWait)
	// The count above may be the stream of the calendar the staff member
	// left after signing in (seen still open here): wait for this page's
	// own stream, open once the server has joined it to its view.
	if !s.Until(stafferWait, calStream+`.readyState === EventSource.OPEN`) {
		t.Fatalf("the calendar's stream did not open within %s", stafferWait)
	}
	evalJS[bool](s, `(window.__noReload = true)`)
	// Record what the page's SSE connection delivers, for a failure report
	// (htmx:sseBeforeMessage: htmx:sseMessage goes to the element the swap
	// just replaced, out of the document, so it never bubbles up).
	evalJS[bool](s, `(window.__sse = [], document.addEventListener("htmx:sseBeforeMessage", e => window.__sse.push(e.detail.type)), document.addEventListener("htmx:sseError", e => window.__sse.push("ERROR")), document.addEventListener("htmx:sseOpen", e => window.__sse.push("OPEN")), true)`)
	if n := evalJS[int](s, `document.querySelectorAll('section#cal-`+r.bookDayS+` [data-testid="entry-booking"]').length`); n != 0 {
		t.Fatalf("the day already has %d bookings", n)
	}
	if txt := evalJS[string](s, `(document.querySelector('section#cal-`+r.tomorrowS+`') || {innerText: ""}).innerText`); r.bookDay.Weekday() != time.Monday && !strings.Contains(txt, "closed (Team training)") {
		t.Errorf("the calendar's tomorrow does not show the override: %q", txt)
	}
}

// entry is the selector of the booking entries of the booked day.
func (r *staffCalendarRun) entry() string {
	return `section#cal-` + r.bookDayS + ` [data-testid="entry-booking"]`
}

// bookedShowsOnTheCalendar: a patient books through the API, and the
// booking appears in the right day of the open calendar, without a
// reload. It returns the booking's id.
func (r *staffCalendarRun) bookedShowsOnTheCalendar(t *testing.T) string {
	t.Helper()
	s, typ, sp := r.staffer, r.c.Types[0], r.c.Specialists[0]
	start := time.Date(r.bookDay.Year(), r.bookDay.Month(), r.bookDay.Day(), 10, 0, 0, 0, r.c.Loc)
	const clientID = "e2e-api-patient"
	booked := r.a.bookFor(t, typ.ID, r.a.holdOf(t, typ.ID, sp.ID, start, clientID), clientID,
		map[string]string{"name": "Ada Lovelace", "email": "ada@example.org", "phone": "+44 20 7946 0000"})

	if !s.Until(stafferWait, `Array.from(document.querySelectorAll('`+r.entry()+`')).some(e => e.innerText.includes("Ada Lovelace"))`) {
		// What the server says now, and what its streams did, to tell a
		// lost update from a slow one.
		for _, line := range strings.Split(r.a.do(t, "GET", "/metrics", nil).Body, "\n") {
			if strings.HasPrefix(line, "clinic_") {
				t.Log(line)
			}
		}
		t.Logf("no-reload marker still set: %v", evalJS[bool](s, `window.__noReload === true`))
		t.Logf("SSE messages the calendar page got: %s", evalJS[string](s, `JSON.stringify(window.__sse || [])`))
		t.Logf("EventSource state: %s", evalJS[string](s, `(() => { const es = `+calStream+`; return es ? es.url + " readyState=" + es.readyState : "none" })()`))
		t.Fatalf("%s after the patient booked, the open staff calendar does not show Ada Lovelace on %s without a reload\n%s", stafferWait, r.bookDayS, s.snapshot())
	}
	txt := evalJS[string](s, `document.querySelector('`+r.entry()+`').innerText`)
	if !strings.Contains(txt, "10:00") || !strings.Contains(txt, typ.Name) || !strings.Contains(txt, sp.Name) {
		t.Errorf("the calendar entry reads %q: want the time, the type and the specialist", txt)
	}
	if n := evalJS[int](s, `Array.from(document.querySelectorAll('section.cal-day')).filter(d => d.id !== "cal-`+r.bookDayS+`" && d.innerText.includes("Ada Lovelace")).length`); n != 0 {
		t.Errorf("the booking shows on %d other days", n)
	}
	if !evalJS[bool](s, `window.__noReload === true`) {
		t.Error("the calendar was reloaded")
	}
	s.Shot("staff-calendar") // a failed screenshot fails the test
	return booked.Appointment.ID.String()
}

// twoUpdatesBackToBack: two updates of one day in quick succession (a
// hold, then its booking) both land, however fast the second follows: the
// block the first swaps in must listen at once. Two events dispatched back
// to back on the page's EventSource, as its stream would deliver them:
// copies of another day's block as the server rendered it, marked.
func (r *staffCalendarRun) twoUpdatesBackToBack(t *testing.T) {
	t.Helper()
	s := r.staffer
	other := evalJS[string](s, `(() => {
		const el = document.querySelector('section.cal-day:not(#cal-`+r.bookDayS+`)'), es = `+calStream+`;
		for (const n of ["1", "2"]) {
			es.dispatchEvent(new MessageEvent(el.id, {data: el.outerHTML.replace("<h2>", '<h2><span class="live-update">' + n + '</span> ')}));
		}
		return el.id;
	})()`)
	if !s.Until(stafferWait, `document.querySelector('section#`+other+` .live-update').innerText === "2"`) {
		t.Errorf("of two updates of %s back to back, the second was lost: the day reads %q", other,
			evalJS[string](s, `document.querySelector('section#`+other+`').innerText`))
	}
}

// cancelFromTheLiveBlock: the staff member cancels the booking that just
// arrived, from the live block, as anyone would: open "Cancel or move",
// give a reason, submit.
func (r *staffCalendarRun) cancelFromTheLiveBlock(t *testing.T, id string) {
	t.Helper()
	s := r.staffer
	s.Do(stafferWait, "open the booking's actions",
		chromedp.Click(chromedp.CSS(r.entry()+` details summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#reason-`+id)),
		chromedp.SendKeys(chromedp.CSS(`#reason-`+id), "Patient phoned to cancel"),
		chromedp.Click(chromedp.CSS(r.entry()+` form[action$="/cancel"] button`)),
	)
	if !s.Until(stafferWait, `!!document.querySelector('p.notice, [data-testid="error-page"]')`) {
		t.Fatalf("no answer to the cancel\n%s", s.snapshot())
	}
	if errPage := evalJS[string](s, `(document.querySelector('[data-testid="error-page"]') || {innerText: ""}).innerText`); errPage != "" {
		t.Errorf("cancelling the booking from the live calendar fails: %q; the day block the stream swapped in renders its forms with an empty _csrf "+
			"(calSource.Snapshot renders CalendarDay with views.StaffNav{}), and a plain form post sends no X-CSRF-Token header", strings.Join(strings.Fields(errPage), " "))
	} else if n := evalJS[string](s, `document.querySelector("p.notice").innerText`); n != "Cancelled the booking of Ada Lovelace." {
		t.Errorf("after the cancel: %q", n)
	}
}
