package web_test

// Each kiosk screen speaks its own language: chosen when its link is
// made, changed on the staff page (in German or English), and the board
// opened with the screen's link speaks it; a board drawn in the old
// language is refused its stream, so that it reloads.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/seed"
	"github.com/clinic/booking/internal/testkit"
)

// createKioskScreen makes a screen speaking lang as admin and returns its
// device token.
func createKioskScreen(t *testing.T, admin *client, name, lang string) string {
	t.Helper()
	r := admin.Post("/staff/kiosks", url.Values{"name": {name}, "language": {lang}}).Want(http.StatusCreated)
	m := kioskLink.FindStringSubmatch(r.Text(`[data-testid="notice"]`))
	if m == nil {
		t.Fatalf("the page does not show the device link: %q", r.Text(`[data-testid="notice"]`))
	}
	device, err := url.QueryUnescape(m[2])
	if err != nil {
		t.Fatal(err)
	}
	return device
}

// kioskScreenID is the id of the screen named name on the staff page.
func kioskScreenID(t *testing.T, page *response, name string) string {
	t.Helper()
	row := page.Doc().Find(`tr[data-testid="kiosk-screen"]`).FilterFunction(func(_ int, s *goquery.Selection) bool { return s.AttrOr("data-name", "") == name })
	id, ok := row.Find(`form[data-testid="kiosk-language"] input[name="id"]`).Attr("value")
	if !ok {
		t.Fatalf("no language form for %q", name)
	}
	return id
}

func TestKioskScreenLanguageIsChosenAndChanged(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1}) // an English clinic
	admin := a.signIn(t, c.Admin)
	form := admin.Get("/staff/kiosks").Want(http.StatusOK)
	if v, _ := form.Doc().Find(`[data-testid="kiosk-form"] select#language option[selected]`).Attr("value"); v != "en" {
		t.Errorf("a new screen's language starts at %q, want the clinic's (en)", v)
	}
	device := createKioskScreen(t, admin, "Lobby", "de")
	boardPath := "/kiosk/" + c.Slug + "?device=" + url.QueryEscape(device)
	board := a.newClient(t).Get(boardPath).Want(http.StatusOK)
	if lang, _ := board.Doc().Find("html").Attr("lang"); lang != "de" || !strings.Contains(board.Text("main"), "Termin buchen") || strings.Contains(board.Text("main"), "Book an appointment") {
		t.Errorf("a German screen of an English clinic: lang %q, says %q", lang, clip(board.Text("main"), 400))
	}
	if sc, _ := board.Doc().Find(`[data-testid="kiosk"]`).Attr("sse-connect"); sc != "/kiosk/"+c.Slug+"/live"+kioskStreamQuery(device, "de") {
		t.Errorf("sse-connect %q", sc)
	}

	page := admin.Get("/staff/kiosks").Want(http.StatusOK)
	id := kioskScreenID(t, page, "Lobby")
	if v, _ := page.Doc().Find(`select#language-` + id + ` option[selected]`).Attr("value"); v != "de" {
		t.Errorf("the screen's language shows as %q, want de", v)
	}
	changed := admin.Post("/staff/kiosks/language", url.Values{"id": {id}, "language": {"both"}}).Want(http.StatusOK)
	if n := changed.Text(`[role="status"]`); !strings.Contains(n, "“Lobby” now speaks German and English, taking turns") {
		t.Errorf("the change is told as %q", n)
	}
	// The board drawn in German is refused its stream, and reloads.
	if r := a.do(t, http.MethodGet, "/kiosk/"+c.Slug+"/live"+kioskStreamQuery(device, "de"), nil); r.Status != http.StatusConflict {
		t.Errorf("the stream of a board drawn in the old language: %d, want 409", r.Status)
	}
	both := a.newClient(t).Get(boardPath).Want(http.StatusOK)
	k := both.Doc().Find(`[data-testid="kiosk"]`)
	if k.AttrOr("data-langs", "") != "en de" || k.AttrOr("data-lang", "") != "en" || k.AttrOr("data-every", "") != "15" {
		t.Errorf("a screen of both languages: data-langs %q data-lang %q data-every %q", k.AttrOr("data-langs", ""), k.AttrOr("data-lang", ""), k.AttrOr("data-every", ""))
	}
	if n := both.Doc().Find(`.kiosk-book h2 .kl[lang="de"]`).Length() + both.Doc().Find(`.kiosk-book h2 .kl[lang="en"]`).Length(); n != 2 {
		t.Errorf("the booking heading is in %d languages, want 2", n)
	}

	for _, bad := range []string{"fr", "", "de en"} {
		r := admin.Post("/staff/kiosks/language", url.Values{"id": {id}, "language": {bad}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Text(`[role="alert"]`), "Choose German, English or both") {
			t.Errorf("language %q: %d %q", bad, r.Status, r.Text(`[role="alert"]`))
		}
	}
	if r := admin.Post("/staff/kiosks", url.Values{"name": {"Hall"}, "language": {"fr"}}); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a new screen in French: %d, want 422", r.Status)
	}
	admin.Post("/staff/kiosks/language", url.Values{"id": {"00000000-0000-0000-0000-000000000000"}, "language": {"en"}}).Want(http.StatusNotFound)
}

// The staff page in German says no English.
func TestKioskScreensPageInGerman(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	admin.Header.Set("Accept-Language", "de-DE,de;q=0.9")
	created := admin.Post("/staff/kiosks", url.Values{"name": {"Wartezimmer"}, "language": {"both"}}).Want(http.StatusCreated)
	english := englishOf(t, seed.Demo{})
	for _, r := range []*response{created, admin.Get("/staff/kiosks").Want(http.StatusOK)} {
		txt := r.Text("main h1") + " " + r.Text("main .muted") + " " + r.Text(`[data-testid="table"]`) + " " + r.Text(`[data-testid="kiosk-form"]`) + " " + r.Text(`[data-testid="kiosk-created"]`)
		noEnglish(t, "the German kiosks page", txt, english)
		for _, want := range []string{"Wartezimmer-Bildschirme", "Deutsch und Englisch im Wechsel", "Widerrufen", "Gerätelink erstellen"} {
			if !strings.Contains(txt, want) {
				t.Errorf("the German page lacks %q:\n%s", want, clip(txt, 1200))
			}
		}
	}
	if r := admin.Post("/staff/kiosks", url.Values{"name": {" "}}); !strings.Contains(r.Text(`[role="alert"]`), "Geben Sie dem Bildschirm einen Namen") {
		t.Errorf("a screen without a name in German: %q", r.Text(`[role="alert"]`))
	}
}

// In a browser, the screen's language is chosen in the form and its link
// opens the board in it.
func TestKioskScreenLanguageInABrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	s := startBrowser(t, "kiosk language", 1280, 900)
	defer s.Report()
	signInBrowser(s, a, c.Admin)
	s.Do(stafferWait, "make a German screen",
		chromedp.Navigate(a.URL+"/staff/kiosks"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-form"] #name`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="kiosk-form"] #name`), "Wartezimmer"),
		chromedp.SetValue(chromedp.CSS(`[data-testid="kiosk-form"] #language`), "de"),
		chromedp.Click(chromedp.CSS(`[data-testid="kiosk-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-link"]`)),
	)
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the kiosks page: %s", strings.Join(v, "; "))
	}
	link := evalJS[string](s, `document.querySelector('[data-testid="kiosk-link"]').href`)
	s.Do(stafferWait, "open the board", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-book"]`)))
	if txt := evalJS[string](s, `document.body.innerText`); !strings.Contains(txt, "Termin buchen") || strings.Contains(txt, "Book an appointment") {
		t.Errorf("the German screen's board says:\n%s", clip(txt, 600))
	}
}
