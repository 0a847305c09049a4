package web_test

// The patient pages in English and German: which language a request gets
// (the lang cookie, then Accept-Language, then the clinic's), the
// switcher, German dates, the kiosk and the calendar file in the clinic's
// language, and errors by code.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/i18n"
)

// speaking sets the clinic's language.
func (a *app) speaking(t testing.TB, c clinic, lang string) clinic {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE clinics SET language = $1 WHERE id = $2`, lang, c.ID); err != nil {
		t.Fatalf("clinic language: %v", err)
	}
	return c
}

// getIn fetches path with the given Accept-Language ("" none).
func getIn(cl *client, path, acceptLanguage string) *response {
	cl.t.Helper()
	h := http.Header{}
	if acceptLanguage != "" {
		h.Set("Accept-Language", acceptLanguage)
	}
	return cl.do(http.MethodGet, path, nil, h)
}

func TestI18nLanguageChoiceOnTheBookingPage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.speaking(t, a.patientClinic(t), "de")
	typ := c.Type0()
	path := c.BookURL(typ, c.At(1, 10, 0), uuid.Nil)
	lang := func(r *response) string {
		v, _ := r.Doc().Find("html").Attr("lang")
		return v
	}
	cases := []struct{ name, cookie, accept, want, word string }{
		{"the clinic's language by default", "", "", "de", "Woche"},
		{"Accept-Language beats the clinic's", "", "en-GB,en;q=0.9", "en", "Next week"},
		{"an unsupported language falls back to the clinic's", "", "fr-FR,it;q=0.8", "de", "Woche"},
		{"the cookie beats Accept-Language", "de", "en-US,en;q=0.9", "de", "Woche"},
		{"the English cookie beats the clinic's German", "en", "", "en", "Next week"},
	}
	for _, tc := range cases {
		cl := a.newClient(t)
		if tc.cookie != "" {
			u, _ := url.Parse(a.URL)
			cl.jar.SetCookies(u, []*http.Cookie{{Name: "lang", Value: tc.cookie, Path: "/"}})
		}
		r := getIn(cl, path, tc.accept).Want(http.StatusOK)
		if got := lang(r); got != tc.want {
			t.Errorf("%s: <html lang=%q>, want %q", tc.name, got, tc.want)
		}
		if !strings.Contains(r.Body, tc.word) {
			t.Errorf("%s: the page does not say %q:\n%s", tc.name, tc.word, clip(r.Body, 1500))
		}
		if v := r.Header.Values("Vary"); !strings.Contains(strings.Join(v, ","), "Accept-Language") {
			t.Errorf("%s: Vary %v does not name Accept-Language", tc.name, v)
		}
	}
}

func TestI18nSwitcherSetsTheCookie(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	cl := a.newClient(t)
	page := cl.Get("/c/" + c.Slug).Want(http.StatusOK)
	sw := page.Doc().Find(`[data-testid="lang-switch"] a[data-lang="de"]`)
	href, ok := sw.Attr("href")
	if !ok || text(sw) != "Deutsch" {
		t.Fatalf("no Deutsch link in the switcher:\n%s", clip(page.Body, 2000))
	}
	if en := text(page.Doc().Find(`[data-testid="lang-switch"] a[data-lang="en"]`)); en != "English" {
		t.Errorf("the English link says %q", en)
	}
	r := cl.Get(href).WantRedirect("/c/" + c.Slug)
	ck := r.Cookie("lang")
	if ck == nil || ck.Value != "de" {
		t.Fatalf("the switcher set no lang=de cookie: %v", r.Header.Values("Set-Cookie"))
	}
	if ck.MaxAge < 364*24*3600 || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" {
		t.Errorf("cookie %+v: want a year, SameSite=Lax, Path=/", ck)
	}
	// The English clinic's page now speaks German to this browser, even
	// though it asks for English.
	de := getIn(cl, "/c/"+c.Slug, "en-US").Want(http.StatusOK)
	if !strings.Contains(de.Body, "Terminart wählen") {
		t.Errorf("after switching, the clinic page is not German:\n%s", clip(de.Body, 1500))
	}
	// Back to English, keeping the rest of the query.
	back := cl.Get(c.BookURL(c.Type0(), c.At(1, 10, 0), uuid.Nil) + "&lang=en")
	if loc := back.Header.Get("Location"); back.Status != http.StatusSeeOther || strings.Contains(loc, "lang=") || !strings.Contains(loc, "week=") {
		t.Errorf("switch back: %d to %q", back.Status, loc)
	}
	// A language the pages do not speak is a 400 naming the field.
	bad := cl.Get("/c/" + c.Slug + "?lang=fr")
	wantErrorPage(t, bad, http.StatusBadRequest)
	if !strings.Contains(bad.Body, "lang") {
		t.Errorf("the refusal does not name the field lang: %s", clip(bad.Body, 800))
	}
	// The switch never leads off the site: "/%2Fevil.example" is the path
	// "//evil.example", which a browser reads as another host. (Redirecting
	// to the request's raw path fails this.)
	for _, p := range []string{"/%2Fevil.example", "/%2F%2Fevil.example", "/%5Cevil.example", "///evil.example"} {
		r := cl.Get(p + "?lang=de")
		if loc := r.Header.Get("Location"); strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, `/\`) || strings.Contains(loc, "://") {
			t.Errorf("%s?lang=de redirects to %q: off the site", p, loc)
		}
	}
	// Staff pages have the switcher too, leading back to the staff page.
	staff := a.newClient(t)
	login := staff.Get("/staff/login").Want(http.StatusOK)
	href, ok = login.Doc().Find(`[data-testid="lang-switch"] a[data-lang="de"]`).Attr("href")
	if !ok {
		t.Fatalf("the staff sign-in page has no switcher:\n%s", clip(login.Body, 2000))
	}
	if n := login.Doc().Find(`[data-testid="lang-switch"]`).Length(); n != 1 {
		t.Errorf("the staff sign-in page has %d switchers, want 1", n)
	}
	if ck := staff.Get(href).WantRedirect("/staff/login").Cookie("lang"); ck == nil || ck.Value != "de" {
		t.Errorf("the staff page's switcher set no lang=de cookie")
	}
}

func TestI18nGermanBookingPageAndHoldPanel(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.speaking(t, a.patientClinic(t), "de")
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(1, 14, 30)
	cl := a.newClient(t)
	page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	local := start.In(c.Loc)
	day := i18n.For("de").Day(local)
	for _, want := range []string{"Termin buchen", "Nächste Woche", "Alle Zeiten in Berliner Zeit", day} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the German page does not say %q", want)
		}
	}
	if cell := page.Doc().Find("li#" + grid.CellID(sp.ID, start)); text(cell) != "14:30" {
		t.Errorf("the cell says %q, want 14:30", text(cell))
	}
	holdForm := cellForm(t, page.Doc(), grid.CellID(sp.ID, start))
	held := holdNoJS(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
	panel := panelOf(held)
	wantWhen := i18n.For("de").LongDateTime(local)
	for _, want := range []string{"Für Sie reserviert", "Termin bestätigen", "Ihr Name", wantWhen} {
		if !strings.Contains(text(panel), want) {
			t.Errorf("the held panel does not say %q: %s", want, text(panel))
		}
	}
	// A field error in German, in place.
	f := detailsForm(t, held.Doc(), "Emmy", "not-an-address", "")
	bad := cl.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
	if msg := text(panelOf(bad).Find(`[data-testid="email-error"]`)); !strings.Contains(msg, "E-Mail-Adresse") {
		t.Errorf("the e-mail error is %q, want German", msg)
	}
	// Someone else trying the same time: the panel's problem in German.
	other := a.newClient(t).Post(holdForm.Action, holdForm.Values).Want(http.StatusLocked)
	if msg := text(panelOf(other).Find(`[data-testid="problem"]`)); !strings.Contains(msg, "Jemand anderes bucht diese Zeit gerade") {
		t.Errorf("a held time says %q (status %d), want German", msg, other.Status)
	}
}

func TestI18nGermanManagePageAndICS(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.speaking(t, a.patientClinic(t), "de")
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 9, 0)
	cl := a.newClient(t)
	token := bookViaPages(t, cl, c, typ, sp.ID, start, "Emmy Noether", "emmy@example.org")
	page := cl.Get("/manage/" + token).Want(http.StatusOK)
	for _, want := range []string{"Ihr Termin ist gebucht", "Bestätigt", i18n.For("de").LongDateTime(start.In(c.Loc)), "Termin absagen"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the German manage page does not say %q", want)
		}
	}
	// The calendar file speaks the clinic's language, whoever fetches it.
	r := getIn(a.newClient(t), "/manage/"+token+"/calendar.ics", "en-US").Want(http.StatusOK)
	ev := icsEvent(t, r.Body)
	if s := icsUnescape(ev["SUMMARY"]); s != "Consultation bei "+sp.Name {
		t.Errorf("SUMMARY %q, want German", s)
	}
	if d := icsUnescape(ev["DESCRIPTION"]); !strings.Contains(d, "Zeitzone") {
		t.Errorf("DESCRIPTION %q, want German", d)
	}
	resched := cl.Get("/manage/" + token + "/reschedule").Want(http.StatusOK)
	if !strings.Contains(resched.Body, "Termin verschieben") || !strings.Contains(resched.Body, "Ihre jetzige Zeit") {
		t.Errorf("the reschedule page is not German:\n%s", clip(resched.Body, 1500))
	}
}

func TestI18nGermanErrorPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.speaking(t, a.patientClinic(t), "de")
	cl := a.newClient(t)
	// No such type of a German clinic: the clinic's language.
	r := cl.Get("/c/" + c.Slug + "/book/" + uuid.NewString())
	wantErrorPage(t, r, http.StatusNotFound)
	if h := text(r.Doc().Find(`[data-testid="error-page"] h1`)); h != "Nicht gefunden" {
		t.Errorf("404 title %q", h)
	}
	if !strings.Contains(r.Body, "Zurück zum Anfang") {
		t.Error("the error page's link is not German")
	}
	// No such clinic: the visitor's language.
	r = getIn(cl, "/c/no-such-clinic-"+uuid.NewString()[:8], "de-DE").Want(http.StatusNotFound)
	if h := text(r.Doc().Find(`[data-testid="error-page"] h1`)); h != "Nicht gefunden" {
		t.Errorf("404 for a German browser: %q", h)
	}
	// The JSON API keeps English.
	api := a.do(t, http.MethodGet, "/v1/appointment-types/"+uuid.NewString()+"/timeslots?from=2026-01-01&to=2026-01-02", nil, "Accept-Language", "de")
	if strings.Contains(api.Body, "Nicht") {
		t.Errorf("the API answered in German: %s", api.Body)
	}
}

func TestI18nGermanKioskAndLiveCells(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.speaking(t, a.patientClinic(t), "de")
	typ, sp := c.Type0(), c.Specialists[0]
	// The kiosk speaks the clinic's language, whatever the screen's browser asks.
	k := getIn(a.newClient(t), "/kiosk/"+c.Slug, "en-US").Want(http.StatusOK)
	for _, want := range []string{"Freie Termine", "Heute", "Morgen", "frei", "Termin buchen"} {
		if !strings.Contains(k.Body, want) {
			t.Errorf("the German kiosk does not say %q", want)
		}
	}
	if strings.Contains(k.Body, "Tomorrow") || strings.Contains(k.Body, `data-testid="lang-switch"`) {
		t.Error("the German kiosk has English words or a switcher")
	}
	// German and English viewers of one week each get their own cells.
	start := c.At(1, 10, 0)
	cellID := grid.CellID(sp.ID, start)
	path := c.BookURL(typ, start, sp.ID)
	stream := func(accept string) *sseConn {
		page := getIn(a.newClient(t), path, accept).Want(http.StatusOK)
		u, _ := page.Doc().Find(`#week-grid`).Attr("sse-connect")
		return dialSSEIn(t, a.URL+strings.Split(u, "&state=")[0], accept)
	}
	de, en := stream("de-DE"), stream("en-US")
	holdNoJS(t, a.newClient(t), c, typ, sp.ID, start).Want(http.StatusOK)
	for _, v := range []struct {
		s    *sseConn
		word string
	}{{de, "Reserviert"}, {en, "Held"}} {
		e, _ := v.s.until(10*time.Second, "the held cell ("+v.word+")", func(e sseEvent) bool {
			return e.Name == cellID && strings.Contains(strings.Join(e.Lines, ""), `data-state="held"`)
		})
		if !strings.Contains(strings.Join(e.Lines, ""), v.word) {
			t.Errorf("the held cell says %s, want %q", strings.Join(e.Lines, ""), v.word)
		}
	}
}

// dialSSEIn opens a page's stream as a browser asking for acceptLanguage.
func dialSSEIn(t *testing.T, u, acceptLanguage string) *sseConn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Accept-Language", acceptLanguage)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", u, err)
	}
	if res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET %s: %d, want 200", u, res.StatusCode)
	}
	return readSSEStream(t, res, func() { cancel(); _ = res.Body.Close() })
}
