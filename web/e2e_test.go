package web_test

// End-to-end tests in headless Chromium (Debian's /usr/bin/chromium, driven
// by chromedp) against the real app on a real HTTP server, with real
// PostgreSQL and Redis: what two patients and a waiting-room screen see.
//
// Without Chromium these tests fail, unless CLINIC_SKIP_BROWSER=1 (then they
// skip). Screenshots go to <repo>/.artifacts/screenshots/.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/clinic/booking/web"
)

const e2eChromium = "/usr/bin/chromium"

// e2eNeedChromium fails (or skips, when CLINIC_SKIP_BROWSER=1) without Chromium.
func e2eNeedChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(e2eChromium); err == nil {
		return
	}
	if os.Getenv("CLINIC_SKIP_BROWSER") == "1" {
		t.Skipf("%s is missing and CLINIC_SKIP_BROWSER=1: skipping the browser test", e2eChromium)
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		t.Fatalf("%s is missing (there is a chromium at %s); install Debian's chromium (apt-get install chromium), or set CLINIC_SKIP_BROWSER=1 to skip browser tests", e2eChromium, p)
	}
	t.Fatalf("%s is missing: install Debian's chromium (apt-get install chromium), or set CLINIC_SKIP_BROWSER=1 to skip browser tests", e2eChromium)
}

// e2eTab is one browser tab, with what its console reported.
type e2eTab struct {
	t    *testing.T
	name string
	ctx  context.Context

	mu         sync.Mutex
	exceptions []string
	errors     []string
}

// e2eBrowser starts a browser of its own (own profile, so own cookies) and
// returns its first tab. It ends with the test.
func e2eBrowser(t *testing.T, name string, width, height int) *e2eTab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(e2eChromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s browser: %v", name, err)
	}
	return e2eWatch(t, name, ctx)
}

// NewTab opens another tab of the same browser (same cookies).
func (b *e2eTab) NewTab(name string) *e2eTab {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	b.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("open tab %s: %v", name, err)
	}
	return e2eWatch(b.t, name, ctx)
}

func e2eWatch(t *testing.T, name string, ctx context.Context) *e2eTab {
	tab := &e2eTab{t: t, name: name, ctx: ctx}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			tab.mu.Lock()
			switch m.Type {
			case chromedp.ConsoleException:
				tab.exceptions = append(tab.exceptions, m.Text)
			case chromedp.ConsoleError:
				tab.errors = append(tab.errors, strings.TrimSpace(m.Text+" "+m.URL))
			}
			tab.mu.Unlock()
		}
	}()
	return tab
}

// Report fails the test for uncaught script errors and logs console errors.
func (b *e2eTab) Report() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[string]int{}
	var order []string
	for _, e := range b.errors {
		if seen[e] == 0 {
			order = append(order, e)
		}
		seen[e]++
	}
	for _, e := range order {
		b.t.Logf("%s console error (×%d): %s", b.name, seen[e], e)
	}
	b.errors = nil
	for _, e := range b.exceptions {
		b.t.Errorf("%s: uncaught script error: %s", b.name, e)
	}
	b.exceptions = nil
}

// Do runs steps within d.
func (b *e2eTab) Do(d time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.try(d, steps...); err != nil {
		b.Report()
		b.t.Fatalf("%s: %s: %v\n%s", b.name, what, err, b.snapshot())
	}
}

func (b *e2eTab) try(d time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// Eval evaluates a JavaScript expression.
func e2eEval[T any](b *e2eTab, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("%s: evaluate %s: %v", b.name, expr, err)
	}
	return v
}

// Until polls a JavaScript condition; false when d passes first. It keeps
// polling across a navigation (an evaluation in a page going away fails).
func (b *e2eTab) Until(d time.Duration, cond string) bool {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { try { return !!(`+cond+`); } catch (e) { return false; } })()`))
		cancel()
		if err == nil && ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// snapshot is the page's location and a piece of its text, for failures.
func (b *e2eTab) snapshot() string {
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText.slice(0, 1500) : "")`))
	if err != nil {
		return "(no snapshot: " + err.Error() + ")"
	}
	return s
}

// Shot saves a full-page PNG under <repo>/.artifacts/screenshots.
func (b *e2eTab) Shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("%s: screenshot %s: %v", b.name, name, err)
		return
	}
	dir := e2eArtifacts(b.t)
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Errorf("write %s: %v", p, err)
		return
	}
	b.t.Logf("screenshot: %s", p)
}

// e2eArtifacts is <repo>/.artifacts/screenshots, made if missing.
func e2eArtifacts(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatalf("no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(root, ".artifacts", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// e2eCell is a CSS selector for a grid cell in a state.
func e2eCell(id, state string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`li#%s[data-state=%q]`, id, state))
}

// e2eKioskHas is a JavaScript condition: the kiosk block shows (or not)
// hhmm on its day-th day.
func e2eKioskHas(blockID string, day int, hhmm string, want bool) string {
	return fmt.Sprintf(`(() => {
		const b = document.getElementById(%q);
		if (!b) return false;
		const d = b.querySelectorAll(".kiosk-day")[%d];
		if (!d) return false;
		const has = Array.from(d.querySelectorAll(".kiosk-time")).some(e => e.textContent.trim() === %q);
		return has === %v;
	})()`, blockID, day, hhmm, want)
}

// Two patients and a waiting-room screen watch the same week: a hold, a
// booking and a cancel show up everywhere without a reload.
func TestE2EBrowserTwoPatientsAndTheKioskSeeEachChangeLive(t *testing.T) {
	t.Parallel()
	e2eNeedChromium(t)
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(1, 10, 0) // tomorrow, so the kiosk shows it too
	cellID := pgCellID(sp.ID, start)
	gridURL := app.TS.URL + c.BookURL(typ, start, sp.ID)
	blockID := pgKioskBlockID(typ, sp)
	const wait = 10 * time.Second

	a := e2eBrowser(t, "browser A", 1280, 900)
	b := e2eBrowser(t, "browser B", 1280, 900)
	k := b.NewTab("kiosk tab")
	defer func() { a.Report(); b.Report(); k.Report() }()

	a.Do(wait, "open the week", chromedp.Navigate(gridURL), chromedp.WaitVisible(e2eCell(cellID, "free")))
	b.Do(wait, "open the week", chromedp.Navigate(gridURL), chromedp.WaitVisible(e2eCell(cellID, "free")))
	k.Do(wait, "open the kiosk", chromedp.Navigate(app.TS.URL+"/kiosk/"+c.Slug), chromedp.WaitVisible(chromedp.CSS("#"+blockID)))
	if !k.Until(time.Second, e2eKioskHas(blockID, 1, "10:00", true)) {
		t.Fatalf("the kiosk does not show tomorrow's 10:00 for %s:\n%s", sp.Name, k.snapshot())
	}
	// Let the pages' streams connect (htmx loads deferred), and mark B's and
	// the kiosk's documents: a reload would lose the mark.
	for _, tab := range []*e2eTab{a, b, k} {
		if !tab.Until(wait, `typeof htmx !== "undefined"`) {
			t.Fatalf("%s: htmx never loaded", tab.name)
		}
	}
	e2eEval[bool](b, `window.__e2eNoReload = true`)
	e2eEval[bool](k, `window.__e2eNoReload = true`)
	defer func() {
		for _, tab := range []*e2eTab{b, k} {
			if !e2eEval[bool](tab, `window.__e2eNoReload === true`) {
				t.Errorf("%s reloaded the page: the changes must arrive in place", tab.name)
			}
		}
	}()

	// A holds the time.
	a.Do(wait, "hold the slot",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)),
	)
	if err := a.try(wait, chromedp.WaitVisible(e2eCell(cellID, "mine"))); err != nil {
		t.Errorf("A's own cell never turned \"mine\": %v", err)
	}
	// The countdown runs, in the panel and in A's own cell.
	if !a.Until(3*time.Second, `/^\d+ s left$/.test((document.querySelector("#hold-panel .countdown") || {}).textContent || "")`) {
		t.Errorf("the panel's countdown does not run: %q", e2eEval[string](a, `(document.querySelector("#hold-panel .countdown") || {}).textContent || ""`))
	}
	// B sees it held, without reloading.
	b.Do(wait, "see the cell turn held", chromedp.WaitVisible(e2eCell(cellID, "held")))
	if note := e2eEval[string](b, `document.querySelector("li#`+cellID+`").innerText`); !strings.Contains(note, "Held") {
		t.Errorf("B's held cell says %q: the state must be readable as text", note)
	}
	if !b.Until(2*time.Second, `(() => {
		const li = document.querySelector("li#`+cellID+`");
		const a = document.getElementById("grid-announcer");
		return (a && a.textContent.trim() !== "") || !!li.closest("[aria-live]");
	})()`) {
		t.Errorf("nothing announces the change of the cell B is looking at (#grid-announcer stays empty and the cell is in no aria-live region)")
	}
	b.Shot("grid-held-cell")
	kioskLive := k.Until(wait, e2eKioskHas(blockID, 1, "10:00", false))
	if !kioskLive {
		t.Errorf("the kiosk still shows 10:00 %s after A held it: the board is not live", wait)
	}

	// A books.
	a.Do(wait, "fill in and confirm",
		chromedp.SendKeys(chromedp.CSS("#name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.CSS("#email"), "ada@example.org"),
		chromedp.Click(chromedp.CSS(`[data-testid="details-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)),
	)
	if loc := e2eEval[string](a, `location.pathname`); !pgManagePath.MatchString(loc) {
		t.Errorf("A landed on %q, want /manage/{token}", loc)
	}
	summary := e2eEval[string](a, `document.querySelector('[data-testid="summary"]').innerText`)
	if !strings.Contains(summary, start.Format("Monday 2 January 2006, 15:04")) || !strings.Contains(summary, sp.Name) {
		t.Errorf("the confirmation says:\n%s", summary)
	}
	a.Shot("confirmation")
	b.Do(wait, "see the cell turn taken", chromedp.WaitVisible(e2eCell(cellID, "taken")))
	if kioskLive && !k.Until(time.Second, e2eKioskHas(blockID, 1, "10:00", false)) {
		t.Errorf("the kiosk shows the booked 10:00 again")
	}
	if txt := e2eEval[string](k, `document.querySelector('[data-testid="kiosk"]').innerText`); regexp.MustCompile(`\d\d:\d\d\d\d:\d\d`).MatchString(txt) {
		t.Errorf("the kiosk's times run together (%q): nothing separates them on the screen", pgClip(regexp.MustCompile(`\d\d:\d\d(\d\d:\d\d)+`).FindString(txt), 40))
	}
	if html := e2eEval[string](k, `document.documentElement.outerHTML`); strings.Contains(html, "Ada") || strings.Contains(html, "ada@example.org") {
		t.Errorf("the kiosk shows the patient's details")
	}
	k.Shot("kiosk")

	// A cancels through the manage link, with the confirmation step.
	a.Do(wait, "cancel",
		chromedp.Click(chromedp.CSS(`form[action$="/cancel"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`button.danger`)),
	)
	if h := e2eEval[string](a, `document.querySelector("h1").innerText`); h != "Cancel this appointment?" {
		t.Errorf("cancel asks %q", h)
	}
	a.Do(wait, "confirm the cancel",
		chromedp.Click(chromedp.CSS(`button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="summary"][data-status="cancelled"]`)),
	)
	b.Do(wait, "see the cell free again", chromedp.WaitVisible(e2eCell(cellID, "free")))
	if kioskLive && !k.Until(wait, e2eKioskHas(blockID, 1, "10:00", true)) {
		t.Errorf("the kiosk does not show 10:00 again after the cancel")
	}
	// B can hold the freed time right away, from the live cell.
	b.Do(wait, "hold the freed time",
		chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
		chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)),
	)
	if !k.Until(2*time.Second, `document.querySelector('[data-testid="kiosk"]') !== null`) {
		t.Error("the kiosk page went away")
	}
}

// The whole booking flow with the keyboard alone.
func TestE2EBrowserKeyboardOnlyBooking(t *testing.T) {
	t.Parallel()
	e2eNeedChromium(t)
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ, sp := c.Type0(), c.Specialists[1]
	start := c.At(2, 11, 30)
	cellID := pgCellID(sp.ID, start)
	const wait = 10 * time.Second

	p := e2eBrowser(t, "keyboard browser", 1280, 900)
	defer p.Report()
	p.Do(wait, "open the week", chromedp.Navigate(app.TS.URL+c.BookURL(typ, start, sp.ID)), chromedp.WaitVisible(e2eCell(cellID, "free")))
	if !p.Until(wait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded")
	}

	// tabTo presses Tab until cond holds for document.activeElement.
	tabTo := func(what, cond string, max int) int {
		t.Helper()
		for i := 1; i <= max; i++ {
			p.Do(wait, "press Tab", chromedp.KeyEvent(kb.Tab))
			if e2eEval[bool](p, `(() => { const el = document.activeElement; return !!el && (`+cond+`); })()`) {
				return i
			}
		}
		t.Fatalf("%s is not reachable with %d Tabs (focus is on %s)", what, max,
			e2eEval[string](p, `(() => { const el = document.activeElement; return el ? el.outerHTML.slice(0, 200) : "nothing"; })()`))
		return 0
	}

	n := tabTo("the slot button", `el.matches("li#`+cellID+` button")`, 300)
	t.Logf("the slot is %d Tabs away", n)
	outline := e2eEval[string](p, `(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + " " + s.outlineWidth; })()`)
	if strings.HasPrefix(outline, "none") || strings.HasSuffix(outline, " 0px") {
		t.Errorf("the focused slot button shows no focus (outline %q)", outline)
	}
	p.Do(wait, "Enter holds", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)))
	p.Shot("keyboard-held")

	n = tabTo("the name field", `el.id === "name"`, 300)
	t.Logf("the name field is %d Tabs away after the hold", n)
	p.Do(wait, "type the name", chromedp.KeyEvent("Grace Hopper"))
	p.Do(wait, "Tab", chromedp.KeyEvent(kb.Tab))
	if id := e2eEval[string](p, `document.activeElement.id`); id != "email" {
		t.Fatalf("one Tab after the name, focus is on %q, want the e-mail field", id)
	}
	p.Do(wait, "type the e-mail", chromedp.KeyEvent("grace@example.org"))
	tabTo("the confirm button", `el.matches('[data-testid="details-form"] button[type="submit"]')`, 5)
	p.Do(wait, "Enter confirms", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`h1[data-testid="booked"]`)))
	summary := e2eEval[string](p, `document.querySelector('[data-testid="summary"]').innerText`)
	for _, want := range []string{"Grace Hopper", start.Format("15:04"), sp.Name} {
		if !strings.Contains(summary, want) {
			t.Errorf("the booked page lacks %q:\n%s", want, summary)
		}
	}
	p.Shot("keyboard-booked")
}

// After a click on a time, the patient sees the held panel and its form
// without hunting for it, on a 360 px phone and on a desktop screen; the
// phone page does not scroll sideways.
func TestE2EBrowserHeldPanelInViewOnPhoneAndDesktop(t *testing.T) {
	t.Parallel()
	e2eNeedChromium(t)
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	typ := c.Type0()
	for i, size := range []struct {
		name string
		w, h int
	}{{"phone-360", 360, 740}, {"desktop-1280", 1280, 800}} {
		sp := c.Specialists[i]
		start := c.At(2, 10, 0)
		cellID := pgCellID(sp.ID, start)
		p := e2eBrowser(t, size.name+" browser", size.w, size.h)
		p.Do(10*time.Second, "open the week",
			chromedp.EmulateViewport(int64(size.w), int64(size.h)),
			chromedp.Navigate(app.TS.URL+c.BookURL(typ, start, sp.ID)),
			chromedp.WaitVisible(e2eCell(cellID, "free")),
		)
		if !p.Until(10*time.Second, `typeof htmx !== "undefined"`) {
			t.Fatal("htmx never loaded")
		}
		p.Do(10*time.Second, "hold", chromedp.Click(chromedp.CSS("li#"+cellID+" button")),
			chromedp.WaitVisible(chromedp.CSS(`#hold-panel [data-testid="held"]`)))
		time.Sleep(300 * time.Millisecond)
		inView := e2eEval[string](p, `(() => {
			const r = document.querySelector('#hold-panel [data-testid="held"] h2').getBoundingClientRect();
			return Math.round(r.top) + "/" + window.innerHeight;
		})()`)
		top, vh, _ := strings.Cut(inView, "/")
		ti, _ := strconv.Atoi(top)
		vi, _ := strconv.Atoi(vh)
		if ti < 0 || ti > vi {
			t.Errorf("%s: after the click the \"Held for you\" panel is at y=%d px, outside the %d px window: the patient does not see it or its form", size.name, ti, vi)
		}
		p.Shot(size.name + "-booking-held")
		w := e2eEval[string](p, `document.documentElement.scrollWidth + "/" + window.innerWidth`)
		sw, iw, _ := strings.Cut(w, "/")
		a, _ := strconv.Atoi(sw)
		b, _ := strconv.Atoi(iw)
		if a > b {
			t.Errorf("%s: the page is %d px wide in a %d px window: it scrolls sideways", size.name, a, b)
		}
		if e2eEval[bool](p, `(() => { const el = document.querySelector(".skip"); if (!el) return false; const r = el.getBoundingClientRect(); return r.width > 1 && r.height > 1 && r.bottom > 0 && r.right > 0; })()`) {
			t.Logf("note: the \"Skip to content\" link is visible without focus")
		}
		p.Report()
	}
}
