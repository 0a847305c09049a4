package web_test

// The admins' kiosk page: a new screen's link is whole (the address the
// page was opened at, the board and the device token), with a copy button
// and its QR code; each active screen has its own Revoke button.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/testkit"
)

func TestKioskPageShowsTheWholeLinkWithCopyAndQR(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	admin.Get("/staff/kiosks")
	r := admin.Post("/staff/kiosks", url.Values{"name": {"Waiting room"}}).Want(http.StatusCreated)
	doc := r.Doc()
	link, _ := doc.Find(`[data-testid="kiosk-link"]`).Attr("href")
	if !strings.HasPrefix(link, a.URL+"/kiosk/"+c.Slug+"?device=") {
		t.Errorf("the link is %q, want the whole address of the board", link)
	}
	if cp, _ := doc.Find(`[data-testid="kiosk-copy"]`).Attr("data-copy"); cp != link {
		t.Errorf("the copy button copies %q, want the link", cp)
	}
	if src, _ := doc.Find(`[data-testid="kiosk-link-qr"]`).Attr("src"); !strings.HasPrefix(src, "data:image/svg+xml") {
		t.Errorf("no QR code of the link: %q", src)
	}
	if a.do(t, http.MethodGet, strings.TrimPrefix(link, a.URL), nil).Status != http.StatusOK {
		t.Error("the link does not open the board")
	}
	page := admin.Get("/staff/kiosks").Want(http.StatusOK)
	if n := page.Doc().Find(`form[data-testid="kiosk-revoke"] button[type="submit"]`).Length(); n != 1 {
		t.Errorf("%d Revoke buttons for one screen", n)
	}
}

func TestKioskPageBrowser(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	s := startBrowser(t, "kiosks", 1280, 900)
	defer s.Report()
	signInBrowser(s, a, c.Admin)
	s.Do(stafferWait, "make a device link",
		chromedp.Navigate(a.URL+"/staff/kiosks"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-form"] #name`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="kiosk-form"] #name`), "Waiting room by the long corridor on the first floor"),
		chromedp.Click(chromedp.CSS(`[data-testid="kiosk-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="kiosk-link-qr"]`)),
	)
	if !s.Until(stafferWait, `document.querySelector('[data-testid="kiosk-link-qr"]').naturalWidth > 0`) {
		t.Error("the QR code does not load")
	}
	if w := evalJS[int](s, `document.documentElement.scrollWidth`); w > 1280 {
		t.Errorf("the page is %d px wide: the link does not wrap", w)
	}
	if v := axeSerious(t, s); len(v) > 0 {
		t.Errorf("axe on the kiosk page: %s", strings.Join(v, "; "))
	}
}
