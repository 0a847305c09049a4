package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/seed"
)

// The manage page of a booking inside its change deadline, in German and
// in English: it says the booking can no longer be moved online, links
// the clinic's phone, offers the cancel but no move, speaks one language
// only, and axe finds nothing serious.
func TestE2EBrowserManagePageInsideTheDeadline(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.deadlineClinic(t, hours(insideHours), 0)
	// The page's own words are what must be German, not the test's names.
	if _, err := a.Pool.Exec(context.Background(), "UPDATE specialists SET name = 'Dr. Weber' WHERE clinic_id = $1", c.ID); err != nil {
		t.Fatal(err)
	}
	typeID := c.Types[0].ID
	client := clientID()
	b := a.book(t, typeID, a.hold(t, typeID, c.Monday(10, 0), client), client)
	english := englishOf(t, seed.Demo{})
	tab := startBrowser(t, "deadline", 1280, 900)
	for _, lang := range []struct {
		code, says string
	}{
		{"de", "Dieser Termin kann nicht mehr online verschoben werden"},
		{"en", "This appointment can no longer be moved online"},
	} {
		openPage(t, tab, a.URL+"/manage/"+b.ManageToken+"?lang="+lang.code, `[data-testid="deadline-passed"]`)
		notice := evalJS[string](tab, `document.querySelector('[data-testid="deadline-passed"]').innerText`)
		if !strings.Contains(notice, lang.says) || !strings.Contains(notice, deadlinePhone) {
			t.Errorf("%s: the notice reads %q", lang.code, notice)
		}
		if href := evalJS[string](tab, `document.querySelector('[data-testid="deadline-phone"]').getAttribute("href")`); href != "tel:+49301234567" {
			t.Errorf("%s: the phone links to %q", lang.code, href)
		}
		if evalJS[bool](tab, `!!document.querySelector('[data-testid="move-link"]')`) || !evalJS[bool](tab, `!!document.querySelector('[data-testid="cancel-link"]')`) {
			t.Errorf("%s: the page offers a move, or no cancel", lang.code)
		}
		if lang.code == "de" {
			noEnglish(t, "the German manage page", evalJS[string](tab, `document.body.innerText`), english)
		}
		if bad := axeSerious(t, tab); len(bad) > 0 {
			t.Errorf("%s: axe finds serious problems: %v", lang.code, bad)
		}
		tab.Shot("manage-inside-deadline-" + lang.code)
	}
	tab.Do(polishWait, "open the cancel page", chromedp.Click(chromedp.CSS(`[data-testid="cancel-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="cancel-late"]`)))
	if bad := axeSerious(t, tab); len(bad) > 0 {
		t.Errorf("the cancel page: axe finds serious problems: %v", bad)
	}
	tab.Report()
}
