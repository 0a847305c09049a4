package web_test

// The waitlist in headless Chromium: from a week without free time to the
// form, a place, and a time offered that counts down and is taken.

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
)

func TestE2EBrowserWaitlistJoinAndTakeAnOffer(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.clinic(t, testkitOneSlotADay())
	typ, sp := c.Type0(), c.Specialists[0]
	monday := c.Monday(9, 0)
	ctx := context.Background()
	const wait = 10 * time.Second
	var week []booking.Confirmation
	for d := range 5 {
		week = append(week, a.bookAs(t, c, typ, sp.ID, monday.AddDate(0, 0, d), booking.Patient{Name: "Full Week", Email: uniqueEmail("full")}))
	}

	tab := startBrowser(t, "patient", 1280, 900)
	defer tab.Report()
	tab.Do(wait, "open the full week", chromedp.Navigate(a.URL+c.BookURL(typ, monday, uuid.Nil)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-join"]`)))
	tab.Shot("waitlist-full-week")
	email := uniqueEmail("browser")
	tab.Do(wait, "fill in the waitlist form",
		chromedp.Click(chromedp.CSS(`[data-testid="waitlist-join"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-form"]`)),
		chromedp.SendKeys(chromedp.CSS(`#name`), "Ada Browser"),
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.Click(chromedp.CSS(`input[name="times"][value="morning"]`)),
	)
	tab.Shot("waitlist-form")
	tab.Do(wait, "join", chromedp.Click(chromedp.CSS(`[data-testid="waitlist-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-joined"]`)))
	tab.Shot("waitlist-joined")
	tab.Do(wait, "open the place", chromedp.Click(chromedp.CSS(`[data-testid="waitlist-place-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-place"][data-state="waiting"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-unconfirmed"]`)))

	var entry uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_entries WHERE patient_email = $1`, email).Scan(&entry); err != nil {
		t.Fatalf("the form made no entry: %v", err)
	}
	// The link of the place's e-mail, and its Confirm button.
	tab.Do(wait, "open the e-mailed link", chromedp.Navigate(a.URL+pwMailedLink(t, a, c, entry)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-confirm"]`)))
	tab.Shot("waitlist-confirm")
	tab.Do(wait, "confirm", chromedp.Click(chromedp.CSS(`[data-testid="waitlist-confirm"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waitlist-place"][data-confirmed="yes"]`)))
	tab.Shot("waitlist-confirmed")
	if _, _, err := a.Deps.Bookings.Cancel(ctx, booking.CancelRequest{BookingID: week[0].Booking.ID, Actor: "staff:test", Reason: "ill"}); err != nil {
		t.Fatal(err)
	}
	var opening uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_openings WHERE clinic_id = $1`, c.ID).Scan(&opening); err != nil {
		t.Fatal(err)
	}
	pwStep(t, a, opening)
	link := pwOfferLink(t, a, c, entry)

	tab.Do(wait, "open the offer", chromedp.Navigate(a.URL+link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="offer-accept"]`)))
	if !tab.Until(wait, `/\d+ s left/.test(document.querySelector("[data-testid=offer-until] .countdown").textContent)`) {
		t.Errorf("the offer does not count down:\n%s", tab.snapshot())
	}
	tab.Shot("waitlist-offer")
	tab.Do(wait, "take it", chromedp.Click(chromedp.CSS(`[data-testid="offer-accept"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="booked"]`)))
	tab.Shot("waitlist-offer-taken")
	if got := pwEntryState(t, a, entry); got != "booked" {
		t.Errorf("the entry is %q after taking the offer", got)
	}
}
