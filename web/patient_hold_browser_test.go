package web_test

// The hold as the patient reads it, in headless Chromium, with the page's
// own clock moved forward instead of waiting: the panel and the grid say
// the same "until 10:42", the page never says the time is lost while it
// is held, a heartbeat does not change what it says, and once the page's
// clock passes that time it says the hold has ended.

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/grid"
)

// skewableClock makes every page the tab loads read Date.now() through
// window.__skew(ms), which moves the page's clock forward by ms.
func skewableClock(b *browserTab) {
	b.t.Helper()
	const script = `(function () {
		var real = Date.now, skew = 0;
		Date.now = function () { return real.call(Date) + skew; };
		window.__skew = function (ms) { skew = ms; };
	})();`
	err := b.try(5*time.Second, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
		return err
	}))
	if err != nil {
		b.t.Fatalf("%s: skewable clock: %v", b.name, err)
	}
}

var untilTime = regexp.MustCompile(`until (\d\d:\d\d)`)

func TestE2EBrowserHoldSaysUntilWhenAndNeverExpiresEarly(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 11, 0)
	cellID := grid.CellID(sp.ID, start)
	const wait = 10 * time.Second

	tab := startBrowser(t, "patient", 1280, 900)
	defer tab.Report()
	skewableClock(tab)
	tab.RecordLive()
	tab.Do(wait, "open the week", chromedp.Navigate(a.URL+c.BookURL(typ, start, sp.ID)), chromedp.WaitVisible(cellIn(cellID, "free")))
	if !tab.Until(wait, `typeof htmx !== "undefined" && typeof window.__skew === "function"`) {
		t.Fatal("htmx or the skewable clock never loaded")
	}
	tab.Do(wait, "hold the time",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)),
		chromedp.WaitVisible(cellIn(cellID, "mine")),
	)
	panelText := func() string { return innerText(tab, `#hold-panel [data-testid="hold-until"]`) }
	cellText := func() string { return innerText(tab, "li#"+cellID+` [data-testid="hold-until"]`) }
	pm, cm := untilTime.FindStringSubmatch(panelText()), untilTime.FindStringSubmatch(cellText())
	if pm == nil || cm == nil {
		t.Fatalf("the panel says %q and the cell %q: neither may leave out until when the time is held", panelText(), cellText())
	}
	if pm[1] != cm[1] {
		t.Errorf("the panel says until %s, the grid until %s", pm[1], cm[1])
	}
	// The end of the hold's life, in the clinic's zone: about ten minutes on.
	if got, want := pm[1], time.Now().Add(10*time.Minute).In(c.Loc).Format("15:04"); got != want && got != time.Now().Add(9*time.Minute).In(c.Loc).Format("15:04") {
		t.Errorf("held until %s, want about %s (ten minutes from the claim, Berlin time)", got, want)
	}

	// 45 s later by the page's clock, past the hold key's own 30 s, the
	// page still says what is true: the time is held until then.
	evalJS[bool](tab, `(window.__skew(45000), true)`)
	time.Sleep(1500 * time.Millisecond) // the page's clock ticks every second
	for what, got := range map[string]string{"panel": panelText(), "cell": cellText()} {
		if !strings.Contains(got, "until "+pm[1]) || strings.Contains(got, "ended") || strings.Contains(got, "expired") {
			t.Errorf("45 s on, the %s says %q while the time is still held until %s", what, got, pm[1])
		}
	}

	// A heartbeat, as the page sends every ten seconds; the cell's live
	// update it causes says the same as before.
	before := evalJS[int](tab, `window.__live.length`)
	evalJS[bool](tab, `(() => {
		const hb = document.querySelector("#hold-panel .heartbeat");
		htmx.ajax("POST", hb.getAttribute("hx-post"), {source: hb, values: JSON.parse(hb.getAttribute("hx-vals")), target: "#hold-panel", swap: "innerHTML"});
		return true;
	})()`)
	tab.Until(3*time.Second, `window.__live.length > `+strconv.Itoa(before))
	if got := cellText(); !strings.Contains(got, "until "+pm[1]) {
		t.Errorf("after a heartbeat the cell says %q, want until %s", got, pm[1])
	}
	if got := panelText(); !strings.Contains(got, "until "+pm[1]) {
		t.Errorf("after a heartbeat the panel says %q, want until %s", got, pm[1])
	}

	// Past the end of its life by the page's clock, the page says so.
	evalJS[bool](tab, `(window.__skew(11 * 60000), true)`)
	if !tab.Until(3*time.Second, `/has ended/.test(document.querySelector('#hold-panel [data-testid="hold-until"]').textContent)`) {
		t.Errorf("past the end of the hold's life the panel still says %q", panelText())
	}
}
