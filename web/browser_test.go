package web_test

// Headless Chromium (Debian's /usr/bin/chromium, driven by chromedp) for
// the end-to-end tests, which run it against the real app on a real HTTP
// server, with real PostgreSQL and Redis.
//
// Without Chromium these tests fail, unless CLINIC_SKIP_BROWSER=1 (then they
// skip). Screenshots go to <repo>/.artifacts/screenshots/.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const chromiumPath = "/usr/bin/chromium"

// needChromium fails (or skips, when CLINIC_SKIP_BROWSER=1) without Chromium.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return
	}
	if os.Getenv("CLINIC_SKIP_BROWSER") == "1" {
		t.Skipf("%s is missing and CLINIC_SKIP_BROWSER=1: skipping the browser test", chromiumPath)
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		t.Fatalf("%s is missing (there is a chromium at %s); install Debian's chromium (apt-get install chromium), or set CLINIC_SKIP_BROWSER=1 to skip browser tests", chromiumPath, p)
	}
	t.Fatalf("%s is missing: install Debian's chromium (apt-get install chromium), or set CLINIC_SKIP_BROWSER=1 to skip browser tests", chromiumPath)
}

// browserTab is one browser tab, with what its console reported.
type browserTab struct {
	t    *testing.T
	name string
	ctx  context.Context

	mu         sync.Mutex
	exceptions []string
	errors     []string
}

// browserTests bounds how many tests drive browsers at once, whatever
// -parallel lets run beside them: a Chromium takes a core to start and to
// render, and a browser test's steps have deadlines. A test waiting for a
// place lets the tests without a browser run meanwhile.
var browserTests = make(chan struct{}, 2)

// browserHolders are the tests (by top-level name) holding a place: a
// test's second browser, or one of its subtests', needs none of its own.
var browserHolders sync.Map

// takeBrowserPlace waits for a place among browserTests, unless t's test
// holds one; the place is given back when t ends.
func takeBrowserPlace(t *testing.T) {
	top, _, _ := strings.Cut(t.Name(), "/")
	if _, held := browserHolders.LoadOrStore(top, struct{}{}); held {
		return
	}
	browserTests <- struct{}{}
	t.Cleanup(func() {
		browserHolders.Delete(top)
		<-browserTests
	})
}

// startBrowser starts a browser of its own (own profile, so own cookies) and
// returns its first tab. It ends with the test.
func startBrowser(t *testing.T, name string, width, height int) *browserTab {
	t.Helper()
	takeBrowserPlace(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
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
	return watchTab(t, name, ctx)
}

// NewTab opens another tab of the same browser (same cookies).
func (b *browserTab) NewTab(name string) *browserTab {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	b.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("open tab %s: %v", name, err)
	}
	return watchTab(b.t, name, ctx)
}

func watchTab(t *testing.T, name string, ctx context.Context) *browserTab {
	tab := &browserTab{t: t, name: name, ctx: ctx}
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
func (b *browserTab) Report() {
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
func (b *browserTab) Do(d time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.try(d, steps...); err != nil {
		b.Report()
		b.t.Fatalf("%s: %s: %v\n%s", b.name, what, err, b.snapshot())
	}
}

func (b *browserTab) try(d time.Duration, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// Eval evaluates a JavaScript expression.
func evalJS[T any](b *browserTab, expr string) T {
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
func (b *browserTab) Until(d time.Duration, cond string) bool {
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

// RecordLive makes every page the tab loads from now on note the name of
// each live (SSE) event it swaps in, in window.__live, from before the
// page's own scripts run: a test can then wait for what a stream sends.
// It listens to htmx:sseBeforeMessage, which the SSE extension fires on
// the element it is about to replace (its htmx:sseMessage goes to that
// element once it is out of the page, where no document listener hears
// it); the swap follows in the same task, so by the time a test's next
// evaluation reads the name, the swap is done.
func (b *browserTab) RecordLive() {
	b.t.Helper()
	const script = `window.__live = []; document.addEventListener("htmx:sseBeforeMessage", function (e) { window.__live.push(e.detail.type); });`
	err := b.try(5*time.Second, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
		return err
	}))
	if err != nil {
		b.t.Fatalf("%s: record live events: %v", b.name, err)
	}
}

// gridLiveIn holds once a day grid's stream has sent its first state: the
// page gives the stream no state of its own, so every connect starts with
// the grid whole and then each column (see ServeHTMLStream), each swapped
// in place of the page's; a test that clicks before they are in can have
// its node replaced under the click. It needs RecordLive.
const gridLiveIn = `(() => {
	const seen = window.__live || [], i = seen.lastIndexOf("grid-body");
	return i >= 0 && Array.from(document.querySelectorAll('[data-testid="grid-col"]')).every(c => seen.indexOf(c.id, i) > i);
})()`

// snapshot is the page's location and a piece of its text, for failures.
func (b *browserTab) snapshot() string {
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText.slice(0, 1500) : "")`))
	if err != nil {
		return "(no snapshot: " + err.Error() + ")"
	}
	return s
}

// Shot saves a full-page PNG under <repo>/.artifacts/screenshots.
func (b *browserTab) Shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("%s: screenshot %s: %v", b.name, name, err)
		return
	}
	dir := screenshotDir(b.t)
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Errorf("write %s: %v", p, err)
		return
	}
	b.t.Logf("screenshot: %s", p)
}

// screenshotDir is <repo>/.artifacts/screenshots, made if missing.
func screenshotDir(t *testing.T) string {
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

// cellIn is a CSS selector for a grid cell in a state.
func cellIn(id, state string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`li#%s[data-state=%q]`, id, state))
}
