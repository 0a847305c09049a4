package web_test

import (
	"context"
	"testing"
)

// A closure saved over the day of a time offered from the waitlist
// withdraws the offer (its patient could otherwise book a closed day):
// the patient waits on in their place, the time's hold goes and the
// opening closes at its next step; a standing offer on another day is
// left alone.
func TestClosureWithdrawsAStandingWaitlistOffer(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	ctx := context.Background()
	start := c.At(5, 10, 0)
	entries, opening := pwOffered(t, a, c, start, "Wendy Waiting")
	other, otherOpening := pwOffered(t, a, c, c.At(6, 10, 0), "Otto Other")
	if got := pwEntryState(t, a, entries[0].ID); got != "offered" {
		t.Fatalf("the entry is %q before the closure, want offered", got)
	}
	admin := a.signIn(t, c.Admin)
	closeDates(t, admin, c.Specialists[0].ID.String(), localDate(c, start), localDate(c, start), "Training")

	offerState := func(op string) string {
		var s string
		if err := a.Pool.QueryRow(ctx, `SELECT state FROM waitlist_offers WHERE opening_id = $1`, op).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := offerState(opening.String()); got != "withdrawn" {
		t.Errorf("the offer on the closed day is %q, want withdrawn", got)
	}
	if got := pwEntryState(t, a, entries[0].ID); got != "waiting" {
		t.Errorf("its patient's place is %q, want waiting (for the next time)", got)
	}
	if got := offerState(otherOpening.String()); got != "open" || pwEntryState(t, a, other[0].ID) != "offered" {
		t.Errorf("the offer on another day is %q, want open", got)
	}
	pwStep(t, a, opening)
	var state string
	if err := a.Pool.QueryRow(ctx, `SELECT state FROM waitlist_openings WHERE id = $1`, opening).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "released" {
		t.Errorf("the closed day's opening is %q after its step, want released", state)
	}
	active, err := a.Deps.Holds.Active(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range active {
		if h.Start.Equal(start) {
			t.Errorf("the closed day's time is still held: %+v", h)
		}
	}
}
