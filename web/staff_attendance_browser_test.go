package web_test

// The booking dialog in headless Chromium (see browser_test.go): a
// booking's block opens it with the focus on its heading, Arrived marks
// the booking in place, Escape closes it and gives the focus back to the
// block; the day sheet's Print button is shown once the script runs.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/testkit"
)

// addBookingBlock puts into the staff page the desk's container and a
// booking's block as the day grid draws them.
func addBookingBlock(b *browserTab, id string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => {
		const frame = document.querySelector(".staff");
		if (!document.getElementById("desk-dialog")) {
			const box = document.createElement("div");
			box.id = "desk-dialog";
			frame.appendChild(box);
		}
		const block = document.createElement("button");
		block.type = "button";
		block.className = "block booking";
		block.id = "test-block";
		block.dataset.booking = %q;
		block.textContent = "Booking";
		block.setAttribute("hx-get", "/staff/bookings/" + %q + "/dialog");
		block.setAttribute("hx-target", "#desk-dialog");
		frame.appendChild(block);
		htmx.process(block);
		return true;
	})()`, id, id)
	evalJS[bool](b, js)
}

func TestAttendanceBrowserDialog(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	bk := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.At(0, 0, 0), booking.Patient{Name: "Browser Patient", Email: "b@example.org"}).Booking
	id := bk.ID.String()
	s := startBrowser(t, "mark", 1280, 1000)
	defer s.Report()

	s.Do(stafferWait, "sign in",
		chromedp.Navigate(a.URL+"/staff/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), c.Staff.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`form[action="/staff/login"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="daygrid"]`)),
		chromedp.Navigate(a.URL+"/staff"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="calendar"]`)),
	)
	if !s.Until(stafferWait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded on the calendar")
	}
	addBookingBlock(s, id)
	s.Do(stafferWait, "open the dialog",
		chromedp.Click(chromedp.CSS(`#test-block`)),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[open] button[data-mark="arrived"]`)),
	)
	if !s.Until(stafferWait, `document.activeElement && document.activeElement.id === "booking-dialog-title"`) {
		t.Error("the opened dialog's heading does not have the focus")
	}
	if bad := axeSerious(t, s); len(bad) > 0 {
		t.Errorf("axe finds serious problems with the dialog open: %v", bad)
	}
	s.Do(stafferWait, "mark arrived",
		chromedp.Click(chromedp.CSS(`#desk-dialog button[data-mark="arrived"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#desk-dialog dialog[data-attendance="arrived"] [data-testid="booking-dialog-notice"]`)),
	)
	if m := a.bookingAttendance(t, id); m != desk.Arrived {
		t.Errorf("after Arrived the booking is marked %q", m)
	}
	if !evalJS[bool](s, `document.querySelector('#desk-dialog button[data-mark="arrived"]').getAttribute("aria-pressed") === "true"`) {
		t.Error("the Arrived button is not shown pressed")
	}
	s.Do(stafferWait, "press Escape", chromedp.KeyEvent("\u001b"))
	if !s.Until(stafferWait, `document.getElementById("desk-dialog").innerHTML.trim() === ""`) {
		t.Fatalf("Escape did not close the dialog\n%s", s.snapshot())
	}
	if !evalJS[bool](s, `document.activeElement && document.activeElement.id === "test-block"`) {
		t.Error("the focus did not go back to the booking's block")
	}

	s.Do(stafferWait, "open the day sheet",
		chromedp.Navigate(a.URL+"/staff/day/sheet?date="+time.Now().In(c.Loc).Format(time.DateOnly)),
		chromedp.WaitVisible(chromedp.CSS(`button[data-print]`)),
	)
	if !evalJS[bool](s, `!!document.querySelector('tr[data-attendance="arrived"]')`) {
		t.Error("the day sheet does not show the arrived booking")
	}
	if bad := axeSerious(t, s); len(bad) > 0 {
		t.Errorf("axe finds serious problems with the day sheet: %v", bad)
	}
	s.Do(stafferWait, "print media", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
		return err
	}))
	printed := `getComputedStyle(document.querySelector(".staff-head")).display === "none" &&
		document.querySelector("[data-print]").getClientRects().length === 0 &&
		getComputedStyle(document.querySelector(".sheet-specialist")).breakAfter === "page" &&
		getComputedStyle(document.querySelector(".sheet-specialist:last-of-type")).breakAfter === "auto"`
	if !evalJS[bool](s, printed) {
		t.Errorf("printed, the sheet keeps the header or the Print button or runs the specialists together: %s",
			evalJS[string](s, `[getComputedStyle(document.querySelector(".staff-head")).display, getComputedStyle(document.querySelector(".sheet-specialist")).breakAfter].join(" ")`))
	}
}
