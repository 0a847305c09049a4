package web_test

// A series' session on the patient's manage page in headless Chromium:
// its place in the course and every session; "cancel this and all later"
// asks first, listing them, then cancels them all in one go with one
// e-mail; the earlier session stands. axe finds nothing serious.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/series"
)

func TestSeriesBrowserManageCancelThisAndLater(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.deskClinic(t)
	ctx := context.Background()
	starts, err := series.Dates(c.Next(time.Tuesday, 11, 0), c.Loc, series.Rhythm{EveryDays: 7, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Deps.Bookings.BookSeries(ctx, booking.SeriesRequest{
		ClinicID: c.ID, AppointmentTypeID: c.Type0().ID, SpecialistID: c.Specialists[0].ID, EveryDays: 7, Starts: starts,
		Patient: booking.Patient{Name: "Cora Course", Email: "cora.course@example.org"}, Actor: "staff:test", Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	tab := startBrowser(t, "series-manage", 1280, 1000)
	defer tab.Report()
	openPage(t, tab, a.URL+"/manage/"+got.Sessions[1].ManageToken, `[data-testid="series"]`)
	if pos := evalJS[string](tab, `document.querySelector('[data-testid="series-position"]').innerText`); !strings.Contains(pos, "2 of 4") {
		t.Errorf("the page says %q, want appointment 2 of 4", pos)
	}
	if n := evalJS[int](tab, `document.querySelectorAll('[data-testid="series"] li').length`); n != 4 {
		t.Errorf("the page lists %d sessions, want 4", n)
	}
	if !evalJS[bool](tab, `!!document.querySelector('[data-testid="cancel-link"]')`) {
		t.Error("the page offers no cancel of this session alone")
	}
	if bad := axeSerious(t, tab); len(bad) > 0 {
		t.Errorf("the manage page: axe finds serious problems: %v", bad)
	}
	tab.Do(stafferWait, "ask to cancel this and later",
		chromedp.Click(chromedp.CSS(`[data-testid="cancel-series-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-later"]`)))
	if n := evalJS[int](tab, `document.querySelectorAll('[data-testid="series-later"] li').length`); n != 3 {
		t.Errorf("the question lists %d sessions, want 3 (this one and the two after)", n)
	}
	if bad := axeSerious(t, tab); len(bad) > 0 {
		t.Errorf("the cancel page: axe finds serious problems: %v", bad)
	}
	tab.Do(stafferWait, "cancel them",
		chromedp.Click(chromedp.CSS(`[data-testid="cancel-series-yes"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice[role="status"]`)))
	status := map[int]string{}
	rows, err := a.Pool.Query(ctx, `SELECT series_position, status FROM bookings WHERE series_id = $1`, got.SeriesID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int
		var s string
		if err := rows.Scan(&p, &s); err != nil {
			t.Fatal(err)
		}
		status[p] = s
	}
	if status[1] != "confirmed" || status[2] != "cancelled" || status[3] != "cancelled" || status[4] != "cancelled" {
		t.Errorf("the sessions' statuses %v, want the first confirmed and the rest cancelled", status)
	}
	var series, single int
	if err := a.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE kind = 'series_cancellation'), count(*) FILTER (WHERE kind = 'cancellation')
		FROM messages WHERE clinic_id = $1`, c.ID).Scan(&series, &single); err != nil {
		t.Fatal(err)
	}
	if series != 1 || single != 0 {
		t.Errorf("%d e-mails about the cancelled sessions and %d single cancellation notices, want 1 and 0", series, single)
	}
}
