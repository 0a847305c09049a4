package web_test

// Closures in headless Chromium (see browser_test.go): the day grid and
// the week view grey a closed day and say why, with a booked, a held and
// free times in view; the closures page and a closure's page; axe finds
// nothing serious or critical, in English and in German, and the German
// pages' closure words have no English left.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/seed"
)

func TestStaffClosuresBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t, withOptions(program.Options{TrustedProxies: loopbackProxy}))
	c := a.deskClinic(t)
	sp1, sp2 := c.Specialists[0], c.Specialists[1]
	wed := c.Next(time.Wednesday, 9, 0)
	date := wed.Format(time.DateOnly)
	ctx := context.Background()
	// Names that are not words of the catalogue.
	for i, name := range []string{"Dr. Anna Weber", "Dr. Jonas Brandt"} {
		if _, err := a.Pool.Exec(ctx, `UPDATE specialists SET name = $1 WHERE id = $2`, name, c.Specialists[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	u := c.Admin.User(c.ID)
	if _, err := a.Deps.Practice.AddClosure(ctx, u, practice.ClosureInput{
		SpecialistID: sp1.ID, First: localDate(c, wed), Last: localDate(c, wed), Note: "Course in Hamburg",
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Deps.Practice.AddClinicClosure(ctx, u, practice.ClosureInput{
		First: localDate(c, wed.AddDate(0, 0, 1)), Last: localDate(c, wed.AddDate(0, 0, 1)), Note: "Team day",
	}); err != nil {
		t.Fatal(err)
	}
	// The other specialist's day: booked, held and free times.
	bk := a.bookAs(t, c, c.Type0(), sp2.ID, wed, booking.Patient{Name: "Ada Patient", Email: "ada@example.org"})
	a.holdOf(t, c.Type0().ID, sp2.ID, wed.Add(2*time.Hour), clientID())
	english := englishOf(t, seed.Demo{})

	s := startBrowser(t, "closures", 1280, 1000)
	defer s.Report()
	s.RecordLive()
	signInBrowser(s, a, c.Admin)
	for _, lang := range []string{"en", "de"} {
		s.Do(stafferWait, "language "+lang, chromedp.Navigate(a.URL+"/staff/closures?lang="+lang), chromedp.WaitVisible(chromedp.CSS(`[data-testid="closure-form"]`)))
		want := map[string][2]string{
			"en": {"Dr. Anna Weber away", "Clinic closed"},
			"de": {"Dr. Anna Weber abwesend", "Praxis geschlossen"},
		}[lang]

		openGrid(t, s, a, c, "/staff/day?date="+date)
		banner := evalJS[string](s, `document.querySelector('[data-testid="grid-closures"]')?.innerText ?? ""`)
		if !strings.Contains(banner, want[0]) || !strings.Contains(banner, "Course in Hamburg") || strings.Contains(banner, "Team day") {
			t.Errorf("%s: the day's closures read %q", lang, banner)
		}
		// The away specialist's column is greyed whole, with the note; the
		// other keeps its booking and free times.
		if got := evalJS[string](s, `[...document.querySelectorAll('[data-testid="grid-closed"]')].map(e => e.innerText).join("|")`); !strings.Contains(got, "Course in Hamburg") {
			t.Errorf("%s: no greyed cell says the note: %q", lang, got)
		}
		if n := evalJS[int](s, `document.querySelectorAll('.cell.free').length`); n == 0 {
			t.Errorf("%s: no free time in view\n%s", lang, s.snapshot())
		}
		if !evalJS[bool](s, `!!document.querySelector('[data-booking="`+bk.Booking.ID.String()+`"]')`) {
			t.Errorf("%s: the booking is not in view", lang)
		}
		if v := axeSerious(t, s); len(v) > 0 {
			t.Errorf("%s: axe on the day view: %s", lang, strings.Join(v, "; "))
		}
		if lang == "de" {
			noEnglish(t, "the German day's closures", banner, english)
		}

		openGrid(t, s, a, c, "/staff/week?specialist="+sp1.ID.String()+"&date="+date)
		banner = evalJS[string](s, `document.querySelector('[data-testid="grid-closures"]')?.innerText ?? ""`)
		if !strings.Contains(banner, want[0]) || !strings.Contains(banner, want[1]) || !strings.Contains(banner, "Team day") {
			t.Errorf("%s: the week's closures read %q", lang, banner)
		}
		if got := evalJS[int](s, `[...document.querySelectorAll('[data-testid="grid-closed"]')].filter(e => /Course in Hamburg|Team day/.test(e.innerText)).length`); got < 2 {
			t.Errorf("%s: %d greyed days say their note, want 2", lang, got)
		}
		if v := axeSerious(t, s); len(v) > 0 {
			t.Errorf("%s: axe on the week view: %s", lang, strings.Join(v, "; "))
		}
		if lang == "de" {
			noEnglish(t, "the German week's closures", banner, english)
		}

		for _, path := range []string{"/staff/closures", "/staff/holidays"} {
			s.Do(stafferWait, "open "+path, chromedp.Navigate(a.URL+path), chromedp.WaitVisible(chromedp.CSS(`h1`)))
			if v := axeSerious(t, s); len(v) > 0 {
				t.Errorf("%s: axe on %s: %s", lang, path, strings.Join(v, "; "))
			}
			if lang == "de" {
				noEnglish(t, "the German "+path, evalJS[string](s, `[...document.querySelector('.staff').children].filter(e => e.tagName !== "HEADER").map(e => e.innerText).join(" ")`), english)
			}
		}
	}
}
