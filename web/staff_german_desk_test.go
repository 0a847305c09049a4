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

// germanDesk is a desk clinic whose types have German names and whose
// specialists have names of no language, with a booking of Ada's at day
// and a hold of another specialist's two hours later.
type germanDesk struct {
	a       *app
	c       clinic
	day     time.Time
	date    string
	ada     booking.Confirmation
	english []string
}

func newGermanDesk(t *testing.T, a *app) germanDesk {
	t.Helper()
	c := a.deskClinic(t)
	a.germanName(t, c.Types[0], "Sprechstunde")
	a.germanName(t, c.Types[1], "Vorsorgetermin")
	// The fixture's specialists are called "Specialist 1", an English word.
	for i, name := range []string{"Dr. Anna Weber", "Dr. Jonas Brandt"} {
		if _, err := a.Pool.Exec(context.Background(), `UPDATE specialists SET name = $1 WHERE id = $2`, name, c.Specialists[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	g := germanDesk{a: a, c: c, day: c.Next(time.Wednesday, 9, 0), english: deskEnglish(t, c)}
	g.date = g.day.Format(time.DateOnly)
	g.ada = a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, g.day, booking.Patient{Name: "Ada Lovelace", Email: "ada@example.org", Phone: "030 555"})
	a.holdOf(t, c.Type0().ID, c.Specialists[1].ID, g.day.Add(3*time.Hour), clientID())
	return g
}

func TestGermanDeskPages(t *testing.T) {
	t.Parallel()
	g := newGermanDesk(t, newApp(t))
	cl := g.a.signIn(t, g.c.Admin)
	dayPath := "/staff/day?date=" + g.date
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
	germanDeskPages(t, g, cl)
	germanDeskBooking(t, g, cl)
	germanDeskLiveGrid(t, g, cl)

	// Back to English with the switcher.
	switchTo(t, cl, dayPath, "en")
	if back := cl.Get(dayPath).Want(http.StatusOK); !strings.Contains(back.Body, "Consultation · Booked") || strings.Contains(back.Body, "Gebucht") {
		t.Errorf("after switching back the grid is not English: %s", clip(back.Body, 800))
	}
}

// germanDeskPages: every page and dialog of the desk says what it says in
// German, with the type's German name, and no English.
func germanDeskPages(t *testing.T, g germanDesk, cl *client) {
	t.Helper()
	sp, id := g.c.Specialists[0], g.ada.Booking.ID.String()
	hx := http.Header{"Hx-Request": {"true"}}
	pages := map[string]*response{
		"the day grid":       cl.Get("/staff/day?date=" + g.date).Want(http.StatusOK),
		"the week":           cl.Get("/staff/week?date=" + g.date + "&specialist=" + sp.ID.String()).Want(http.StatusOK),
		"the list":           cl.Get("/staff?date=" + g.date).Want(http.StatusOK),
		"the list's day":     cl.Get("/staff?view=day&date=" + g.date).Want(http.StatusOK),
		"the day sheet":      cl.Get("/staff/day/sheet?date=" + g.date).Want(http.StatusOK),
		"the booking's page": cl.Get("/staff/bookings/" + id).Want(http.StatusOK),
		"the search":         cl.Get("/staff/bookings/search?q=Ada").Want(http.StatusOK),
		"the booking dialog": cl.do("GET", "/staff/bookings/"+id+"/dialog", nil, hx).Want(http.StatusOK),
		"the move dialog":    cl.do("GET", "/staff/bookings/"+id+"/move", nil, hx).Want(http.StatusOK),
		"the desk dialog":    openDesk(cl, sp.ID, g.day.Add(time.Hour)).Want(http.StatusOK),
	}
	for what, r := range pages {
		noEnglish(t, what, pageWords(r), g.english)
	}
	for what, want := range map[string][]string{
		"the booking dialog": {"Sprechstunde", "Gebucht", "Nicht vermerkt"},
		"the booking's page": {"Termin von Ada Lovelace", "Sprechstunde", "Gebucht", "Berliner Zeit"},
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
}

// germanDeskBooking: a caller booked from the desk dialog is confirmed in
// German, and the list's live day, open meanwhile, is sent in German too,
// though no request of the viewer's makes it.
func germanDeskBooking(t *testing.T, g germanDesk, cl *client) {
	t.Helper()
	list := dialSSE(t, cl.hc, g.a.URL+"/staff/live?date="+g.date+"&view=day")
	list.must(evWait, "the list's first day")
	f := deskForm(t, cl, g.c.Specialists[0].ID, g.day.Add(90*time.Minute), "Bert Anrufer", "")
	f.Set("phone", "030 777")
	booked := cl.HXPost("/staff/desk/book", f).Want(http.StatusCreated)
	if msg := booked.Text(`[data-testid="desk-booked"]`); !strings.Contains(msg, "Bert Anrufer ist gebucht für") || !strings.Contains(msg, "Berliner Zeit") {
		t.Errorf("the German booked notice reads %q", msg)
	}
	noEnglish(t, "the booked notice", pageWords(booked), g.english)
	changed, _ := list.until(evWait, "the list's day with the new booking", func(e sseEvent) bool { return strings.Contains(e.Data(), "Bert Anrufer") })
	if !strings.Contains(changed.Data(), "Absagen oder verschieben") {
		t.Errorf("the list's changed day is not German: %s", clip(changed.Data(), 800))
	}
	noEnglish(t, "the list's changed day", pageWords(&response{Body: changed.Data(), t: t, what: changed.Name}), g.english)
}

// germanDeskLiveGrid: the live grid speaks its viewer's language, German
// for this one and English for another, each with their type names.
func germanDeskLiveGrid(t *testing.T, g germanDesk, cl *client) {
	t.Helper()
	de := dialSSE(t, cl.hc, g.a.URL+"/staff/day/live?date="+g.date)
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
		noEnglish(t, "the live grid's "+ev.Name, pageWords(&response{Body: ev.Data(), t: t, what: ev.Name}), g.english)
	}
	en := dialSSE(t, g.a.signIn(t, g.c.Staff).hc, g.a.URL+"/staff/day/live?date="+g.date)
	if ev, _ := en.until(evWait, "the English booking's column", bookingColumn); !strings.Contains(ev.Data(), "Consultation · Booked") {
		t.Errorf("an English viewer's live grid: %s", clip(ev.Data(), 800))
	}
}
