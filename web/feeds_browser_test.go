package web_test

// The specialist page's calendar address in a browser: made, copied and
// offered as a webcal:// link, with axe clean, in English and in German.

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/seed"
	"github.com/clinic/booking/internal/testkit"
)

// allowClipboard lets the page write and read the clipboard, as a user
// who allowed it would.
func allowClipboard() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := cdp.Call(ctx, t, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted,
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestFeedAddressBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	english := englishOf(t, seed.Demo{})
	for _, tc := range []struct{ lang, made, copied string }{
		{"en", "This is the new address.", "Copied."},
		{"de", "Dies ist die neue Adresse.", "Kopiert."},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			sp := c.Specialists[0].ID
			if tc.lang == "de" {
				sp = c.Specialists[1].ID
			}
			b := startBrowser(t, "feed-"+tc.lang, 1280, 900)
			b.Do(stafferWait, "ask for "+tc.lang, askingFor(tc.lang), allowClipboard())
			signInBrowser(b, a, c.Admin)
			b.Do(stafferWait, "open the specialist's page",
				chromedp.Navigate(a.URL+"/staff/specialists/"+sp.String()),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="feed-none"]`)),
			)
			if !b.Until(stafferWait, `typeof htmx !== "undefined"`) {
				t.Fatal("htmx never loaded")
			}
			b.Do(stafferWait, "make an address",
				chromedp.Click(chromedp.CSS(`[data-testid="feed-new"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="feed-url"]`)),
			)
			url := evalJS[string](b, `document.querySelector('[data-testid="feed-url"]').value`)
			if !strings.HasPrefix(url, a.URL+"/calendar/f_") || !strings.HasSuffix(url, ".ics") {
				t.Fatalf("address %q", url)
			}
			if href := evalJS[string](b, `document.querySelector('[data-testid="feed-webcal"]').getAttribute("href")`); href != "webcal://"+strings.TrimPrefix(url, "http://") {
				t.Errorf("webcal link %q for %q", href, url)
			}
			block := innerText(b, `[data-testid="feed-specialist"]`)
			if !strings.Contains(block, tc.made) {
				t.Errorf("the block says %q", block)
			}
			if tc.lang == "de" {
				noEnglish(t, "the German block", block, english)
			}
			b.Do(stafferWait, "copy the address", chromedp.Click(chromedp.CSS(`[data-testid="feed-copy"]`)))
			if !b.Until(stafferWait, `document.querySelector('[data-testid="feed-copy"]').textContent === `+jsString(tc.copied)) {
				t.Fatalf("the copy button never said it copied\n%s", b.snapshot())
			}
			got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
			if err != nil || got != url {
				t.Errorf("the clipboard holds %q (%v), want the address", got, err)
			}
			if bad := axeSerious(t, b); len(bad) > 0 {
				t.Errorf("axe (%s, address shown): %s", tc.lang, strings.Join(bad, "; "))
			}
			b.Shot("feed-address-" + tc.lang)
		})
	}
}
