package web_test

// The rooms pages in headless Chromium (see browser_test.go): an admin
// adds a room, gives it weekly hours and a closure, and makes a type need
// a room of its kind; the pages say so, axe finds nothing serious or
// critical in English and in German, and the German pages' room words
// have no English left.

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/seed"
)

func TestStaffRoomsBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.deskClinic(t)
	english := englishOf(t, seed.Demo{})

	s := startBrowser(t, "rooms", 1280, 1000)
	defer s.Report()
	signInBrowser(s, a, c.Admin)
	s.Do(stafferWait, "the rooms page", chromedp.Navigate(a.URL+"/staff/rooms?lang=en"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="room-add"]`)))
	if !evalJS[bool](s, `!!document.querySelector('[data-testid="rooms-none"]')`) {
		t.Errorf("a clinic without rooms: the page does not say so\n%s", s.snapshot())
	}
	s.Do(stafferWait, "add a room",
		chromedp.SetValue(chromedp.CSS(`#name`), "Ultrasound room"),
		chromedp.SetValue(chromedp.CSS(`#kind`), "ultrasound"),
		chromedp.Click(chromedp.CSS(`[data-testid="room-add"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="room-hours"]`)))
	s.Do(stafferWait, "weekly hours",
		chromedp.Click(chromedp.CSS(`[data-testid="room-form"] input[name="always"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="room-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
		chromedp.SetValue(chromedp.CSS(`#hours\.monday`), "08:00-12:00, 13:00-17:00"),
		chromedp.Click(chromedp.CSS(`[data-testid="room-hours"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	if got := evalJS[string](s, `document.querySelector('#hours\\.monday').value`); got != "08:00-12:00, 13:00-17:00" {
		t.Errorf("Monday's hours read %q after saving", got)
	}
	if evalJS[bool](s, `document.querySelector('[data-testid="room-form"] input[name="always"]').checked`) {
		t.Error("the room is still open whenever the clinic is")
	}
	s.Do(stafferWait, "close the room",
		chromedp.SetValue(chromedp.CSS(`#first`), "2031-03-03"),
		chromedp.SetValue(chromedp.CSS(`#last`), "2031-03-05"),
		chromedp.SetValue(chromedp.CSS(`#note`), "Service visit"),
		chromedp.Click(chromedp.CSS(`[data-testid="room-closure-add"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="room-closures"] li`)))
	if got := evalJS[string](s, `document.querySelector('[data-testid="room-closures"]').innerText`); !strings.Contains(got, "Service visit") {
		t.Errorf("the room's closures read %q", got)
	}
	roomPage := evalJS[string](s, `location.pathname`)

	typ := c.Type0().ID.String()
	s.Do(stafferWait, "the type needs a room of the kind",
		chromedp.Navigate(a.URL+"/staff/rooms"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="needs"]`)),
		chromedp.SetValue(chromedp.CSS(`#need-`+typ), "kind:ultrasound"),
		chromedp.Click(chromedp.CSS(`#need-`+typ+` ~ button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	if got := evalJS[string](s, `document.querySelector('#need-`+typ+`').value`); got != "kind:ultrasound" {
		t.Errorf("the type needs %q after saving, want kind:ultrasound", got)
	}
	needs, err := a.Deps.Practice.TypeNeeds(t.Context(), c.Admin.User(c.ID))
	if err != nil || needs[c.Type0().ID].Kind != "ultrasound" {
		t.Errorf("stored need of the type: %+v, %v", needs, err)
	}

	for _, lang := range []string{"en", "de"} {
		for _, path := range []string{"/staff/rooms", roomPage} {
			s.Do(stafferWait, "open "+path+" in "+lang, chromedp.Navigate(a.URL+path+"?lang="+lang), chromedp.WaitVisible(chromedp.CSS(`h1`)))
			if v := axeSerious(t, s); len(v) > 0 {
				t.Errorf("%s: axe on %s: %s", lang, path, strings.Join(v, "; "))
			}
			if lang == "de" {
				noEnglish(t, "the German "+path, evalJS[string](s, `[...document.querySelector('.staff').children].filter(e => e.tagName !== "HEADER").map(e => e.innerText).join(" ")`), english)
			}
		}
	}
}
