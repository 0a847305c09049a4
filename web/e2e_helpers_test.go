package web_test

// Helpers shared by the page, .ics and browser tests. Every top-level
// identifier starts with pg or e2e so the files other people add to this
// package cannot clash with them.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// pgBrowserAccept is what a browser sends for a page.
const pgBrowserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// pgApp is the whole app on an httptest server, with its services at hand
// (to book behind a page's back, as staff or another patient would).
type pgApp struct {
	TS   *httptest.Server
	Deps web.Deps
	Pool *pgxpool.Pool
}

// pgNewApp wires the app as main does. Unless the test sets it, the per-IP
// hold limit is lifted: every test here comes from 127.0.0.1 and the
// limiter's count lives in the shared Redis.
func pgNewApp(t testing.TB, o web.Options) *pgApp {
	t.Helper()
	return pgNewAppOn(t, testkit.DB(t), testkit.Redis(t), o)
}

func pgNewAppOn(t testing.TB, pool *pgxpool.Pool, rdb redis.UniversalClient, o web.Options) *pgApp {
	t.Helper()
	if o.HoldsPerMinute == 0 {
		o.HoldsPerMinute = 100000
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	deps := web.Wire(pool, rdb, logger, scoped(o))
	ctx, cancel := context.WithCancel(context.Background())
	deps.RunBackground(ctx)
	srv := web.New(deps, "127.0.0.1:0")
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		// Streams (browsers, readers) may still be open: cut them first.
		ts.CloseClientConnections()
		ts.Close()
		cancel()
	})
	return &pgApp{TS: ts, Deps: deps, Pool: pool}
}

// pgClinic is a test clinic that has hours every day of the week (so the
// kiosk's next three days always have free times), an address, and two
// types without a cooldown.
type pgClinic struct {
	testkit.Clinic
	Loc *time.Location
}

func pgNewClinic(t testing.TB, pool *pgxpool.Pool) pgClinic {
	t.Helper()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{
		Specialists: 2,
		Types: []db.AppointmentTypeInsertParams{
			{Name: "Consultation", Description: "A first talk about what brings you here.", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
			{Name: "Check-up", DurationMin: 60, SlotStepMin: 60, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		},
	})
	ctx := context.Background()
	q := db.New(pool)
	for _, sp := range c.Specialists {
		for _, wd := range []time.Weekday{time.Saturday, time.Sunday} {
			if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{
				ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(wd), StartMin: 9 * 60, EndMin: 17 * 60,
			}); err != nil {
				t.Fatalf("weekend hours: %v", err)
			}
		}
	}
	row, err := q.ClinicUpsert(ctx, db.ClinicUpsertParams{Slug: c.Slug, Name: c.Name, Timezone: c.Timezone, Address: "Hauptstraße 5, 10827 Berlin"})
	if err != nil {
		t.Fatalf("clinic address: %v", err)
	}
	c.Clinic = row
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	return pgClinic{Clinic: c, Loc: loc}
}

// Type0 is the 30-minute consultation, Type1 the one-hour check-up.
func (c pgClinic) Type0() db.AppointmentType { return c.Types[0] }

// At is daysAhead days from today (clinic time) at hh:mm local.
func (c pgClinic) At(daysAhead, hh, mm int) time.Time {
	now := time.Now().In(c.Loc)
	return time.Date(now.Year(), now.Month(), now.Day()+daysAhead, hh, mm, 0, 0, c.Loc)
}

// Week is the ?week= value for the week holding t.
func (c pgClinic) Week(t time.Time) string { return availability.DateOf(t, c.Loc).String() }

// BookPath is the booking page of type typ.
func (c pgClinic) BookPath(typ db.AppointmentType) string {
	return "/c/" + c.Slug + "/book/" + typ.ID.String()
}

// BookURL is the week page holding t, filtered by specialist sp (uuid.Nil: any).
func (c pgClinic) BookURL(typ db.AppointmentType, t time.Time, sp uuid.UUID) string {
	u := c.BookPath(typ) + "?week=" + c.Week(t)
	if sp != uuid.Nil {
		u += "&specialist=" + sp.String()
	}
	return u
}

// pgCellID is the DOM id of the cell at start in a view of sp (or any).
func pgCellID(sp uuid.UUID, start time.Time) string { return grid.CellID(sp, start) }

// pgBookDirect books a slot behind the pages' back, as staff would.
func pgBookDirect(t testing.TB, app *pgApp, c pgClinic, typ db.AppointmentType, sp uuid.UUID, start time.Time, name string) booking.Confirmation {
	t.Helper()
	conf, err := app.Deps.Bookings.Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: typ.ID, SpecialistID: sp, Start: start,
		Patient:  booking.Patient{Name: name, Email: "staff-booked@example.org"},
		ClientID: "staff-desk", Actor: "staff:test", ClinicID: c.ID,
	})
	if err != nil {
		t.Fatalf("book directly: %v", err)
	}
	return conf
}

// pgClient is one browser without JavaScript: a cookie jar (the session,
// and with it the client id) and no automatic redirects.
type pgClient struct {
	t    testing.TB
	base string
	hc   *http.Client
	// Header is added to every request.
	Header http.Header
}

func pgNewClient(t testing.TB, base string) *pgClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pgClient{t: t, base: base, Header: http.Header{}, hc: &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// pgResp is an answer, read whole.
type pgResp struct {
	Status int
	Header http.Header
	Body   string
	doc    *goquery.Document
	t      testing.TB
	what   string
}

// Doc parses the body as HTML.
func (r *pgResp) Doc() *goquery.Document {
	r.t.Helper()
	if r.doc == nil {
		d, err := goquery.NewDocumentFromReader(strings.NewReader(r.Body))
		if err != nil {
			r.t.Fatalf("%s: parse HTML: %v", r.what, err)
		}
		r.doc = d
	}
	return r.doc
}

// Want fails the test unless the status is want.
func (r *pgResp) Want(want int) *pgResp {
	r.t.Helper()
	if r.Status != want {
		r.t.Fatalf("%s: status %d, want %d; body:\n%s", r.what, r.Status, want, pgClip(r.Body, 3000))
	}
	return r
}

func pgClip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (c *pgClient) do(method, path string, body io.Reader, hdr http.Header) *pgResp {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", pgBrowserAccept)
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return &pgResp{Status: res.StatusCode, Header: res.Header, Body: string(b), t: c.t, what: method + " " + path}
}

// Get fetches a page as a browser would.
func (c *pgClient) Get(path string) *pgResp {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil, nil)
}

// Post posts a form without JavaScript.
func (c *pgClient) Post(path string, form url.Values) *pgResp {
	c.t.Helper()
	return c.do(http.MethodPost, path, strings.NewReader(form.Encode()),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

// HXPost posts a form as htmx does.
func (c *pgClient) HXPost(path string, form url.Values) *pgResp {
	c.t.Helper()
	return c.do(http.MethodPost, path, strings.NewReader(form.Encode()), http.Header{
		"Content-Type": {"application/x-www-form-urlencoded"},
		"Hx-Request":   {"true"},
		"Accept":       {"text/html, */*"},
	})
}

// pgForm is a form as the page renders it: where it posts and the values
// a browser would send (inputs with a name; text fields as given).
type pgForm struct {
	Action string
	Values url.Values
}

func pgFormOf(t testing.TB, sel *goquery.Selection, what string) pgForm {
	t.Helper()
	if sel.Length() == 0 {
		t.Fatalf("%s: no such form", what)
	}
	f := sel.First()
	if !f.Is("form") {
		f = f.Closest("form")
	}
	if f.Length() == 0 {
		t.Fatalf("%s: not in a form", what)
	}
	action, _ := f.Attr("action")
	v := url.Values{}
	f.Find("input[name], select[name], textarea[name]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		val, _ := in.Attr("value")
		if in.Is("select") {
			val, _ = in.Find("option[selected]").Attr("value")
		}
		v.Set(name, val)
	})
	return pgForm{Action: action, Values: v}
}

// pgCellForm is the hold form of a free cell.
func pgCellForm(t testing.TB, doc *goquery.Document, cellID string) pgForm {
	t.Helper()
	cell := doc.Find("li#" + cellID)
	if cell.Length() != 1 {
		t.Fatalf("cell %s: found %d", cellID, cell.Length())
	}
	if st, _ := cell.Attr("data-state"); st != "free" {
		t.Fatalf("cell %s is %q, want free", cellID, st)
	}
	return pgFormOf(t, cell.Find("form"), "hold form of "+cellID)
}

// pgState is a cell's data-state.
func pgState(doc *goquery.Document, cellID string) string {
	st, _ := doc.Find("li#" + cellID).Attr("data-state")
	return st
}

// pgText is a selection's text with white space collapsed.
func pgText(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

// pgHoldNoJS opens the week page holding start, filtered by sp, and holds
// that cell by posting its form as a browser without JavaScript would.
func pgHoldNoJS(t testing.TB, cl *pgClient, c pgClinic, typ db.AppointmentType, sp uuid.UUID, start time.Time) *pgResp {
	t.Helper()
	page := cl.Get(c.BookURL(typ, start, sp)).Want(http.StatusOK)
	f := pgCellForm(t, page.Doc(), pgCellID(sp, start))
	return cl.Post(f.Action, f.Values)
}

// pgDetails fills the details form of a held panel.
func pgDetails(t testing.TB, doc *goquery.Document, name, email, phone string) pgForm {
	t.Helper()
	f := pgFormOf(t, doc.Find(`[data-testid="details-form"]`), "details form")
	f.Values.Set("name", name)
	f.Values.Set("email", email)
	f.Values.Set("phone", phone)
	return f
}

// pgWaitFor polls cond until it holds or d passes.
func pgWaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
