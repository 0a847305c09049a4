package web_test

// An end-to-end test of the staff side in headless Chromium (Debian's
// /usr/bin/chromium, driven by chromedp) against the whole app on a real
// HTTP server with real PostgreSQL and Redis: a staff member signs in and
// closes tomorrow while a patient's grid is open; the patient's grid drops
// tomorrow's slots without a reload; a patient books through the API and
// the open staff calendar shows it without a reload.
//
// Without Chromium the test fails, unless CLINIC_SKIP_BROWSER=1 (then it
// skips). The screenshot goes to <repo>/.artifacts/screenshots/.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/web"
)

// stfWaitStream waits until the app has an open HTML stream of scope (the
// browser's live page connected), then lets it settle into its view.
func stfWaitStream(t *testing.T, app *stfApp, scope string, d time.Duration) {
	t.Helper()
	re := regexp.MustCompile(`clinic_streams_open\{[^}]*scope="` + regexp.QuoteMeta(scope) + `"[^}]*\} (\d+)`)
	deadline := time.Now().Add(d)
	for {
		res, err := http.Get(app.TS.URL + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if m := re.FindSubmatch(b); m != nil {
				if n, _ := strconv.Atoi(string(m[1])); n > 0 {
					time.Sleep(500 * time.Millisecond)
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live stream of %s opened within %s", scope, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestStaffE2EBrowserOverrideAndLiveCalendar(t *testing.T) {
	t.Parallel()
	e2eNeedChromium(t)
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	sp, typ := c.Specialists[0], c.Types[0]
	ctx := context.Background()
	// The specialist works every day, so tomorrow has slots whatever today is.
	for _, wd := range []time.Weekday{time.Saturday, time.Sunday} {
		if err := db.New(app.Pool).WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{
			ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(wd), StartMin: 9 * 60, EndMin: 17 * 60,
		}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().In(c.Loc)
	tomorrow := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, c.Loc)
	tomorrowS := tomorrow.Format(time.DateOnly)
	monday := availability.DateOf(tomorrow, c.Loc)
	monday = monday.AddDays(-((int(monday.Weekday()) + 6) % 7))
	gridURL := app.TS.URL + "/c/" + c.Slug + "/book/" + typ.ID.String() + "?week=" + monday.String() + "&specialist=" + sp.ID.String()
	dayFree := func(date string) string {
		return fmt.Sprintf(`document.querySelectorAll('section#day-%s li[data-state="free"]').length`, date)
	}
	const wait = 15 * time.Second

	patient := e2eBrowser(t, "patient", 1280, 1000)
	staffer := e2eBrowser(t, "staff", 1280, 1000)
	defer func() { patient.Report(); staffer.Report() }()

	// The patient's grid is open before the change.
	patient.Do(wait, "open the booking grid", chromedp.Navigate(gridURL),
		chromedp.WaitVisible(chromedp.CSS(`section#day-`+tomorrowS+` li[data-state="free"]`)))
	freeBefore := e2eEval[int](patient, dayFree(tomorrowS))
	if freeBefore != 16 {
		t.Fatalf("tomorrow shows %d free cells before the change, want 16 (09:00-17:00)", freeBefore)
	}
	if !patient.Until(wait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded on the patient's page")
	}
	stfWaitStream(t, app, typ.ID.String(), wait)
	// A cell marker: only a page that was not reloaded still carries it.
	e2eEval[bool](patient, `(window.__stfNoReload = true)`)

	// The staff member signs in through the form.
	staffer.Do(wait, "sign in",
		chromedp.Navigate(app.TS.URL+"/staff/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), c.Admin.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), stfPassword),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="calendar"]`)),
	)
	// Opens the specialist and closes tomorrow.
	staffer.Do(wait, "open the specialist",
		chromedp.Navigate(app.TS.URL+"/staff/specialists/"+sp.ID.String()),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="override-form"]`)),
	)
	if !e2eEval[bool](staffer, `document.querySelector('[data-testid="override-form"] input[name="closed"]').checked`) {
		t.Fatal("the override form is not set to 'closed all day'")
	}
	staffer.Do(wait, "add the override",
		chromedp.SetValue(chromedp.CSS(`[data-testid="override-form"] #day`), tomorrowS),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="override-form"] #note`), "Team training"),
		chromedp.Click(chromedp.CSS(`[data-testid="override-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
	)
	if n := e2eEval[string](staffer, `document.querySelector("p.notice").innerText`); n != "Override added." {
		t.Fatalf("after adding the override the page says %q\n%s", n, staffer.snapshot())
	}
	if txt := e2eEval[string](staffer, `document.querySelector('[data-testid="overrides"]').innerText`); !strings.Contains(txt, "closed") || !strings.Contains(txt, "Team training") {
		t.Errorf("the override list reads %q", txt)
	}

	// The patient's open grid loses tomorrow's free cells without a reload.
	if !patient.Until(wait, dayFree(tomorrowS)+` === 0`) {
		t.Errorf("%s after closing tomorrow, the patient's open grid still shows %d of tomorrow's cells as free (it had %d): "+
			"the live stream did not replace tomorrow's day block\n%s",
			wait, e2eEval[int](patient, dayFree(tomorrowS)), freeBefore, patient.snapshot())
	} else {
		txt := e2eEval[string](patient, `document.querySelector('section#day-`+tomorrowS+`').innerText`)
		cells := e2eEval[int](patient, `document.querySelectorAll('section#day-`+tomorrowS+` li.slot').length`)
		if !strings.Contains(txt, "No slots") && cells != 0 {
			t.Logf("tomorrow shows %d non-free cells: %q", cells, txt)
		}
	}
	if !e2eEval[bool](patient, `window.__stfNoReload === true`) {
		t.Error("the patient's page was reloaded")
	}
	patient.Shot("staff-e2e-patient-grid-after-override")

	// The staff calendar is open on the week of the day after tomorrow.
	bookDay := tomorrow.AddDate(0, 0, 1)
	bookDayS := bookDay.Format(time.DateOnly)
	start := time.Date(bookDay.Year(), bookDay.Month(), bookDay.Day(), 10, 0, 0, 0, c.Loc)
	staffer.Do(wait, "open the calendar",
		chromedp.Navigate(app.TS.URL+"/staff?date="+bookDayS),
		chromedp.WaitVisible(chromedp.CSS(`section#cal-`+bookDayS)),
	)
	if !staffer.Until(wait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded on the calendar")
	}
	stfWaitStream(t, app, "staff:"+c.ID.String(), wait)
	// The count above may be the stream of the calendar the staff member
	// left after signing in (seen still open here): wait for this page's
	// own stream, open once the server has joined it to its view.
	const calStream = `document.querySelector("[sse-connect]")["htmx-internal-data"].sseEventSource`
	if !staffer.Until(wait, calStream+`.readyState === EventSource.OPEN`) {
		t.Fatalf("the calendar's stream did not open within %s", wait)
	}
	e2eEval[bool](staffer, `(window.__stfNoReload = true)`)
	// Record what the page's SSE connection delivers, for a failure report
	// (htmx:sseBeforeMessage: htmx:sseMessage goes to the element the swap
	// just replaced, out of the document, so it never bubbles up).
	e2eEval[bool](staffer, `(window.__sse = [], document.addEventListener("htmx:sseBeforeMessage", e => window.__sse.push(e.detail.type)), document.addEventListener("htmx:sseError", e => window.__sse.push("ERROR")), document.addEventListener("htmx:sseOpen", e => window.__sse.push("OPEN")), true)`)
	if n := e2eEval[int](staffer, `document.querySelectorAll('section#cal-`+bookDayS+` [data-testid="entry-booking"]').length`); n != 0 {
		t.Fatalf("the day already has %d bookings", n)
	}
	if txt := e2eEval[string](staffer, `(document.querySelector('section#cal-`+tomorrowS+`') || {innerText: ""}).innerText`); bookDay.Weekday() != time.Monday && !strings.Contains(txt, "closed (Team training)") {
		t.Errorf("the calendar's tomorrow does not show the override: %q", txt)
	}

	// A patient books through the API.
	const clientID = "e2e-api-patient"
	holdID := stfHold(t, app, typ.ID, sp.ID, start, clientID)
	body, _ := json.Marshal(map[string]any{"holdId": holdID, "clientId": clientID,
		"patient": map[string]string{"name": "Ada Lovelace", "email": "ada@example.org", "phone": "+44 20 7946 0000"}})
	res, err := http.Post(app.TS.URL+"/v1/appointment-types/"+typ.ID.String()+"/book", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var booked struct {
		Appointment struct {
			ID uuid.UUID `json:"id"`
		} `json:"appointment"`
	}
	_ = json.NewDecoder(res.Body).Decode(&booked)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("book through the API: %d", res.StatusCode)
	}

	// It appears in the right day of the open calendar, without a reload.
	entry := `section#cal-` + bookDayS + ` [data-testid="entry-booking"]`
	if !staffer.Until(wait, `Array.from(document.querySelectorAll('`+entry+`')).some(e => e.innerText.includes("Ada Lovelace"))`) {
		// What the server says now, and what its streams did, to tell a
		// lost update from a slow one.
		if res, err := http.Get(app.TS.URL + "/metrics"); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "clinic_") {
					t.Log(line)
				}
			}
		}
		t.Logf("no-reload marker still set: %v", e2eEval[bool](staffer, `window.__stfNoReload === true`))
		t.Logf("SSE messages the calendar page got: %s", e2eEval[string](staffer, `JSON.stringify(window.__sse || [])`))
		t.Logf("EventSource state: %s", e2eEval[string](staffer, `(() => { const es = `+calStream+`; return es ? es.url + " readyState=" + es.readyState : "none" })()`))
		t.Fatalf("%s after the patient booked, the open staff calendar does not show Ada Lovelace on %s without a reload\n%s", wait, bookDayS, staffer.snapshot())
	}
	txt := e2eEval[string](staffer, `document.querySelector('`+entry+`').innerText`)
	if !strings.Contains(txt, "10:00") || !strings.Contains(txt, typ.Name) || !strings.Contains(txt, sp.Name) {
		t.Errorf("the calendar entry reads %q: want the time, the type and the specialist", txt)
	}
	if n := e2eEval[int](staffer, `Array.from(document.querySelectorAll('section.cal-day')).filter(d => d.id !== "cal-`+bookDayS+`" && d.innerText.includes("Ada Lovelace")).length`); n != 0 {
		t.Errorf("the booking shows on %d other days", n)
	}
	if !e2eEval[bool](staffer, `window.__stfNoReload === true`) {
		t.Error("the calendar was reloaded")
	}
	staffer.Shot("staff-calendar") // a failed screenshot fails the test

	// Two updates of one day in quick succession (a hold, then its
	// booking) both land, however fast the second follows: the block the
	// first swaps in must listen at once. Two events dispatched back to
	// back on the page's EventSource, as its stream would deliver them:
	// copies of another day's block as the server rendered it, marked.
	other := e2eEval[string](staffer, `(() => {
		const el = document.querySelector('section.cal-day:not(#cal-`+bookDayS+`)'), es = `+calStream+`;
		for (const n of ["1", "2"]) {
			es.dispatchEvent(new MessageEvent(el.id, {data: el.outerHTML.replace("<h2>", '<h2><span class="stf-update">' + n + '</span> ')}));
		}
		return el.id;
	})()`)
	if !staffer.Until(wait, `document.querySelector('section#`+other+` .stf-update').innerText === "2"`) {
		t.Errorf("of two updates of %s back to back, the second was lost: the day reads %q", other,
			e2eEval[string](staffer, `document.querySelector('section#`+other+`').innerText`))
	}

	// The staff member cancels the booking that just arrived, from the live
	// block, as anyone would: open "Cancel or move", give a reason, submit.
	staffer.Do(wait, "open the booking's actions",
		chromedp.Click(chromedp.CSS(entry+` details summary`)),
		chromedp.WaitVisible(chromedp.CSS(`#reason-`+booked.Appointment.ID.String())),
		chromedp.SendKeys(chromedp.CSS(`#reason-`+booked.Appointment.ID.String()), "Patient phoned to cancel"),
		chromedp.Click(chromedp.CSS(entry+` form[action$="/cancel"] button`)),
	)
	if !staffer.Until(wait, `!!document.querySelector('p.notice, [data-testid="error-page"]')`) {
		t.Fatalf("no answer to the cancel\n%s", staffer.snapshot())
	}
	if errPage := e2eEval[string](staffer, `(document.querySelector('[data-testid="error-page"]') || {innerText: ""}).innerText`); errPage != "" {
		t.Errorf("cancelling the booking from the live calendar fails: %q; the day block the stream swapped in renders its forms with an empty _csrf "+
			"(calSource.Snapshot renders CalendarDay with views.StaffNav{}), and a plain form post sends no X-CSRF-Token header", strings.Join(strings.Fields(errPage), " "))
	} else if n := e2eEval[string](staffer, `document.querySelector("p.notice").innerText`); n != "Cancelled the booking of Ada Lovelace." {
		t.Errorf("after the cancel: %q", n)
	}
}
