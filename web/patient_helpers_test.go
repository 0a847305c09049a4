package web_test

// The patient pages as a browser without JavaScript reads them: whole
// pages and htmx fragments, the week grid's cells, the hold panel and its
// forms, the manage page's summary.

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
)

// wantErrorPage checks a person gets a proper HTML error page, never JSON.
func wantErrorPage(t *testing.T, r *response, status int) {
	t.Helper()
	r.Want(status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("%s: Content-Type %q, want text/html", r.what, ct)
	}
	if b := strings.TrimSpace(r.Body); strings.HasPrefix(b, "{") || strings.Contains(b, `"error":`) {
		t.Fatalf("%s: raw JSON on a page: %s", r.what, clip(b, 300))
	}
	ep := r.Doc().Find(`[data-testid="error-page"]`)
	if ep.Length() != 1 {
		t.Fatalf("%s: no error page in:\n%s", r.what, clip(r.Body, 2000))
	}
	if got, _ := ep.Attr("data-status"); got != strconv.Itoa(status) {
		t.Fatalf("%s: error page data-status %q, want %d", r.what, got, status)
	}
	if text(ep.Find("h1")) == "" || text(ep.Find("p").First()) == "" {
		t.Fatalf("%s: error page without a title or message: %s", r.what, text(ep))
	}
}

// wantFullPage checks an answer is a whole page (the layout around it).
func wantFullPage(t *testing.T, r *response) {
	t.Helper()
	d := r.Doc()
	if d.Find("html head title").Length() != 1 || d.Find(`link[rel="stylesheet"]`).Length() == 0 || d.Find("main#main").Length() != 1 {
		t.Fatalf("%s: not a whole page:\n%s", r.what, clip(r.Body, 1500))
	}
}

// wantFragment checks an answer is a fragment for htmx, without the layout.
func wantFragment(t *testing.T, r *response) {
	t.Helper()
	if strings.Contains(strings.ToLower(r.Body), "<html") || strings.Contains(r.Body, "<head") || strings.Contains(r.Body, `data-testid="week-grid"`) {
		t.Fatalf("%s: htmx wants the panel alone, got a page:\n%s", r.what, clip(r.Body, 1500))
	}
}

// panelOf is the hold panel of a whole page, or the fragment itself.
func panelOf(r *response) *goquery.Selection {
	if p := r.Doc().Find("#hold-panel"); p.Length() > 0 {
		return p
	}
	return r.Doc().Find("body")
}

// cellForm is the hold form of a free cell.
func cellForm(t testing.TB, doc *goquery.Document, cellID string) form {
	t.Helper()
	cell := doc.Find("li#" + cellID)
	if cell.Length() != 1 {
		t.Fatalf("cell %s: found %d", cellID, cell.Length())
	}
	if st, _ := cell.Attr("data-state"); st != "free" {
		t.Fatalf("cell %s is %q, want free", cellID, st)
	}
	return formOf(t, cell.Find("form"), "hold form of "+cellID)
}

// cellState is a cell's data-state.
func cellState(doc *goquery.Document, cellID string) string {
	st, _ := doc.Find("li#" + cellID).Attr("data-state")
	return st
}

// stateOn is the state of sp's (or any specialist's) cell at start on a
// fresh browser's week page.
func stateOn(t testing.TB, a *app, c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time) string {
	t.Helper()
	return cellState(a.newClient(t).Get(c.BookURL(typ, start, sp)).Doc(), grid.CellID(sp, start))
}

// openCellForm opens the week page holding start, filtered by sp, and
// returns the hold form of that (free) cell.
func openCellForm(t testing.TB, cl *client, c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time) form {
	t.Helper()
	page := cl.Get(c.BookURL(typ, start, sp)).Want(http.StatusOK)
	return cellForm(t, page.Doc(), grid.CellID(sp, start))
}

// holdNoJS holds the cell at start, filtered by sp, by posting its form as
// a browser without JavaScript would.
func holdNoJS(t testing.TB, cl *client, c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time) *response {
	t.Helper()
	f := openCellForm(t, cl, c, typ, sp, start)
	return cl.Post(f.Action, f.Values)
}

// holdHX holds the cell at start, filtered by sp, as htmx does.
func holdHX(t testing.TB, cl *client, c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time) *response {
	t.Helper()
	f := openCellForm(t, cl, c, typ, sp, start)
	return cl.HXPost(f.Action, f.Values)
}

// detailsForm fills the details form of a held panel.
func detailsForm(t testing.TB, doc *goquery.Document, name, email, phone string) form {
	t.Helper()
	f := formOf(t, doc.Find(`[data-testid="details-form"]`), "details form")
	f.Values.Set("name", name)
	f.Values.Set("email", email)
	f.Values.Set("phone", phone)
	return f
}

var managePath = regexp.MustCompile(`^/manage/([A-Za-z0-9_-]{16,})$`)

// bookViaPages books start through the pages without JavaScript and
// returns the manage token.
func bookViaPages(t *testing.T, cl *client, c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time, name, email string) string {
	t.Helper()
	held := holdNoJS(t, cl, c, typ, sp, start).Want(http.StatusOK)
	f := detailsForm(t, held.Doc(), name, email, "+49 30 1234567")
	r := cl.Post(f.Action, f.Values).Want(http.StatusSeeOther)
	m := managePath.FindStringSubmatch(r.Header.Get("Location"))
	if m == nil {
		t.Fatalf("confirm redirects to %q, want /manage/{token}", r.Header.Get("Location"))
	}
	return m[1]
}

// summaryOf reads the manage page's summary list: dt -> dd text.
func summaryOf(t *testing.T, r *response) map[string]string {
	t.Helper()
	out := map[string]string{}
	dl := r.Doc().Find(`[data-testid="summary"]`)
	if dl.Length() != 1 {
		t.Fatalf("%s: no summary on the manage page:\n%s", r.what, clip(r.Body, 2000))
	}
	dl.Find("dt").Each(func(_ int, dt *goquery.Selection) {
		out[text(dt)] = text(dt.NextFiltered("dd"))
	})
	return out
}

// heartbeatOf is the URL the held panel's heartbeat posts to and the
// values htmx sends with it (its hx-vals).
func heartbeatOf(t *testing.T, held *response) (string, string) {
	t.Helper()
	beat := held.Doc().Find(".heartbeat")
	beatURL, _ := beat.Attr("hx-post")
	vals, _ := beat.Attr("hx-vals")
	return beatURL, vals
}

var heartbeatHoldID = regexp.MustCompile(`"holdId":"([^"]+)"`)

// kioskTimes reads a kiosk block's times per day.
func kioskTimes(block *goquery.Selection) [][]string {
	var out [][]string
	block.Find(".kiosk-day").Each(func(_ int, d *goquery.Selection) {
		var ts []string
		d.Find(".kiosk-time").Each(func(_ int, s *goquery.Selection) { ts = append(ts, text(s)) })
		out = append(out, ts)
	})
	return out
}
