package web_test

// Handler tests of the patient pages and the kiosk, through the real
// router, against real PostgreSQL and Redis, reading the HTML as a browser
// would (goquery). The pages must work without JavaScript: plain forms and
// whole pages; with htmx (HX-Request: true) the panel actions answer with
// the panel alone.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// pgWantErrorPage checks a person gets a proper HTML error page, never JSON.
func pgWantErrorPage(t *testing.T, r *pgResp, status int) {
	t.Helper()
	r.Want(status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("%s: Content-Type %q, want text/html", r.what, ct)
	}
	if b := strings.TrimSpace(r.Body); strings.HasPrefix(b, "{") || strings.Contains(b, `"error":`) {
		t.Fatalf("%s: raw JSON on a page: %s", r.what, pgClip(b, 300))
	}
	ep := r.Doc().Find(`[data-testid="error-page"]`)
	if ep.Length() != 1 {
		t.Fatalf("%s: no error page in:\n%s", r.what, pgClip(r.Body, 2000))
	}
	if got, _ := ep.Attr("data-status"); got != strconv.Itoa(status) {
		t.Fatalf("%s: error page data-status %q, want %d", r.what, got, status)
	}
	if pgText(ep.Find("h1")) == "" || pgText(ep.Find("p").First()) == "" {
		t.Fatalf("%s: error page without a title or message: %s", r.what, pgText(ep))
	}
}

// pgWantFullPage checks an answer is a whole page (the layout around it).
func pgWantFullPage(t *testing.T, r *pgResp) {
	t.Helper()
	d := r.Doc()
	if d.Find("html head title").Length() != 1 || d.Find(`link[rel="stylesheet"]`).Length() == 0 || d.Find("main#main").Length() != 1 {
		t.Fatalf("%s: not a whole page:\n%s", r.what, pgClip(r.Body, 1500))
	}
}

// pgWantFragment checks an answer is a fragment for htmx, without the layout.
func pgWantFragment(t *testing.T, r *pgResp) {
	t.Helper()
	if strings.Contains(strings.ToLower(r.Body), "<html") || strings.Contains(r.Body, "<head") || strings.Contains(r.Body, `data-testid="week-grid"`) {
		t.Fatalf("%s: htmx wants the panel alone, got a page:\n%s", r.what, pgClip(r.Body, 1500))
	}
}

// pgPanel is the hold panel of a whole page, or the fragment itself.
func pgPanel(r *pgResp) *goquery.Selection {
	if p := r.Doc().Find("#hold-panel"); p.Length() > 0 {
		return p
	}
	return r.Doc().Find("body")
}

var pgManagePath = regexp.MustCompile(`^/manage/([A-Za-z0-9_-]{16,})$`)

// pgBookViaPages books start through the pages without JavaScript and
// returns the manage token.
func pgBookViaPages(t *testing.T, cl *pgClient, c pgClinic, typ db.AppointmentType, sp uuid.UUID, start time.Time, name, email string) string {
	t.Helper()
	held := pgHoldNoJS(t, cl, c, typ, sp, start).Want(http.StatusOK)
	f := pgDetails(t, held.Doc(), name, email, "+49 30 1234567")
	r := cl.Post(f.Action, f.Values).Want(http.StatusSeeOther)
	m := pgManagePath.FindStringSubmatch(r.Header.Get("Location"))
	if m == nil {
		t.Fatalf("confirm redirects to %q, want /manage/{token}", r.Header.Get("Location"))
	}
	return m[1]
}

// pgSummary reads the manage page's summary list: dt -> dd text.
func pgSummary(t *testing.T, r *pgResp) map[string]string {
	t.Helper()
	out := map[string]string{}
	dl := r.Doc().Find(`[data-testid="summary"]`)
	if dl.Length() != 1 {
		t.Fatalf("%s: no summary on the manage page:\n%s", r.what, pgClip(r.Body, 2000))
	}
	dl.Find("dt").Each(func(_ int, dt *goquery.Selection) {
		out[pgText(dt)] = pgText(dt.NextFiltered("dd"))
	})
	return out
}

func pgMonday(c pgClinic, t time.Time) time.Time {
	l := t.In(c.Loc)
	d := time.Date(l.Year(), l.Month(), l.Day(), 12, 0, 0, 0, c.Loc)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

func TestPageHomeListsClinics(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	app := pgNewApp(t, web.Options{})
	a, b := pgNewClinic(t, pool), pgNewClinic(t, pool)
	r := pgNewClient(t, app.TS.URL).Get("/").Want(http.StatusOK)
	pgWantFullPage(t, r)
	for _, c := range []pgClinic{a, b} {
		link := r.Doc().Find(`a[href="/c/` + c.Slug + `"]`)
		if link.Length() != 1 || pgText(link) != c.Name {
			t.Fatalf("home lists %s as %d link(s) %q", c.Slug, link.Length(), pgText(link))
		}
		if !strings.Contains(pgText(link.Closest("li")), c.Address) {
			t.Errorf("home shows no address for %s", c.Slug)
		}
	}
}

func TestPageHomeRedirectsToTheOnlyClinic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := postgres.Connect(ctx, testkit.FreshDB(t), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool, nil); err != nil {
		t.Fatal(err)
	}
	c := pgNewClinic(t, pool)
	app := pgNewAppOn(t, pool, testkit.Redis(t), web.Options{})
	r := pgNewClient(t, app.TS.URL).Get("/").Want(http.StatusFound)
	if loc := r.Header.Get("Location"); loc != "/c/"+c.Slug {
		t.Fatalf("Location %q, want /c/%s", loc, c.Slug)
	}
}

func TestPageClinicShowsTypesDurationsAndSpecialists(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	r := pgNewClient(t, app.TS.URL).Get("/c/" + c.Slug).Want(http.StatusOK)
	pgWantFullPage(t, r)
	d := r.Doc()
	if got := pgText(d.Find("h1")); got != c.Name {
		t.Errorf("h1 %q, want %q", got, c.Name)
	}
	if head := pgText(d.Find(".page-head")); !strings.Contains(head, "Europe/Berlin") || !strings.Contains(head, "Hauptstraße 5") {
		t.Errorf("the clinic's head shows no address or time zone: %q", head)
	}
	cards := d.Find(`[data-testid="types"] > li`)
	if cards.Length() != 2 {
		t.Fatalf("%d type cards, want 2", cards.Length())
	}
	want := map[string]struct {
		id   uuid.UUID
		mins string
	}{
		"Consultation": {c.Types[0].ID, "30 minutes"},
		"Check-up":     {c.Types[1].ID, "60 minutes"},
	}
	cards.Each(func(_ int, card *goquery.Selection) {
		a := card.Find("h3 a")
		w, ok := want[pgText(a)]
		if !ok {
			t.Errorf("unexpected type card %q", pgText(card))
			return
		}
		delete(want, pgText(a))
		if href, _ := a.Attr("href"); href != "/c/"+c.Slug+"/book/"+w.id.String() {
			t.Errorf("%s books at %q", pgText(a), href)
		}
		text := pgText(card)
		if !strings.Contains(text, w.mins) {
			t.Errorf("%s card lacks %q: %q", pgText(a), w.mins, text)
		}
		if !strings.Contains(text, "With Specialist 1 or Specialist 2") {
			t.Errorf("%s card does not name who performs it: %q", pgText(a), text)
		}
	})
	if !strings.Contains(pgText(cards.First())+pgText(cards.Last()), "A first talk about what brings you here.") {
		t.Error("the type's description is missing")
	}
}

func TestPageUnknownClinicIsAnHTMLNotFoundPage(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	cl := pgNewClient(t, app.TS.URL)
	for _, p := range []string{
		"/c/no-such-clinic-" + strings.ToLower(uuid.NewString()[:8]),
		"/c/no-such-clinic/book/" + c.Type0().ID.String(),
		"/kiosk/no-such-clinic",
		"/manage/not-a-real-token-000000000000",
	} {
		pgWantErrorPage(t, cl.Get(p), http.StatusNotFound)
	}
	// A browser that sends no Accept at all, or */*, still gets the page.
	for _, accept := range []string{"*/*", ""} {
		req, _ := http.NewRequest(http.MethodGet, app.TS.URL+"/c/no-such-clinic", nil)
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("Accept %q: %d %s, want a 404 HTML page", accept, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
}

func TestPageBookingWeekGrid(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ := c.Type0()
	day := c.At(8, 10, 0) // a day of next week: every slot is in the future
	monday := pgMonday(c, day)
	week := monday.Format("2006-01-02")
	sp1, sp2 := c.Specialists[0], c.Specialists[1]

	for _, filter := range []uuid.UUID{uuid.Nil, sp1.ID} {
		t.Run("filter="+filter.String()[:8], func(t *testing.T) {
			cl := pgNewClient(t, app.TS.URL)
			r := cl.Get(c.BookURL(typ, day, filter)).Want(http.StatusOK)
			pgWantFullPage(t, r)
			d := r.Doc()
			q := ""
			if filter != uuid.Nil {
				q = "&specialist=" + filter.String()
			}
			wantLabel := monday.Format("2 Jan") + " – " + monday.AddDate(0, 0, 6).Format("2 Jan 2006")
			if got := pgText(d.Find(`[data-testid="week-label"]`)); got != wantLabel {
				t.Errorf("week label %q, want %q", got, wantLabel)
			}
			if href, _ := d.Find(`a[rel="prev"]`).Attr("href"); href != c.BookPath(typ)+"?week="+monday.AddDate(0, 0, -7).Format("2006-01-02")+q {
				t.Errorf("previous week link %q", href)
			}
			if href, _ := d.Find(`a[rel="next"]`).Attr("href"); href != c.BookPath(typ)+"?week="+monday.AddDate(0, 0, 7).Format("2006-01-02")+q {
				t.Errorf("next week link %q", href)
			}
			if !strings.Contains(pgText(d.Find(".page-head")), "All times are Europe/Berlin time.") {
				t.Error("the page does not say which time zone its times are in")
			}
			// The specialist filter: any, then each specialist; a real label.
			form := d.Find("form.filter")
			if a, _ := form.Attr("action"); a != c.BookPath(typ) {
				t.Errorf("filter posts to %q", a)
			}
			if v, _ := form.Find(`input[name="week"]`).Attr("value"); v != week {
				t.Errorf("filter keeps week %q, want %s", v, week)
			}
			if form.Find(`label[for="specialist"]`).Length() != 1 {
				t.Error("the specialist filter has no label")
			}
			var opts []string
			form.Find("select#specialist option").Each(func(_ int, o *goquery.Selection) {
				v, _ := o.Attr("value")
				_, sel := o.Attr("selected")
				opts = append(opts, fmt.Sprintf("%s=%s/%v", v, pgText(o), sel))
			})
			fv := ""
			if filter != uuid.Nil {
				fv = filter.String()
			}
			wantOpts := []string{
				fmt.Sprintf("=Any specialist/%v", fv == ""),
				fmt.Sprintf("%s=%s/%v", sp1.ID, sp1.Name, fv == sp1.ID.String()),
				fmt.Sprintf("%s=%s/%v", sp2.ID, sp2.Name, fv == sp2.ID.String()),
			}
			if strings.Join(opts, " ") != strings.Join(wantOpts, " ") {
				t.Errorf("filter options\n got %v\nwant %v", opts, wantOpts)
			}
			// The live stream of this very view.
			g := d.Find(`[data-testid="week-grid"]`)
			// ...with the state the page shows, which the stream then skips.
			if sc, _ := g.Attr("sse-connect"); !strings.HasPrefix(sc, c.BookPath(typ)+"/live?week="+week+q+"&state=") {
				t.Errorf("sse-connect %q", sc)
			}
			// Seven days, sixteen half-hour cells each (09:00-16:30), all free.
			days := g.Find("section.day")
			if days.Length() != 7 {
				t.Fatalf("%d days", days.Length())
			}
			days.Each(func(i int, s *goquery.Selection) {
				date := monday.AddDate(0, 0, i)
				if dd, _ := s.Attr("data-date"); dd != date.Format("2006-01-02") {
					t.Errorf("day %d is %q", i, dd)
				}
				if got := pgText(s.Find("h3")); got != date.Format("Mon 2 Jan") {
					t.Errorf("day %d heading %q", i, got)
				}
				cells := s.Find(`li[data-testid="slot"]`)
				if cells.Length() != 16 {
					t.Errorf("day %d has %d cells, want 16", i, cells.Length())
				}
				cells.Each(func(j int, cell *goquery.Selection) {
					start := time.Date(date.Year(), date.Month(), date.Day(), 9, 30*j, 0, 0, c.Loc)
					id, _ := cell.Attr("id")
					st, _ := cell.Attr("data-state")
					ds, _ := cell.Attr("data-start")
					swap, _ := cell.Attr("sse-swap")
					if id != pgCellID(filter, start) || st != "free" || ds != start.UTC().Format(time.RFC3339) || swap != id {
						t.Errorf("cell %d/%d: id %q state %q start %q sse-swap %q; want %s free %s", i, j, id, st, ds, swap,
							pgCellID(filter, start), start.UTC().Format(time.RFC3339))
						return
					}
					btn := cell.Find("button")
					if pgText(btn) != start.Format("15:04") {
						t.Errorf("cell %s shows %q, want local %s", id, pgText(btn), start.Format("15:04"))
					}
					if l, _ := btn.Attr("aria-label"); l != "Hold "+start.Format("15:04") {
						t.Errorf("cell %s button aria-label %q", id, l)
					}
					f := pgFormOf(t, cell.Find("form"), id)
					if f.Action != c.BookPath(typ)+"/hold" || f.Values.Get("start") != ds || f.Values.Get("specialist") != fv {
						t.Errorf("cell %s form %+v", id, f)
					}
				})
			})
			if d.Find(`[aria-live]`).Length() == 0 {
				t.Error("no aria-live region for changes in place")
			}
		})
	}

	// Taken and held cells read as such, in text as well as state.
	t.Run("TakenAndHeld", func(t *testing.T) {
		takenAt, heldAt := c.At(8, 11, 0), c.At(8, 12, 0)
		pgBookDirect(t, app, c, typ, sp1.ID, takenAt, "Someone Else")
		other := pgNewClient(t, app.TS.URL)
		pgHoldNoJS(t, other, c, typ, sp1.ID, heldAt).Want(http.StatusOK)
		r := pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, day, sp1.ID)).Want(http.StatusOK)
		for _, w := range []struct {
			at          time.Time
			state, text string
		}{{takenAt, "taken", "Taken"}, {heldAt, "held", "Held"}} {
			cell := r.Doc().Find("li#" + pgCellID(sp1.ID, w.at))
			if st, _ := cell.Attr("data-state"); st != w.state || !strings.Contains(pgText(cell), w.text) || cell.Find("button").Length() != 0 {
				t.Errorf("cell at %s: state %q text %q, want %s with %q and no button", w.at.Format("15:04"), st, pgText(cell), w.state, w.text)
			}
		}
		// With any specialist, one of two busy still leaves the time free.
		any := pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, day, uuid.Nil)).Want(http.StatusOK)
		if st := pgState(any.Doc(), pgCellID(uuid.Nil, takenAt)); st != "free" {
			t.Errorf("any-specialist cell at the taken time is %q, want free (the other specialist is free)", st)
		}
	})
}

func TestPageBookingErrorsAreHTMLPages(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	pool := app.Pool
	c, other := pgNewClinic(t, pool), pgNewClinic(t, pool)
	cl := pgNewClient(t, app.TS.URL)
	typ := c.Type0()
	for _, tc := range []struct {
		name, path string
		status     int
	}{
		{"UnknownType", "/c/" + c.Slug + "/book/" + uuid.NewString(), http.StatusNotFound},
		{"TypeNotAUUID", "/c/" + c.Slug + "/book/consultation", http.StatusNotFound},
		{"TypeOfAnotherClinic", "/c/" + c.Slug + "/book/" + other.Type0().ID.String(), http.StatusNotFound},
		{"UnknownClinic", "/c/nope-" + c.Slug + "/book/" + typ.ID.String(), http.StatusNotFound},
		{"BadWeek", c.BookPath(typ) + "?week=2026-13-45", http.StatusBadRequest},
		{"WeekNotADate", c.BookPath(typ) + "?week=next", http.StatusBadRequest},
		{"SpecialistNotAUUID", c.BookPath(typ) + "?specialist=dr-who", http.StatusBadRequest},
		{"SpecialistOfAnotherClinic", c.BookPath(typ) + "?specialist=" + other.Specialists[0].ID.String(), http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pgWantErrorPage(t, cl.Get(tc.path), tc.status)
		})
	}
	t.Run("HoldOnAnotherClinicsType", func(t *testing.T) {
		r := cl.Post("/c/"+c.Slug+"/book/"+other.Type0().ID.String()+"/hold",
			url.Values{"start": {c.At(2, 10, 0).UTC().Format(time.RFC3339)}})
		pgWantErrorPage(t, r, http.StatusNotFound)
	})
}

func TestPageHoldWithoutJavaScriptAnswersTheWholePage(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 10, 0)
	cl := pgNewClient(t, app.TS.URL)

	page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	// The browser's identity is a signed cookie that script cannot read;
	// a page view stores nothing, so it sets no session.
	sc := page.Header.Get("Set-Cookie")
	if !strings.HasPrefix(sc, "clinic_client=b_") || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") {
		t.Errorf("client cookie %q: want clinic_client, HttpOnly, SameSite=Lax", sc)
	}
	if len(page.Header.Values("Set-Cookie")) != 1 {
		t.Errorf("a page view sets %q: want the client cookie alone", page.Header.Values("Set-Cookie"))
	}
	if !strings.Contains(pgText(page.Doc().Find("#hold-panel")), "Pick a free time") {
		t.Errorf("empty panel: %q", pgText(page.Doc().Find("#hold-panel")))
	}
	f := pgCellForm(t, page.Doc(), pgCellID(sp.ID, start))
	f.Values.Set("clientId", "b_someone_else") // a page cannot choose its client id
	r := cl.Post(f.Action, f.Values).Want(http.StatusOK)
	pgWantFullPage(t, r)
	held := r.Doc().Find(`#hold-panel [data-testid="held"]`)
	if held.Length() != 1 {
		t.Fatalf("no held panel in:\n%s", pgClip(r.Body, 3000))
	}
	text := pgText(held)
	for _, w := range []string{"Held for you", start.Format("Monday 2 January 2006, 15:04") + " (Europe/Berlin)", "with " + sp.Name} {
		if !strings.Contains(text, w) {
			t.Errorf("held panel lacks %q: %q", w, text)
		}
	}
	if exp, _ := held.Find(".countdown").Attr("data-expires"); exp == "" {
		t.Error("no countdown expiry")
	} else if at, err := time.Parse(time.RFC3339, exp); err != nil || time.Until(at) <= 0 || time.Until(at) > time.Minute {
		t.Errorf("countdown expires at %q (%v)", exp, err)
	}
	details := pgFormOf(t, held.Find(`[data-testid="details-form"]`), "details form")
	if details.Action != c.BookPath(typ)+"/confirm" || !strings.HasPrefix(details.Values.Get("holdId"), "h") {
		t.Errorf("details form %+v", details)
	}
	for _, id := range []string{"name", "email", "phone"} {
		if held.Find(`label[for="`+id+`"]`).Length() != 1 || held.Find(`input#`+id+`[name="`+id+`"]`).Length() != 1 {
			t.Errorf("details form field %s without a label or input", id)
		}
	}
	if held.Find(`[data-testid="details-form"] button[type="submit"]`).Length() != 1 {
		t.Error("no confirm button")
	}
	// The grid around it is the week and filter the patient was looking at,
	// with the cell now this browser's.
	wantWeek := pgText(page.Doc().Find(`[data-testid="week-label"]`))
	if got := pgText(r.Doc().Find(`[data-testid="week-label"]`)); got != wantWeek {
		t.Errorf("the whole page answering the hold shows the week %q; the patient was on %q", got, wantWeek)
	}
	if got, _ := r.Doc().Find("select#specialist option[selected]").Attr("value"); got != sp.ID.String() {
		t.Errorf("the whole page answering the hold lost the specialist filter (selected %q, want %s)", got, sp.ID)
	}
	if st := pgState(r.Doc(), pgCellID(sp.ID, start)); st != "mine" {
		t.Errorf("the held cell on the page is %q, want mine", st)
	}
	// A reload does not lose the hold.
	again := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	if v, _ := again.Doc().Find(`[data-testid="held"] input[name="holdId"]`).Attr("value"); v != details.Values.Get("holdId") {
		t.Errorf("after a reload the panel holds %q, want %q", v, details.Values.Get("holdId"))
	}
	// Everyone else sees it held.
	if st := pgState(pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK).Doc(), pgCellID(sp.ID, start)); st != "held" {
		t.Errorf("another browser sees the cell %q, want held", st)
	}
}

func TestPageHoldWithHtmxAnswersThePanelAlone(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[1]
	start := c.At(3, 15, 30)
	cl := pgNewClient(t, app.TS.URL)
	page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	f := pgCellForm(t, page.Doc(), pgCellID(sp.ID, start))
	r := cl.HXPost(f.Action, f.Values).Want(http.StatusOK)
	pgWantFragment(t, r)
	held := r.Doc().Find(`[data-testid="held"]`)
	if held.Length() != 1 || !strings.Contains(pgText(held), start.Format("15:04")) {
		t.Fatalf("fragment is not the held panel:\n%s", r.Body)
	}
	form := held.Find(`[data-testid="details-form"]`)
	if hx, _ := form.Attr("hx-post"); hx != c.BookPath(typ)+"/confirm" {
		t.Errorf("details form hx-post %q", hx)
	}
	if tg, _ := form.Attr("hx-target"); tg != "#hold-panel" {
		t.Errorf("details form hx-target %q", tg)
	}
	beat := held.Find(".heartbeat")
	if hx, _ := beat.Attr("hx-post"); hx != c.BookPath(typ)+"/heartbeat" {
		t.Errorf("heartbeat hx-post %q", hx)
	}
	if vary := strings.Join(r.Header.Values("Vary"), ", "); !strings.Contains(vary, "HX-Request") {
		t.Errorf("Vary %q: a page and its fragment share a URL", vary)
	}
}

func TestPageHoldOnATakenSlotSaysJustTaken(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 11, 0)
	cl := pgNewClient(t, app.TS.URL)
	page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	f := pgCellForm(t, page.Doc(), pgCellID(sp.ID, start)) // the page as it was
	pgBookDirect(t, app, c, typ, sp.ID, start, "Quick Other")

	r := cl.Post(f.Action, f.Values).Want(http.StatusConflict)
	pgWantFullPage(t, r)
	p := r.Doc().Find(`#hold-panel [data-testid="problem"]`)
	if !strings.Contains(pgText(p), "just taken") {
		t.Errorf("panel %q, want it to say the time was just taken", pgText(pgPanel(r)))
	}
	if role, _ := p.Attr("role"); role != "alert" {
		t.Errorf("problem panel role %q", role)
	}
	if st := pgState(cl.Get(c.BookURL(typ, start, sp.ID)).Doc(), pgCellID(sp.ID, start)); st != "taken" {
		t.Errorf("the grid shows the cell %q, want taken", st)
	}
	hx := cl.HXPost(f.Action, f.Values).Want(http.StatusConflict)
	pgWantFragment(t, hx)
	if !strings.Contains(pgText(hx.Doc().Find(`[data-testid="problem"]`)), "just taken") {
		t.Errorf("htmx panel: %s", hx.Body)
	}
}

func TestPageHoldOnASlotHeldBySomeoneElseIsLocked(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 13, 0)
	a, b := pgNewClient(t, app.TS.URL), pgNewClient(t, app.TS.URL)
	pageB := b.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	f := pgCellForm(t, pageB.Doc(), pgCellID(sp.ID, start))
	pgHoldNoJS(t, a, c, typ, sp.ID, start).Want(http.StatusOK)

	for _, hx := range []bool{false, true} {
		var r *pgResp
		if hx {
			r = b.HXPost(f.Action, f.Values)
			r.Want(http.StatusLocked)
			pgWantFragment(t, r)
		} else {
			r = b.Post(f.Action, f.Values).Want(http.StatusLocked)
			pgWantFullPage(t, r)
		}
		if !strings.Contains(pgText(r.Doc().Find(`[data-testid="problem"]`)), "Someone else is booking that time") {
			t.Errorf("htmx=%v: panel %q", hx, pgText(pgPanel(r)))
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 31 {
			t.Errorf("htmx=%v: Retry-After %q", hx, r.Header.Get("Retry-After"))
		}
	}
}

func TestPageHoldWithABadStartIsRefusedInPlace(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ := c.Type0()
	cl := pgNewClient(t, app.TS.URL)
	day := c.At(2, 10, 0)
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"Missing", url.Values{}},
		{"NotATime", url.Values{"start": {"tomorrow at ten"}}},
		{"NotASlot", url.Values{"start": {c.At(2, 3, 0).UTC().Format(time.RFC3339)}}},
		{"OffTheGrid", url.Values{"start": {c.At(2, 10, 7).UTC().Format(time.RFC3339)}}},
		{"BadSpecialist", url.Values{"start": {day.UTC().Format(time.RFC3339)}, "specialist": {"nobody"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cl.Post(c.BookPath(typ)+"/hold?week="+c.Week(day), tc.form).Want(http.StatusBadRequest)
			pgWantFullPage(t, r)
			if p := r.Doc().Find(`#hold-panel [data-testid="problem"]`); p.Length() != 1 || pgText(p) == "" {
				t.Errorf("no problem panel: %q", pgText(pgPanel(r)))
			}
			hx := cl.HXPost(c.BookPath(typ)+"/hold", tc.form).Want(http.StatusBadRequest)
			pgWantFragment(t, hx)
		})
	}
}

func TestPageConfirmShowsFieldErrorsInPlaceAndKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 9, 30)
	cl := pgNewClient(t, app.TS.URL)
	held := pgHoldNoJS(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
	holdID := pgDetails(t, held.Doc(), "", "", "").Values.Get("holdId")

	for _, tc := range []struct {
		name, nm, email, phone, field string
	}{
		{"NoName", "", "ada@example.org", "", "name"},
		{"BadEmail", "Ada Lovelace", "ada-at-example", "", "email"},
		{"NoEmail", "Ada Lovelace", "", "+49 30 1234567", "email"},
		{"BadPhone", "Ada Lovelace", "ada@example.org", "call me maybe", "phone"},
	} {
		for _, hx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/htmx=%v", tc.name, hx), func(t *testing.T) {
				f := pgDetails(t, held.Doc(), tc.nm, tc.email, tc.phone)
				var r *pgResp
				if hx {
					r = cl.HXPost(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
					pgWantFragment(t, r)
				} else {
					r = cl.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
					pgWantFullPage(t, r)
				}
				panel := r.Doc().Find(`[data-testid="held"]`)
				if panel.Length() != 1 {
					t.Fatalf("the hold panel is gone:\n%s", pgClip(r.Body, 2000))
				}
				if v, _ := panel.Find(`input[name="holdId"]`).Attr("value"); v != holdID {
					t.Errorf("the form now holds %q, want the same hold %q", v, holdID)
				}
				msg := panel.Find(`[data-testid="` + tc.field + `-error"]`)
				if pgText(msg) == "" {
					t.Fatalf("no %s-error in:\n%s", tc.field, pgClip(r.Body, 3000))
				}
				in := panel.Find("input#" + tc.field)
				if v, _ := in.Attr("aria-invalid"); v != "true" {
					t.Errorf("%s: aria-invalid %q", tc.field, v)
				}
				if v, _ := in.Attr("aria-describedby"); v != tc.field+"-error" {
					t.Errorf("%s: aria-describedby %q", tc.field, v)
				}
				for id, want := range map[string]string{"name": tc.nm, "email": tc.email, "phone": tc.phone} {
					if v, _ := panel.Find("input#" + id).Attr("value"); v != want {
						t.Errorf("input %s is %q, want what was typed, %q", id, v, want)
					}
				}
				if n := panel.Find(".field-error").Length(); n != 1 {
					t.Errorf("%d field errors, want 1", n)
				}
			})
		}
	}
	// And then it books.
	f := pgDetails(t, held.Doc(), "Ada Lovelace", "ada@example.org", "")
	cl.Post(f.Action, f.Values).Want(http.StatusSeeOther)
}

func TestPageConfirmBooksAndTheManagePageShowsIt(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[1]

	t.Run("WithoutJavaScript", func(t *testing.T) {
		start := c.At(2, 14, 30)
		cl := pgNewClient(t, app.TS.URL)
		token := pgBookViaPages(t, cl, c, typ, sp.ID, start, "Grace Hopper", "grace@example.org")
		r := cl.Get("/manage/" + token).Want(http.StatusOK)
		pgWantFullPage(t, r)
		if got := pgText(r.Doc().Find(`h1[data-testid="booked"]`)); got != "You are booked" {
			t.Errorf("right after booking the page says %q, want \"You are booked\"", got)
		}
		sum := pgSummary(t, r)
		want := map[string]string{
			"What":   "Consultation",
			"When":   start.Format("Monday 2 January 2006, 15:04") + " (Europe/Berlin) – " + start.Add(30*time.Minute).Format("15:04"),
			"With":   sp.Name,
			"Where":  c.Name + ", Hauptstraße 5, 10827 Berlin",
			"For":    "Grace Hopper",
			"Status": "Confirmed",
		}
		for k, v := range want {
			if sum[k] != v {
				t.Errorf("summary %s = %q, want %q", k, sum[k], v)
			}
		}
		if st, _ := r.Doc().Find(`[data-testid="summary"]`).Attr("data-status"); st != "confirmed" {
			t.Errorf("data-status %q", st)
		}
		if href, _ := r.Doc().Find(`[data-testid="manage-link"]`).Attr("href"); href != "/manage/"+token {
			t.Errorf("manage link %q", href)
		}
		if href, _ := r.Doc().Find(`a[download]`).Attr("href"); href != "/manage/"+token+"/calendar.ics" {
			t.Errorf("calendar link %q", href)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q, want no-store (the page has patient data)", cc)
		}
		if rp := r.Header.Get("Referrer-Policy"); rp != "no-referrer" {
			t.Errorf("Referrer-Policy %q", rp)
		}
		// "You are booked" is said once; the link opened later is the booking.
		again := cl.Get("/manage/" + token).Want(http.StatusOK)
		if again.Doc().Find(`[data-testid="booked"]`).Length() != 0 || pgText(again.Doc().Find("h1")) != "Your appointment" {
			t.Errorf("second visit h1 %q", pgText(again.Doc().Find("h1")))
		}
		fresh := pgNewClient(t, app.TS.URL).Get("/manage/" + token).Want(http.StatusOK)
		if pgSummary(t, fresh)["When"] != want["When"] {
			t.Error("another browser with the link sees another booking")
		}
		// And the grid shows it taken, to anyone.
		if st := pgState(pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, start, sp.ID)).Doc(), pgCellID(sp.ID, start)); st != "taken" {
			t.Errorf("booked cell is %q, want taken", st)
		}
	})

	t.Run("WithHtmx", func(t *testing.T) {
		start := c.At(3, 9, 0)
		cl := pgNewClient(t, app.TS.URL)
		page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
		hf := pgCellForm(t, page.Doc(), pgCellID(sp.ID, start))
		held := cl.HXPost(hf.Action, hf.Values).Want(http.StatusOK)
		f := pgDetails(t, held.Doc(), "Alan Turing", "alan@example.org", "")
		r := cl.HXPost(f.Action, f.Values).Want(http.StatusOK)
		to := r.Header.Get("HX-Redirect")
		if !pgManagePath.MatchString(to) {
			t.Fatalf("HX-Redirect %q, want /manage/{token}", to)
		}
		if strings.TrimSpace(r.Body) != "" {
			t.Errorf("a redirect answer has a body: %q", r.Body)
		}
		m := cl.Get(to).Want(http.StatusOK)
		if m.Doc().Find(`[data-testid="booked"]`).Length() != 1 {
			t.Error("no \"You are booked\" after an htmx confirm")
		}
	})
}

func TestPageConfirmOfSomeoneElsesHoldIsRefused(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 16, 0)
	a, b := pgNewClient(t, app.TS.URL), pgNewClient(t, app.TS.URL)
	held := pgHoldNoJS(t, a, c, typ, sp.ID, start).Want(http.StatusOK)
	f := pgDetails(t, held.Doc(), "Mallory", "mallory@example.org", "")
	r := b.Post(f.Action, f.Values).Want(http.StatusForbidden)
	pgWantFullPage(t, r)
	if !strings.Contains(pgText(r.Doc().Find(`[data-testid="problem"]`)), "not yours") {
		t.Errorf("panel %q", pgText(pgPanel(r)))
	}
	rel := pgFormOf(t, held.Doc().Find(`[data-testid="held"] form`).Last(), "release form")
	b.Post(rel.Action, rel.Values).Want(http.StatusForbidden)
	// A's hold is untouched: A books.
	a.Post(f.Action, f.Values).Want(http.StatusSeeOther)
}

func TestPageHeartbeatAndRelease(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(4, 10, 30)
	cl := pgNewClient(t, app.TS.URL)
	page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	hf := pgCellForm(t, page.Doc(), pgCellID(sp.ID, start))
	held := cl.HXPost(hf.Action, hf.Values).Want(http.StatusOK)
	beat := held.Doc().Find(".heartbeat")
	beatURL, _ := beat.Attr("hx-post")
	vals, _ := beat.Attr("hx-vals")
	m := regexp.MustCompile(`"holdId":"([^"]+)"`).FindStringSubmatch(vals)
	if m == nil {
		t.Fatalf("heartbeat hx-vals %q", vals)
	}
	cl.HXPost(beatURL, url.Values{"holdId": {m[1]}}).Want(http.StatusNoContent)

	rel := pgFormOf(t, held.Doc().Find(`[data-testid="held"] form`).Last(), "release form")
	r := cl.HXPost(rel.Action, rel.Values).Want(http.StatusOK)
	pgWantFragment(t, r)
	if !strings.Contains(pgText(r.Doc().Find("body")), "Released") {
		t.Errorf("after release: %q", r.Body)
	}
	if st := pgState(pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, start, sp.ID)).Doc(), pgCellID(sp.ID, start)); st != "free" {
		t.Errorf("released cell is %q, want free", st)
	}
	// A heartbeat for the released hold tells the page it is gone.
	gone := cl.HXPost(beatURL, url.Values{"holdId": {m[1]}}).Want(http.StatusGone)
	if !strings.Contains(pgText(gone.Doc().Find(`[data-testid="problem"]`)), "expired") {
		t.Errorf("heartbeat after release: %q", gone.Body)
	}
}

func TestPageExpiredHoldSaysSoAndOffersToHoldAgain(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{HoldTTL: time.Second})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 15, 0)

	// pgWaitExpired waits until the hold is gone from the store.
	pgWaitExpired := func(holdID string) {
		pgWaitFor(t, 10*time.Second, "the hold to expire", func() bool {
			hs, err := app.Deps.Holds.Active(context.Background(), c.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				if h.HoldID == holdID {
					return false
				}
			}
			return true
		})
	}
	wantRetry := func(t *testing.T, r *pgResp) {
		t.Helper()
		p := r.Doc().Find(`[data-testid="problem"]`)
		if !strings.Contains(pgText(p), "expired") {
			t.Fatalf("panel %q, want it to say the hold expired", pgText(pgPanel(r)))
		}
		btn := p.Find("form button")
		if !strings.Contains(pgText(btn), "Hold it again") {
			t.Fatalf("the expired panel offers no \"Hold it again\" button:\n%s", pgClip(pgPanel(r).Text(), 800))
		}
		f := pgFormOf(t, btn, "hold again")
		if f.Values.Get("start") != start.UTC().Format(time.RFC3339) || f.Values.Get("specialist") != sp.ID.String() {
			t.Errorf("hold-again form %+v", f)
		}
	}

	t.Run("ConfirmWithoutJavaScript", func(t *testing.T) {
		cl := pgNewClient(t, app.TS.URL)
		held := pgHoldNoJS(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
		// The form exactly as the page rendered it.
		f := pgDetails(t, held.Doc(), "Katherine Johnson", "kj@example.org", "")
		pgWaitExpired(f.Values.Get("holdId"))
		r := cl.Post(f.Action, f.Values).Want(http.StatusGone)
		pgWantFullPage(t, r)
		wantRetry(t, r)
		// Holding again brings back what was typed.
		again := pgFormOf(t, r.Doc().Find(`[data-testid="problem"] form`), "hold again")
		h := cl.Post(again.Action, again.Values).Want(http.StatusOK)
		if v, _ := h.Doc().Find(`[data-testid="held"] input#name`).Attr("value"); v != "Katherine Johnson" {
			t.Errorf("held again, the name field is %q", v)
		}
		rel := pgFormOf(t, h.Doc().Find(`[data-testid="held"] form`).Last(), "release")
		cl.Post(rel.Action, rel.Values).Want(http.StatusOK)
	})

	t.Run("HeartbeatWithHtmx", func(t *testing.T) {
		pgWaitFor(t, 10*time.Second, "the slot to be free", func() bool {
			hs, _ := app.Deps.Holds.Active(context.Background(), c.ID)
			return len(hs) == 0
		})
		cl := pgNewClient(t, app.TS.URL)
		page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
		hf := pgCellForm(t, page.Doc(), pgCellID(sp.ID, start))
		held := cl.HXPost(hf.Action, hf.Values).Want(http.StatusOK)
		beat := held.Doc().Find(".heartbeat")
		beatURL, _ := beat.Attr("hx-post")
		vals, _ := beat.Attr("hx-vals")
		m := regexp.MustCompile(`"holdId":"([^"]+)"`).FindStringSubmatch(vals)
		if m == nil {
			t.Fatalf("heartbeat hx-vals %q", vals)
		}
		pgWaitExpired(m[1])
		// What htmx sends: the element's hx-vals.
		var hv map[string]string
		if err := json.Unmarshal([]byte(vals), &hv); err != nil {
			t.Fatalf("hx-vals %q: %v", vals, err)
		}
		form := url.Values{}
		for k, v := range hv {
			form.Set(k, v)
		}
		r := cl.HXPost(beatURL, form).Want(http.StatusGone)
		pgWantFragment(t, r)
		wantRetry(t, r)
	})
}

func TestPageSlotTakenMeanwhileKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	first, second := c.At(2, 10, 0), c.At(2, 11, 30)
	cl := pgNewClient(t, app.TS.URL)
	held := pgHoldNoJS(t, cl, c, typ, sp.ID, first).Want(http.StatusOK)
	// Staff book the time at the desk while the patient types.
	pgBookDirect(t, app, c, typ, sp.ID, first, "Walk In")

	f := pgDetails(t, held.Doc(), "Hedy Lamarr", "hedy@example.org", "+43 1 5551234")
	r := cl.Post(f.Action, f.Values).Want(http.StatusConflict)
	pgWantFullPage(t, r)
	if !strings.Contains(pgText(r.Doc().Find(`#hold-panel [data-testid="problem"]`)), "just taken") {
		t.Fatalf("panel %q, want \"just taken\"", pgText(pgPanel(r)))
	}
	page := cl.Get(c.BookURL(typ, first, sp.ID)).Want(http.StatusOK)
	if st := pgState(page.Doc(), pgCellID(sp.ID, first)); st != "taken" {
		t.Errorf("the grid shows the lost time %q, want taken", st)
	}
	// The patient picks another time: the details are still there.
	next := pgCellForm(t, page.Doc(), pgCellID(sp.ID, second))
	h := cl.Post(next.Action, next.Values)
	if h.Status != http.StatusOK {
		t.Fatalf("holding another time after \"just taken, pick another\": %d, panel %q", h.Status, pgText(pgPanel(h)))
	}
	panel := h.Doc().Find(`[data-testid="held"]`)
	for id, want := range map[string]string{"name": "Hedy Lamarr", "email": "hedy@example.org", "phone": "+43 1 5551234"} {
		if v, _ := panel.Find("input#" + id).Attr("value"); v != want {
			t.Errorf("after the lost slot, %s is %q, want %q", id, v, want)
		}
	}
	// And it books with them.
	f2 := pgFormOf(t, panel.Find(`[data-testid="details-form"]`), "details")
	cl.Post(f2.Action, f2.Values).Want(http.StatusSeeOther)
}

func TestPageManageCancelAsksFirstThenCancels(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(3, 10, 0)
	cl := pgNewClient(t, app.TS.URL)
	token := pgBookViaPages(t, cl, c, typ, sp.ID, start, "Rosalind Franklin", "rosalind@example.org")
	page := cl.Get("/manage/" + token).Want(http.StatusOK)
	cancel := pgFormOf(t, page.Doc().Find(`form[action="/manage/`+token+`/cancel"]`), "cancel form")

	ask := cl.Post(cancel.Action, cancel.Values).Want(http.StatusOK)
	pgWantFullPage(t, ask)
	if got := pgText(ask.Doc().Find("h1")); got != "Cancel this appointment?" {
		t.Errorf("confirmation page h1 %q", got)
	}
	if !strings.Contains(pgText(ask.Doc().Find("main")), start.Format("Monday 2 January 2006, 15:04")) {
		t.Error("the confirmation does not say which appointment")
	}
	yes := pgFormOf(t, ask.Doc().Find(`button.danger`), "yes form")
	if yes.Values.Get("confirm") != "yes" || !strings.Contains(pgText(ask.Doc().Find("button.danger")), "Yes, cancel it") {
		t.Errorf("confirmation form %+v", yes)
	}
	if ask.Doc().Find(`label[for="reason"]`).Length() != 1 {
		t.Error("reason field without a label")
	}
	if href, _ := ask.Doc().Find(`a[href="/manage/` + token + `"]`).Attr("href"); href == "" {
		t.Error("no way back (\"No, keep it\")")
	}
	// Asking did not cancel.
	if sum := pgSummary(t, cl.Get("/manage/"+token)); sum["Status"] != "Confirmed" {
		t.Fatalf("after the question alone the booking is %q", sum["Status"])
	}
	if st := pgState(pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, start, sp.ID)).Doc(), pgCellID(sp.ID, start)); st != "taken" {
		t.Fatalf("cell %q before the cancel", st)
	}

	yes.Values.Set("reason", "Feeling better")
	r := cl.Post(yes.Action, yes.Values).Want(http.StatusSeeOther)
	if r.Header.Get("Location") != "/manage/"+token {
		t.Fatalf("cancel redirects to %q", r.Header.Get("Location"))
	}
	done := cl.Get("/manage/" + token).Want(http.StatusOK)
	if sum := pgSummary(t, done); sum["Status"] != "Cancelled" {
		t.Errorf("status %q after cancel", sum["Status"])
	}
	if st, _ := done.Doc().Find(`[data-testid="summary"]`).Attr("data-status"); st != "cancelled" {
		t.Errorf("data-status %q", st)
	}
	if !strings.Contains(pgText(done.Doc().Find(".notice")), "cancelled") {
		t.Errorf("notice %q", pgText(done.Doc().Find(".notice")))
	}
	if done.Doc().Find(`form[action$="/cancel"]`).Length() != 0 || done.Doc().Find(`a[download]`).Length() != 0 {
		t.Error("a cancelled booking still offers cancel or calendar")
	}
	if st := pgState(pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, start, sp.ID)).Doc(), pgCellID(sp.ID, start)); st != "free" {
		t.Errorf("the cancelled time is %q, want free", st)
	}
	// Cancelling again is harmless; moving a cancelled booking is refused on a page.
	cl.Post(yes.Action, yes.Values).Want(http.StatusSeeOther)
	pgWantErrorPage(t, cl.Get("/manage/"+token+"/reschedule"), http.StatusConflict)
}

func TestPageManageUnknownTokenIsNotFound(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	cl := pgNewClient(t, app.TS.URL)
	tok := "nope" + strings.ReplaceAll(uuid.NewString(), "-", "")
	pgWantErrorPage(t, cl.Get("/manage/"+tok), http.StatusNotFound)
	pgWantErrorPage(t, cl.Get("/manage/"+tok+"/reschedule"), http.StatusNotFound)
	pgWantErrorPage(t, cl.Get("/manage/"+tok+"/calendar.ics"), http.StatusNotFound)
	pgWantErrorPage(t, cl.Post("/manage/"+tok+"/cancel", url.Values{"confirm": {"yes"}}), http.StatusNotFound)
	pgWantErrorPage(t, cl.Post("/manage/"+tok+"/reschedule", url.Values{"start": {time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)}}), http.StatusNotFound)
}

func TestPageManageRescheduleMovesTheBooking(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	from, to := c.At(3, 10, 0), c.At(3, 14, 0)
	cl := pgNewClient(t, app.TS.URL)
	token := pgBookViaPages(t, cl, c, typ, sp.ID, from, "Lise Meitner", "lise@example.org")
	manage := cl.Get("/manage/" + token).Want(http.StatusOK)
	link, _ := manage.Doc().Find(`a[href="/manage/` + token + `/reschedule"]`).Attr("href")
	if link == "" {
		t.Fatal("the manage page has no link to move the booking")
	}

	page := cl.Get(link + "?week=" + c.Week(to)).Want(http.StatusOK)
	pgWantFullPage(t, page)
	d := page.Doc()
	if h := pgText(d.Find("h1")); !strings.HasPrefix(h, "Move your appointment: Consultation") {
		t.Errorf("h1 %q", h)
	}
	if d.Find("select#specialist").Length() != 0 {
		t.Error("the move grid offers a specialist filter")
	}
	if !strings.Contains(pgText(d.Find("#hold-panel")), "Your current time: "+from.Format("Monday 2 January 2006, 15:04")) {
		t.Errorf("panel %q", pgText(d.Find("#hold-panel")))
	}
	if sc, _ := d.Find(`[data-testid="week-grid"]`).Attr("sse-connect"); !strings.HasPrefix(sc, "/manage/"+token+"/reschedule/live?week=") {
		t.Errorf("sse-connect %q", sc)
	}
	if next, _ := d.Find(`a[rel="next"]`).Attr("href"); !strings.HasPrefix(next, "/manage/"+token+"/reschedule?week=") {
		t.Errorf("next week link %q", next)
	}
	f := pgCellForm(t, d, pgCellID(uuid.Nil, to))
	if f.Action != "/manage/"+token+"/reschedule" {
		t.Errorf("a move cell posts to %q", f.Action)
	}
	r := cl.Post(f.Action, f.Values).Want(http.StatusSeeOther)
	if r.Header.Get("Location") != "/manage/"+token {
		t.Fatalf("move redirects to %q", r.Header.Get("Location"))
	}
	after := cl.Get("/manage/" + token).Want(http.StatusOK)
	sum := pgSummary(t, after)
	if want := to.Format("Monday 2 January 2006, 15:04") + " (Europe/Berlin) – " + to.Add(30*time.Minute).Format("15:04"); sum["When"] != want {
		t.Errorf("after the move, When = %q, want %q", sum["When"], want)
	}
	if sum["Status"] != "Confirmed" || sum["For"] != "Lise Meitner" {
		t.Errorf("after the move: %v", sum)
	}
	if !strings.Contains(pgText(after.Doc().Find(".notice")), "Moved") {
		t.Errorf("notice %q", pgText(after.Doc().Find(".notice")))
	}
	// The old time is free again for the specialist.
	if st := pgState(pgNewClient(t, app.TS.URL).Get(c.BookURL(typ, from, sp.ID)).Doc(), pgCellID(sp.ID, from)); st != "free" {
		t.Errorf("the old time is %q, want free", st)
	}
	// A start that is not a time of the week is refused in place.
	bad := cl.Post("/manage/"+token+"/reschedule", url.Values{"start": {"soon"}}).Want(http.StatusBadRequest)
	pgWantFullPage(t, bad)
	if bad.Doc().Find(`#hold-panel [data-testid="problem"]`).Length() != 1 {
		t.Errorf("bad move: %q", pgText(pgPanel(bad)))
	}
	pgWantErrorPage(t, cl.Get("/manage/"+token+"/reschedule?week=someday"), http.StatusBadRequest)
}

// pgStream reads an SSE stream in the background.
type pgStream struct {
	mu   sync.Mutex
	text strings.Builder
}

// pgOpenStream connects; a stream that does not open is an error of the
// test (reported), and nil.
func pgOpenStream(t *testing.T, u string) *pgStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Errorf("stream %s: %v", u, err)
		return nil
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b := make([]byte, 300)
		n, _ := res.Body.Read(b)
		res.Body.Close()
		cancel()
		t.Errorf("stream %s: %d %s %s", u, res.StatusCode, res.Header.Get("Content-Type"), b[:n])
		return nil
	}
	s := &pgStream{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.text.WriteString(sc.Text())
			s.text.WriteByte('\n')
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); res.Body.Close(); <-done })
	return s
}

func (s *pgStream) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

// Latest is the data of the last event named name.
func (s *pgStream) Latest(name string) (string, bool) {
	var data string
	found := false
	for _, ev := range strings.Split(s.Text(), "\n\n") {
		var ename string
		var lines []string
		for _, l := range strings.Split(ev, "\n") {
			switch {
			case strings.HasPrefix(l, "event: "):
				ename = strings.TrimPrefix(l, "event: ")
			case strings.HasPrefix(l, "data: "):
				lines = append(lines, strings.TrimPrefix(l, "data: "))
			}
		}
		if ename == name {
			data, found = strings.Join(lines, "\n"), true
		}
	}
	return data, found
}

// pgKioskTimes reads a kiosk block's times per day.
func pgKioskTimes(block *goquery.Selection) [][]string {
	var out [][]string
	block.Find(".kiosk-day").Each(func(_ int, d *goquery.Selection) {
		var ts []string
		d.Find(".kiosk-time").Each(func(_ int, s *goquery.Selection) { ts = append(ts, pgText(s)) })
		out = append(out, ts)
	})
	return out
}

func pgHas(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func pgKioskBlockID(typ db.AppointmentType, sp db.Specialist) string {
	return "kiosk-" + typ.ID.String()[:8] + "-" + sp.ID.String()[:8]
}

func TestKioskListsFreeTimesAndNoPatientData(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(1, 10, 0) // tomorrow: on the board
	stream := pgOpenStream(t, app.TS.URL+"/kiosk/"+c.Slug+"/live")
	kiosk := pgNewClient(t, app.TS.URL)

	r := kiosk.Get("/kiosk/" + c.Slug).Want(http.StatusOK)
	pgWantFullPage(t, r)
	if sc := r.Header.Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("the kiosk sets cookies: %v", sc)
	}
	k := r.Doc().Find(`[data-testid="kiosk"]`)
	if sc, _ := k.Attr("sse-connect"); sc != "/kiosk/"+c.Slug+"/live" {
		t.Errorf("kiosk sse-connect %q", sc)
	}
	if k.Find("form, button, input").Length() != 0 {
		t.Error("the kiosk has controls: it must be read-only and unable to hold")
	}
	if clock := pgText(k.Find(".kiosk-clock")); !regexp.MustCompile(`^\d\d:\d\d$`).MatchString(clock) {
		t.Errorf("clock %q", clock)
	}
	blocks := k.Find(`[data-testid="kiosk-block"]`)
	if blocks.Length() != 4 {
		t.Fatalf("%d blocks, want one per type and specialist (4)", blocks.Length())
	}
	seen := map[string]bool{}
	blocks.Each(func(_ int, b *goquery.Selection) {
		seen[pgText(b.Find("h2"))+"/"+pgText(b.Find(".kiosk-who"))] = true
		days := b.Find(".kiosk-day h3")
		if days.Length() != 3 || pgText(days.First()) != "Today" {
			t.Errorf("block %q days %q", pgText(b.Find("h2")), pgText(days))
		}
	})
	for _, ty := range c.Types {
		for _, s := range c.Specialists {
			if !seen[ty.Name+"/"+s.Name] {
				t.Errorf("no block for %s with %s (have %v)", ty.Name, s.Name, seen)
			}
		}
	}
	blockID := pgKioskBlockID(typ, sp)
	tomorrow := func(doc *goquery.Document, id string) []string {
		days := pgKioskTimes(doc.Find("#" + id))
		if len(days) != 3 {
			t.Fatalf("block %s has %d days", id, len(days))
		}
		return days[1]
	}
	if ts := tomorrow(r.Doc(), blockID); !pgHas(ts, "10:00") || len(ts) != 16 {
		t.Fatalf("tomorrow for %s: %v, want 16 times with 10:00", sp.Name, ts)
	}
	if stream != nil {
		pgWaitFor(t, 10*time.Second, "the kiosk stream's first state", func() bool {
			_, ok := stream.Latest(blockID)
			return ok
		})
	}

	const name, email, phone = "Zelda Quuxington", "zelda.quux@example.org", "+49 30 9876543"
	patient := pgNewClient(t, app.TS.URL)
	held := pgHoldNoJS(t, patient, c, typ, sp.ID, start).Want(http.StatusOK)
	// Held: the time is not free any more, on the page and on the stream.
	if ts := tomorrow(kiosk.Get("/kiosk/"+c.Slug).Want(http.StatusOK).Doc(), blockID); pgHas(ts, "10:00") {
		t.Errorf("a held time is still on the board: %v", ts)
	}
	f := pgDetails(t, held.Doc(), name, email, phone)
	patient.Post(f.Action, f.Values).Want(http.StatusSeeOther)

	after := kiosk.Get("/kiosk/" + c.Slug).Want(http.StatusOK)
	if ts := tomorrow(after.Doc(), blockID); pgHas(ts, "10:00") || !pgHas(ts, "10:30") {
		t.Errorf("after the booking, tomorrow for %s: %v", sp.Name, ts)
	}
	if ts := tomorrow(after.Doc(), pgKioskBlockID(typ, c.Specialists[1])); !pgHas(ts, "10:00") {
		t.Errorf("the other specialist lost 10:00 too: %v", ts)
	}
	if ts := tomorrow(after.Doc(), pgKioskBlockID(c.Types[1], sp)); pgHas(ts, "10:00") {
		t.Errorf("the same specialist's one-hour check-up still offers 10:00: %v", ts)
	}
	for _, secret := range []string{name, "Zelda", "Quuxington", email, "zelda.quux", phone, "9876543"} {
		if strings.Contains(after.Body, secret) {
			t.Errorf("the kiosk page shows patient data %q", secret)
		}
	}
	if stream == nil {
		return
	}
	pgWaitFor(t, 10*time.Second, "the kiosk stream to drop 10:00", func() bool {
		data, ok := stream.Latest(blockID)
		if !ok {
			return false
		}
		d, err := goquery.NewDocumentFromReader(strings.NewReader(data))
		if err != nil {
			return false
		}
		days := pgKioskTimes(d.Find("#" + blockID))
		return len(days) == 3 && !pgHas(days[1], "10:00") && pgHas(days[1], "10:30")
	})
	for _, secret := range []string{name, "Zelda", "Quuxington", email, "zelda.quux", phone, "9876543"} {
		if strings.Contains(stream.Text(), secret) {
			t.Errorf("the kiosk stream carries patient data %q", secret)
		}
	}
}

// pgNextQuietMinute waits, if needed, so that the next few requests fall in
// one fixed rate-limit window (windows are whole minutes).
func pgNextQuietMinute() {
	if s := time.Now().Second(); s > 50 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
}

func TestPageHoldRateLimitPerIP(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{HoldsPerMinute: 3})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	pgNextQuietMinute()
	var codes []int
	var limited *pgResp
	for i := range 5 {
		// A new browser each time, on another slot: only the IP is the same.
		cl := pgNewClient(t, app.TS.URL)
		start := c.At(5, 9, 30*i)
		r := cl.Post(c.BookPath(typ)+"/hold?week="+c.Week(start)+"&specialist="+sp.ID.String(),
			url.Values{"start": {start.UTC().Format(time.RFC3339)}, "specialist": {sp.ID.String()}})
		codes = append(codes, r.Status)
		switch r.Status {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			limited = r
			if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 61 {
				t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
			}
			if !strings.Contains(pgText(r.Doc().Find(`[data-testid="problem"]`)), "Too many tries") {
				t.Errorf("429 panel %q", pgText(pgPanel(r)))
			}
		default:
			t.Fatalf("hold %d: %d %s", i, r.Status, pgText(pgPanel(r)))
		}
	}
	ok := 0
	for _, code := range codes {
		if code == http.StatusOK {
			ok++
		}
	}
	// Other tests' holds from 127.0.0.1 may share the window: at most 3 pass.
	if ok > 3 || codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests || limited == nil {
		t.Fatalf("statuses %v: want at most 3 holds, then 429", codes)
	}
	pgWantFullPage(t, limited)
}

// The limit is per IP: a header the client writes itself must not give it
// another IP (the app is not configured to trust a proxy).
func TestPageHoldRateLimitIgnoresForwardedForFromClients(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{HoldsPerMinute: 3})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[1]
	pgNextQuietMinute()
	var codes []int
	for i := range 5 {
		cl := pgNewClient(t, app.TS.URL)
		cl.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", 10+i+int(time.Now().UnixNano()%200)))
		start := c.At(6, 9, 30*i)
		r := cl.Post(c.BookPath(typ)+"/hold", url.Values{"start": {start.UTC().Format(time.RFC3339)}, "specialist": {sp.ID.String()}})
		codes = append(codes, r.Status)
	}
	if codes[3] != http.StatusTooManyRequests || codes[4] != http.StatusTooManyRequests {
		t.Fatalf("five holds from one connection, each with its own X-Forwarded-For: statuses %v; the per-IP limit of 3 was bypassed", codes)
	}
}

// Once staff have given a screen a device token, the board opens only with
// it, and its live stream carries it too.
func TestKioskWithDeviceTokensNeedsOne(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	token := "k_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := db.New(app.Pool).KioskTokenInsert(context.Background(), db.KioskTokenInsertParams{
		ClinicID: c.ID, Name: "Waiting room 1", TokenHash: booking.HashToken(token),
	}); err != nil {
		t.Fatal(err)
	}
	cl := pgNewClient(t, app.TS.URL)
	pgWantErrorPage(t, cl.Get("/kiosk/"+c.Slug), http.StatusForbidden)
	pgWantErrorPage(t, cl.Get("/kiosk/"+c.Slug+"?device=k_wrong"), http.StatusForbidden)
	r := cl.Get("/kiosk/" + c.Slug + "?device=" + url.QueryEscape(token)).Want(http.StatusOK)
	if sc, _ := r.Doc().Find(`[data-testid="kiosk"]`).Attr("sse-connect"); sc != "/kiosk/"+c.Slug+"/live?device="+url.QueryEscape(token) {
		t.Errorf("sse-connect %q: the stream must carry the device token", sc)
	}
	if r.Doc().Find(`[data-testid="kiosk-block"]`).Length() != 4 {
		t.Errorf("%d blocks", r.Doc().Find(`[data-testid="kiosk-block"]`).Length())
	}
	// The stream refuses a board without the token.
	res, err := http.Get(app.TS.URL + "/kiosk/" + c.Slug + "/live")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("stream without the token: %d, want 403", res.StatusCode)
	}
	if s := pgOpenStream(t, app.TS.URL+"/kiosk/"+c.Slug+"/live?device="+url.QueryEscape(token)); s != nil {
		pgWaitFor(t, 10*time.Second, "the board's first state on the stream", func() bool {
			_, ok := s.Latest(pgKioskBlockID(c.Type0(), c.Specialists[0]))
			return ok
		})
	}
}
