package web_test

// Tests of the patient pages before a hold: the home page, a clinic's
// page, the booking week grid, and the HTML error pages a person gets.
// They read the HTML as a browser would (goquery): the pages must work
// without JavaScript.

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
)

func TestPageHomeListsClinics(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	first, second := a.patientClinic(t), a.patientClinic(t)
	r := a.newClient(t).Get("/").Want(http.StatusOK)
	wantFullPage(t, r)
	for _, c := range []clinic{first, second} {
		link := r.Doc().Find(`a[href="/c/` + c.Slug + `"]`)
		if link.Length() != 1 || text(link) != c.Name {
			t.Fatalf("home lists %s as %d link(s) %q", c.Slug, link.Length(), text(link))
		}
		if !strings.Contains(text(link.Closest("li")), c.Address) {
			t.Errorf("home shows no address for %s", c.Slug)
		}
	}
}

func TestPageHomeRedirectsToTheOnlyClinic(t *testing.T) {
	t.Parallel()
	a := newApp(t, withPool(freshPool(t)))
	c := a.patientClinic(t)
	r := a.newClient(t).Get("/").Want(http.StatusFound)
	if loc := r.Header.Get("Location"); loc != "/c/"+c.Slug {
		t.Fatalf("Location %q, want /c/%s", loc, c.Slug)
	}
}

func TestPageClinicShowsTypesDurationsAndSpecialists(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	r := a.newClient(t).Get("/c/" + c.Slug).Want(http.StatusOK)
	wantFullPage(t, r)
	d := r.Doc()
	if got := text(d.Find("h1")); got != c.Name {
		t.Errorf("h1 %q, want %q", got, c.Name)
	}
	if head := text(d.Find(".page-head")); !strings.Contains(head, "Berlin time") || !strings.Contains(head, "Hauptstraße 5") {
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
		link := card.Find("h3 a")
		w, ok := want[text(link)]
		if !ok {
			t.Errorf("unexpected type card %q", text(card))
			return
		}
		delete(want, text(link))
		if href, _ := link.Attr("href"); href != "/c/"+c.Slug+"/book/"+w.id.String() {
			t.Errorf("%s books at %q", text(link), href)
		}
		txt := text(card)
		if !strings.Contains(txt, w.mins) {
			t.Errorf("%s card lacks %q: %q", text(link), w.mins, txt)
		}
		if !strings.Contains(txt, "With Specialist 1 or Specialist 2") {
			t.Errorf("%s card does not name who performs it: %q", text(link), txt)
		}
	})
	if !strings.Contains(text(cards.First())+text(cards.Last()), "A first talk about what brings you here.") {
		t.Error("the type's description is missing")
	}
}

func TestPageUnknownClinicIsAnHTMLNotFoundPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	cl := a.newClient(t)
	for _, p := range []string{
		"/c/no-such-clinic-" + strings.ToLower(uuid.NewString()[:8]),
		"/c/no-such-clinic/book/" + c.Type0().ID.String(),
		"/kiosk/no-such-clinic",
		"/manage/not-a-real-token-000000000000",
	} {
		wantErrorPage(t, cl.Get(p), http.StatusNotFound)
	}
	// A browser that sends no Accept at all, or */*, still gets the page.
	for _, accept := range []string{"*/*", ""} {
		r := a.do(t, http.MethodGet, "/c/no-such-clinic", nil, "Accept", accept)
		if r.Status != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("Accept %q: %d %s, want a 404 HTML page", accept, r.Status, r.Header.Get("Content-Type"))
		}
	}
}

func TestPageBookingWeekGrid(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	day := c.At(8, 10, 0) // a day of next week: every slot is in the future
	monday := c.MondayOf(day)
	sp1 := c.Specialists[0]

	for _, filter := range []uuid.UUID{uuid.Nil, sp1.ID} {
		t.Run("filter="+filter.String()[:8], func(t *testing.T) {
			wantWeekGrid(t, a.newClient(t).Get(c.BookURL(typ, day, filter)).Want(http.StatusOK), c, typ, monday, filter)
		})
	}

	// Taken and held cells read as such, in text as well as state.
	t.Run("TakenAndHeld", func(t *testing.T) {
		takenAt, heldAt := c.At(8, 11, 0), c.At(8, 12, 0)
		a.bookDirect(t, c, typ, sp1.ID, takenAt, "Someone Else")
		other := a.newClient(t)
		holdNoJS(t, other, c, typ, sp1.ID, heldAt).Want(http.StatusOK)
		r := a.newClient(t).Get(c.BookURL(typ, day, sp1.ID)).Want(http.StatusOK)
		for _, w := range []struct {
			at          time.Time
			state, text string
		}{{takenAt, "taken", "Taken"}, {heldAt, "held", "Held"}} {
			cell := r.Doc().Find("li#" + grid.CellID(sp1.ID, w.at))
			if st, _ := cell.Attr("data-state"); st != w.state || !strings.Contains(text(cell), w.text) || cell.Find("button").Length() != 0 {
				t.Errorf("cell at %s: state %q text %q, want %s with %q and no button", w.at.Format("15:04"), st, text(cell), w.state, w.text)
			}
		}
		// With any specialist, one of two busy still leaves the time free.
		pooled := a.newClient(t).Get(c.BookURL(typ, day, uuid.Nil)).Want(http.StatusOK)
		if st := cellState(pooled.Doc(), grid.CellID(uuid.Nil, takenAt)); st != "free" {
			t.Errorf("any-specialist cell at the taken time is %q, want free (the other specialist is free)", st)
		}
	})
}

// wantWeekGrid checks the week page of monday's week, filtered by filter
// (uuid.Nil: any specialist), with every cell free: its head, its filter,
// its stream and its cells.
func wantWeekGrid(t *testing.T, r *response, c clinic, typ db.AppointmentType, monday time.Time, filter uuid.UUID) {
	t.Helper()
	wantFullPage(t, r)
	d := r.Doc()
	week := monday.Format("2006-01-02")
	q, fv := "", ""
	if filter != uuid.Nil {
		q, fv = "&specialist="+filter.String(), filter.String()
	}
	wantLabel := monday.Format("2 Jan") + " – " + monday.AddDate(0, 0, 6).Format("2 Jan 2006")
	if got := text(d.Find(`[data-testid="week-label"]`)); got != wantLabel {
		t.Errorf("week label %q, want %q", got, wantLabel)
	}
	if href, _ := d.Find(`a[rel="prev"]`).Attr("href"); href != c.BookPath(typ)+"?week="+monday.AddDate(0, 0, -7).Format("2006-01-02")+q {
		t.Errorf("previous week link %q", href)
	}
	if href, _ := d.Find(`a[rel="next"]`).Attr("href"); href != c.BookPath(typ)+"?week="+monday.AddDate(0, 0, 7).Format("2006-01-02")+q {
		t.Errorf("next week link %q", href)
	}
	if !strings.Contains(text(d.Find(".page-head")), "All times are Berlin time.") {
		t.Error("the page does not say which time zone its times are in")
	}
	wantSpecialistFilter(t, d.Find("form.filter"), c, typ, week, fv)
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
		if got := text(s.Find("h3")); got != date.Format("Mon 2 Jan") {
			t.Errorf("day %d heading %q", i, got)
		}
		cells := s.Find(`li[data-testid="slot"]`)
		if cells.Length() != 16 {
			t.Errorf("day %d has %d cells, want 16", i, cells.Length())
		}
		cells.Each(func(j int, cell *goquery.Selection) {
			wantFreeCell(t, cell, c, typ, time.Date(date.Year(), date.Month(), date.Day(), 9, 30*j, 0, 0, c.Loc), filter, fmt.Sprintf("%d/%d", i, j))
		})
	})
	if d.Find(`[aria-live]`).Length() == 0 {
		t.Error("no aria-live region for changes in place")
	}
}

// wantSpecialistFilter checks the week page's filter: any, then each
// specialist, fv chosen, with a real label.
func wantSpecialistFilter(t *testing.T, filter *goquery.Selection, c clinic, typ db.AppointmentType, week, fv string) {
	t.Helper()
	if action, _ := filter.Attr("action"); action != c.BookPath(typ) {
		t.Errorf("filter posts to %q", action)
	}
	if v, _ := filter.Find(`input[name="week"]`).Attr("value"); v != week {
		t.Errorf("filter keeps week %q, want %s", v, week)
	}
	if filter.Find(`label[for="specialist"]`).Length() != 1 {
		t.Error("the specialist filter has no label")
	}
	var opts []string
	filter.Find("select#specialist option").Each(func(_ int, o *goquery.Selection) {
		v, _ := o.Attr("value")
		_, sel := o.Attr("selected")
		opts = append(opts, fmt.Sprintf("%s=%s/%v", v, text(o), sel))
	})
	sp1, sp2 := c.Specialists[0], c.Specialists[1]
	wantOpts := []string{
		fmt.Sprintf("=Any specialist/%v", fv == ""),
		fmt.Sprintf("%s=%s/%v", sp1.ID, sp1.Name, fv == sp1.ID.String()),
		fmt.Sprintf("%s=%s/%v", sp2.ID, sp2.Name, fv == sp2.ID.String()),
	}
	if strings.Join(opts, " ") != strings.Join(wantOpts, " ") {
		t.Errorf("filter options\n got %v\nwant %v", opts, wantOpts)
	}
}

// wantFreeCell checks a free cell at start: its id, state, start and
// swap, its button, and its hold form.
func wantFreeCell(t *testing.T, cell *goquery.Selection, c clinic, typ db.AppointmentType, start time.Time, filter uuid.UUID, which string) {
	t.Helper()
	fv := ""
	if filter != uuid.Nil {
		fv = filter.String()
	}
	id, _ := cell.Attr("id")
	st, _ := cell.Attr("data-state")
	ds, _ := cell.Attr("data-start")
	swap, _ := cell.Attr("sse-swap")
	if id != grid.CellID(filter, start) || st != "free" || ds != start.UTC().Format(time.RFC3339) || swap != id {
		t.Errorf("cell %s: id %q state %q start %q sse-swap %q; want %s free %s", which, id, st, ds, swap,
			grid.CellID(filter, start), start.UTC().Format(time.RFC3339))
		return
	}
	btn := cell.Find("button")
	if text(btn) != start.Format("15:04") {
		t.Errorf("cell %s shows %q, want local %s", id, text(btn), start.Format("15:04"))
	}
	if l, _ := btn.Attr("aria-label"); l != "Hold "+start.Format("15:04") {
		t.Errorf("cell %s button aria-label %q", id, l)
	}
	f := formOf(t, cell.Find("form"), id)
	if f.Action != c.BookPath(typ)+"/hold" || f.Values.Get("start") != ds || f.Values.Get("specialist") != fv {
		t.Errorf("cell %s form %+v", id, f)
	}
}

func TestPageBookingErrorsAreHTMLPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c, other := a.patientClinic(t), a.patientClinic(t)
	cl := a.newClient(t)
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
			wantErrorPage(t, cl.Get(tc.path), tc.status)
		})
	}
	t.Run("HoldOnAnotherClinicsType", func(t *testing.T) {
		r := cl.Post("/c/"+c.Slug+"/book/"+other.Type0().ID.String()+"/hold",
			url.Values{"start": {c.At(2, 10, 0).UTC().Format(time.RFC3339)}})
		wantErrorPage(t, r, http.StatusNotFound)
	})
}
