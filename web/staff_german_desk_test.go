package web_test

// The front desk in German: a staff member who switches to German (or
// whose browser asks for it) gets the day grid, the week, the list, the
// dialogs, the day sheet, a booking's page and the search in German, with
// the clinic's German type names and a booking's state said as "Gebucht";
// the live grid speaks the viewer's language; the switcher's ?lang= works
// under /staff and leads back.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/seed"
)

// germanName gives typ the German name name.
func (a *app) germanName(t testing.TB, typ db.AppointmentType, name string) {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE appointment_types SET translations = jsonb_build_object('de', jsonb_build_object('name', $1::text)) WHERE id = $2`, name, typ.ID); err != nil {
		t.Fatal(err)
	}
}

// deskEnglish are the English texts no German desk page may hold: the
// catalogue's English sentences and the types' English names.
func deskEnglish(t *testing.T, c clinic) []string {
	t.Helper()
	out := englishOf(t, seed.Demo{})
	for _, ty := range c.Types {
		out = append(out, ty.Name)
	}
	return out
}

// pageWords are what a reader meets on a page or fragment: its text and
// the names and hints of its controls.
func pageWords(r *response) string {
	doc := r.Doc()
	words := []string{doc.Text()}
	doc.Find("[aria-label], [title], [placeholder], input[type=submit], input:not([type]), option").Each(func(_ int, s *goquery.Selection) {
		for _, attr := range []string{"aria-label", "title", "placeholder", "value"} {
			if v, ok := s.Attr(attr); ok && (attr != "value" || goquery.NodeName(s) == "input") {
				words = append(words, v)
			}
		}
	})
	return strings.Join(words, " ")
}

// bookingColumn says whether a live grid's event is a column with a
// booking.
func bookingColumn(e sseEvent) bool {
	return strings.HasPrefix(e.Name, "col-") && strings.Contains(e.Data(), `data-testid="grid-booking"`)
}

// switchTo follows the switcher's link on path: the cookie is set and the
// browser goes back to path without the parameter.
func switchTo(t *testing.T, cl *client, path, lang string) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	r := cl.Get(path + sep + "lang=" + lang)
	if loc := r.Header.Get("Location"); r.Status != http.StatusSeeOther || loc != path {
		t.Fatalf("the switch to %s on %s: %d to %q, want 303 to %s", lang, path, r.Status, loc, path)
	}
	if ck := r.Cookie("lang"); ck == nil || ck.Value != lang {
		t.Fatalf("the switch to %s sets the cookie %v", lang, ck)
	}
}

func TestGermanDeskPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	a.germanName(t, c.Types[0], "Sprechstunde")
	a.germanName(t, c.Types[1], "Vorsorgetermin")
	// The fixture's specialists are called "Specialist 1", an English word.
	for i, name := range []string{"Dr. Anna Weber", "Dr. Jonas Brandt"} {
		if _, err := a.Pool.Exec(context.Background(), `UPDATE specialists SET name = $1 WHERE id = $2`, name, c.Specialists[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	sp, sp2 := c.Specialists[0], c.Specialists[1]
	day := c.Next(time.Wednesday, 9, 0)
	date := day.Format(time.DateOnly)
	conf := a.bookAs(t, c, c.Type0(), sp.ID, day, booking.Patient{Name: "Ada Patient", Email: "ada@example.org", Phone: "030 555"})
	a.holdOf(t, c.Type0().ID, sp2.ID, day.Add(2*time.Hour), clientID())
	english := deskEnglish(t, c)
	id := conf.Booking.ID.String()

	cl := a.signIn(t, c.Admin)
	dayPath := "/staff/day?date=" + date
	if en := cl.Get(dayPath).Want(http.StatusOK); !strings.Contains(en.Text("h1"), "Day") || !strings.Contains(en.Body, "Consultation · Booked") {
		t.Fatalf("the English day grid: %q\n%s", en.Text("h1"), clip(en.Body, 800))
	}
	switchTo(t, cl, dayPath, "de")

	grid := cl.Get(dayPath).Want(http.StatusOK)
	for _, want := range []string{"Tag", "Berliner Zeit"} {
		if !strings.Contains(grid.Text("h1"), want) {
			t.Errorf("the German grid's heading %q lacks %q", grid.Text("h1"), want)
		}
	}
	if block := grid.Text(`[data-testid="grid-booking"]`); !strings.Contains(block, "Sprechstunde · Gebucht") {
		t.Errorf("the booking's block reads %q", block)
	}
	if nav := grid.Text(`nav[aria-label="Praxisteam"]`); !strings.Contains(nav, "Tag") || !strings.Contains(nav, "Woche") || !strings.Contains(nav, "Liste") {
		t.Errorf("the German navigation reads %q", nav)
	}
	if sw := grid.Doc().Find(`[data-testid="lang-switch"] a[data-lang="en"]`).AttrOr("href", ""); sw != dayPath+"&lang=en" {
		t.Errorf("the switcher back to English leads to %q", sw)
	}

	pages := map[string]*response{
		"the day grid":       grid,
		"the week":           cl.Get("/staff/week?date=" + date + "&specialist=" + sp.ID.String()).Want(http.StatusOK),
		"the list":           cl.Get("/staff?date=" + date).Want(http.StatusOK),
		"the list's day":     cl.Get("/staff?view=day&date=" + date).Want(http.StatusOK),
		"the day sheet":      cl.Get("/staff/day/sheet?date=" + date).Want(http.StatusOK),
		"the booking's page": cl.Get("/staff/bookings/" + id).Want(http.StatusOK),
		"the search":         cl.Get("/staff/bookings/search?q=Ada").Want(http.StatusOK),
		"the booking dialog": cl.do("GET", "/staff/bookings/"+id+"/dialog", nil, http.Header{"Hx-Request": {"true"}}).Want(http.StatusOK),
		"the move dialog":    cl.do("GET", "/staff/bookings/"+id+"/move", nil, http.Header{"Hx-Request": {"true"}}).Want(http.StatusOK),
		"the desk dialog":    openDesk(cl, sp.ID, day.Add(time.Hour)).Want(http.StatusOK),
	}
	for what, r := range pages {
		noEnglish(t, what, pageWords(r), english)
	}
	for what, want := range map[string][]string{
		"the booking dialog": {"Sprechstunde", "Gebucht", "Nicht vermerkt"},
		"the booking's page": {"Termin von Ada Patient", "Sprechstunde", "Gebucht", "Berliner Zeit"},
		"the desk dialog":    {"Sprechstunde (30 Min.)", "Name des Patienten", "Buchen"},
		"the day sheet":      {"Tageszettel", "Sprechstunde", "Gebucht"},
		"the search":         {"Termin suchen", "Sprechstunde", "Gebucht"},
		"the list":           {"Termin für einen Anrufer buchen", "Sprechstunde"},
	} {
		for _, w := range want {
			if !strings.Contains(pages[what].Body, w) {
				t.Errorf("%s does not say %q", what, w)
			}
		}
	}

	// The list's live days, open while a caller is booked: the changed day
	// is sent in German too, though no request of the viewer's makes it.
	list := dialSSE(t, cl.hc, a.URL+"/staff/live?date="+date+"&view=day")
	list.must(evWait, "the list's first day")

	// Booking from the desk dialog: the notice is German too.
	f := deskForm(t, cl, sp.ID, day.Add(90*time.Minute), "Bert Anrufer", "")
	f.Set("phone", "030 777")
	booked := cl.HXPost("/staff/desk/book", f).Want(http.StatusCreated)
	if msg := booked.Text(`[data-testid="desk-booked"]`); !strings.Contains(msg, "Bert Anrufer ist gebucht für") || !strings.Contains(msg, "Berliner Zeit") {
		t.Errorf("the German booked notice reads %q", msg)
	}
	noEnglish(t, "the booked notice", pageWords(booked), english)
	changed, _ := list.until(evWait, "the list's day with the new booking", func(e sseEvent) bool { return strings.Contains(e.Data(), "Bert Anrufer") })
	if !strings.Contains(changed.Data(), "Absagen oder verschieben") {
		t.Errorf("the list's changed day is not German: %s", clip(changed.Data(), 800))
	}
	noEnglish(t, "the list's changed day", pageWords(&response{Body: changed.Data(), t: t, what: changed.Name}), english)

	// The live grid speaks the viewer's language: German for this viewer,
	// English for one who asks for it, each with their type names.
	de := dialSSE(t, cl.hc, a.URL+"/staff/day/live?date="+date)
	col, seen := de.until(evWait, "the German booking's column", bookingColumn)
	if !strings.Contains(col.Data(), "Sprechstunde · Gebucht") {
		t.Errorf("the German live grid: %s", clip(col.Data(), 800))
	}
	seen = append(seen, col)
	for {
		ev, ok, _ := de.next(time.Second)
		if !ok {
			break
		}
		seen = append(seen, ev)
	}
	for _, ev := range seen {
		noEnglish(t, "the live grid's "+ev.Name, pageWords(&response{Body: ev.Data(), t: t, what: ev.Name}), english)
	}
	enLive := dialSSE(t, a.signIn(t, c.Staff).hc, a.URL+"/staff/day/live?date="+date)
	if ev, _ := enLive.until(evWait, "the English booking's column", bookingColumn); !strings.Contains(ev.Data(), "Consultation · Booked") {
		t.Errorf("an English viewer's live grid: %s", clip(ev.Data(), 800))
	}

	// Back to English with the switcher.
	switchTo(t, cl, dayPath, "en")
	if back := cl.Get(dayPath).Want(http.StatusOK); !strings.Contains(back.Body, "Consultation · Booked") || strings.Contains(back.Body, "Gebucht") {
		t.Errorf("after switching back the grid is not English: %s", clip(back.Body, 800))
	}
}
