package web_test

// The waitlist seen from an open booking page: a cancelled time that
// someone waits for goes from taken to held (offered) to taken again, and
// is never shown free on the way.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/waitlist"
)

func TestE2EBrowserOfferedTimeNeverLooksFree(t *testing.T) {
	t.Parallel()
	needChromium(t)
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 10, 0)
	cellID := grid.CellID(sp.ID, start)
	ctx := context.Background()
	const wait = 10 * time.Second

	first := a.bookAs(t, c, typ, sp.ID, start, booking.Patient{Name: "First Patient", Email: "first@example.org"})
	day := start.In(c.Loc).Format(time.DateOnly)
	entry, _, err := a.Deps.Waitlist.Join(ctx, waitlist.JoinRequest{
		ClinicID: c.ID, AppointmentTypeID: typ.ID, From: day, To: day,
		Patient: booking.Patient{Name: "Waiting Patient", Email: "waiting@example.org"}, ClientID: "waiting", Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	pwConfirm(t, a, c, entry.ID)

	tab := startBrowser(t, "watcher", 1280, 900)
	defer tab.Report()
	tab.Do(wait, "open the week", chromedp.Navigate(a.URL+c.BookURL(typ, start, sp.ID)), chromedp.WaitVisible(cellIn(cellID, "taken")))
	if !tab.Until(wait, `typeof htmx !== "undefined"`) {
		t.Fatal("htmx never loaded")
	}
	// Every state the cell is drawn in, from now on: a live update swaps
	// the cell, so the whole document is watched.
	evalJS[bool](tab, `(() => {
		window.__states = [];
		window.__noReload = true;
		const seen = () => {
			const li = document.querySelector("li#`+cellID+`");
			const s = li ? li.dataset.state : "gone";
			if (window.__states[window.__states.length - 1] !== s) window.__states.push(s);
		};
		seen();
		new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, attributes: true});
		return true;
	})()`)

	if _, _, err := a.Deps.Bookings.Cancel(ctx, booking.CancelRequest{BookingID: first.Booking.ID, Actor: "staff:test", Reason: "ill"}); err != nil {
		t.Fatal(err)
	}
	var opening uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_openings WHERE clinic_id = $1`, c.ID).Scan(&opening); err != nil {
		t.Fatal(err)
	}
	if err := a.Deps.Waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	tab.Do(wait, "see the offered time held", chromedp.WaitVisible(cellIn(cellID, "held")))
	tab.Shot("waitlist-offer-held")

	token := "offer-" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := a.Pool.Exec(ctx, `INSERT INTO waitlist_links (token_hash, entry_id, offer_id, clinic_id)
		SELECT sha256($1::bytea), entry_id, id, clinic_id FROM waitlist_offers WHERE entry_id = $2 AND state = 'open'`, []byte(token), entry.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Deps.Waitlist.Accept(ctx, c.ID, token); err != nil {
		t.Fatalf("accept the offer: %v", err)
	}
	tab.Do(wait, "see the time taken again", chromedp.WaitVisible(cellIn(cellID, "taken")))
	states := evalJS[[]string](tab, `window.__states`)
	if strings.Join(states, ",") != "taken,held,taken" {
		t.Errorf("the cell was drawn as %v, want taken, held, taken (never free)", states)
	}
	if !evalJS[bool](tab, `window.__noReload === true`) {
		t.Error("the page reloaded: the changes must arrive in place")
	}
}
