package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/testkit"
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

// A patient whose offer a closure withdrew after its e-mail went out is
// told, once, that the time is no longer free and that they keep their
// place, with a link to the place; a patient whose offer stands hears
// nothing more.
func TestClosureTellsThePatientWhoseOfferItWithdrew(t *testing.T) {
	t.Parallel()
	a, srv := smtpApp(t)
	c := a.patientClinic(t)
	ctx := context.Background()
	start := c.At(5, 10, 0)
	entries, _ := pwOffered(t, a, c, start, "Wendy Withdrawn")
	other, _ := pwOffered(t, a, c, c.At(6, 10, 0), "Otto Other")
	offersSent := func() bool {
		var n int
		err := a.Pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE clinic_id = $1 AND kind = 'waitlist_offer' AND status = 'sent'`, c.ID).Scan(&n)
		return err == nil && n == 2
	}
	testkit.WaitFor(t, mailWait, "both offers' e-mails to go out", offersSent)
	before := len(srv.WaitFor(t, 1, mailWait))
	admin := a.signIn(t, c.Admin)
	closeDates(t, admin, c.Specialists[0].ID.String(), localDate(c, start), localDate(c, start), "Training")

	var told testkit.ParsedMail
	testkit.WaitFor(t, mailWait, "the withdrawal's e-mail", func() bool {
		for _, m := range srv.WaitFor(t, before, mailWait)[before:] {
			if p := testkit.ParseReceived(t, m); strings.Contains(p.Subject, "no longer free") {
				told = p
				return true
			}
		}
		return false
	})
	if told.To != entries[0].Patient.Email {
		t.Errorf("the withdrawal went to %q, want the offered patient", told.To)
	}
	for _, want := range []string{"offer was withdrawn", "You keep your place on the waitlist", "/c/" + c.Slug + "/waitlist/"} {
		if !strings.Contains(told.Text, want) {
			t.Errorf("the withdrawal's text lacks %q:\n%s", want, told.Text)
		}
	}
	waitBacklogEmpty(t, a)
	var mine, others int
	if err := a.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE entry_id = $1), count(*) FILTER (WHERE entry_id = $2)
		FROM messages WHERE kind = 'waitlist_withdrawn'`, entries[0].ID, other[0].ID).Scan(&mine, &others); err != nil {
		t.Fatal(err)
	}
	if mine != 1 || others != 0 {
		t.Errorf("%d withdrawal e-mails to the offered patient and %d to the one whose offer stands, want 1 and 0", mine, others)
	}
}
