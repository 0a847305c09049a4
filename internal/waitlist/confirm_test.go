package waitlist_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/waitlist"
)

// Six places typed in with addresses nobody confirms, then one a real
// patient confirms: the first freed time is offered to the real patient
// (who passes it on, and nobody else is offered it), the second too (they
// take it). No invented place is offered anything, nor sent an offer.
// Fails if the offer's match stops asking for a confirmed place.
func TestInventedJoinsNeverCaptureFreedTimes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	first, second := r.at(3, 9, 0), r.at(3, 9, 30)
	b1, b2 := r.book(t, first, "booked1@example.org"), r.book(t, second, "booked2@example.org")
	var fakes []waitlist.Entry
	for i := range 6 {
		fakes = append(fakes, r.joinUnconfirmed(t, fmt.Sprintf("victim+%d@example.org", i), first))
	}
	real := r.join(t, "real@example.org", first)

	r.cancel(t, b1.Booking)
	opening, _ := r.opening(t, first.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, real.ID); got != "open" {
		t.Fatalf("the real patient's offers of the first freed time: %q, want open", got)
	}
	if err := r.waitlist.Decline(ctx, r.clinic.ID, r.offerToken(t, real.ID)); err != nil {
		t.Fatal(err)
	}
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE id = $1 AND state = 'released'`, opening); n != 1 {
		t.Fatal("the first time, passed on by the only confirmed place, was not released to everyone")
	}

	r.cancel(t, b2.Booking)
	opening, _ = r.opening(t, second.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	c, err := r.waitlist.Accept(ctx, r.clinic.ID, r.offerToken(t, real.ID))
	if err != nil {
		t.Fatalf("the real patient takes the second time: %v", err)
	}
	if !c.Booking.Start.Equal(second) || c.Booking.Patient.Email != "real@example.org" {
		t.Fatalf("booked %s for %s", c.Booking.Start, c.Booking.Patient.Email)
	}
	for i, f := range fakes {
		if got := r.offersOf(t, f.ID); got != "" {
			t.Errorf("invented place %d was offered: %q", i, got)
		}
		if n := r.messages(t, "waitlist_offer", f.Patient.Email); n != 0 {
			t.Errorf("invented place %d was sent %d offers", i, n)
		}
	}
}

// A place nobody confirmed, alone on the list, is offered nothing: the
// cancellation makes no opening and holds nothing (the time is free for
// everyone at once), and staff cannot offer it a time by hand (409).
func TestUnconfirmedPlaceAloneIsNeverOffered(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(4, 10, 0)
	b := r.book(t, start, "booked@example.org")
	lone := r.joinUnconfirmed(t, "lone@example.org", start)

	r.cancel(t, b.Booking)
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, r.clinic.ID); n != 0 {
		t.Fatalf("a cancellation with only an unconfirmed place waiting made %d openings", n)
	}
	if h := r.heldBy(t, start); h != "" {
		t.Fatalf("the freed time is held by %q for an unconfirmed place", h)
	}
	desk := staff.User{ClinicID: r.clinic.ID, Email: "desk", Role: staff.RoleReception}
	err := r.waitlist.OfferByHand(ctx, desk, lone.ID, r.clinic.Specialists[0].ID, start)
	if ae := apperr.As(err); ae == nil || ae.Code != apperr.CodeWaitlistUnconfirmed || ae.Kind != apperr.Conflict {
		t.Fatalf("an offer by hand to an unconfirmed place: %v, want a WAITLIST_UNCONFIRMED conflict", err)
	}
	if got := r.offersOf(t, lone.ID); got != "" {
		t.Fatalf("the unconfirmed place was offered: %q", got)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, r.clinic.ID); n != 0 {
		t.Fatalf("the refused offer by hand made %d openings", n)
	}
}

// Only a link that came by e-mail confirms a place: the token Join
// returns (whoever joined has it) is refused (403) and confirms nothing.
// Confirming twice is no error; the place's page then counts it.
func TestOnlyTheMailedLinkConfirms(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	day := r.at(5, 10, 0).In(r.loc).Format(time.DateOnly)
	e, token, err := r.waitlist.Join(ctx, waitlist.JoinRequest{
		ClinicID: r.clinic.ID, AppointmentTypeID: r.clinic.Types[0].ID, From: day, To: day,
		Patient: booking.Patient{Name: "Ada Waiting", Email: "ada@example.org"}, ClientID: "c-ada", Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.Confirmed() {
		t.Fatal("a place joined from the public is confirmed at once")
	}
	_, err = r.waitlist.Confirm(ctx, r.clinic.ID, token)
	if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Forbidden {
		t.Fatalf("confirming with the token shown on joining: %v, want FORBIDDEN", err)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_entries WHERE id = $1 AND confirmed_at IS NULL`, e.ID); n != 1 {
		t.Fatal("the token shown on joining confirmed the place")
	}
	mailed := r.mailedLink(t, e.ID)
	for range 2 {
		got, err := r.waitlist.Confirm(ctx, r.clinic.ID, mailed)
		if err != nil || !got.Confirmed() || got.State != waitlist.StateWaiting {
			t.Fatalf("confirming from the e-mail: %+v, %v", got, err)
		}
	}
	if n := r.count(t, `SELECT count(*) FROM audit_log WHERE entity_id = $1 AND action = 'waitlist.confirm'`, e.ID.String()); n != 1 {
		t.Fatalf("%d audit rows of the confirmation, want 1", n)
	}
}

// A place not confirmed within ConfirmWithin of joining leaves the list
// at the sweep (lapsed, and its link can no longer confirm it); a
// confirmed place of the same age stays.
func TestUnconfirmedPlacesEndAfterADay(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(6, 10, 0)
	idle, kept := r.joinUnconfirmed(t, "idle@example.org", start), r.join(t, "kept@example.org", start)
	link := r.mailedLink(t, idle.ID)

	r.clock.Advance(waitlist.ConfirmWithin - time.Minute)
	if err := waitlist.SweepClinic(ctx, r.waitlist, r.clinic.ID); err != nil {
		t.Fatal(err)
	}
	if s := r.entryState(t, idle.ID); s != waitlist.StateWaiting {
		t.Fatalf("an unconfirmed place is %s before its day is up, want waiting", s)
	}
	r.clock.Advance(2 * time.Minute)
	if err := waitlist.SweepClinic(ctx, r.waitlist, r.clinic.ID); err != nil {
		t.Fatal(err)
	}
	if s := r.entryState(t, idle.ID); s != waitlist.StateLapsed {
		t.Fatalf("an unconfirmed place is %s a day after joining, want lapsed", s)
	}
	if s := r.entryState(t, kept.ID); s != waitlist.StateWaiting {
		t.Fatalf("a confirmed place is %s after the sweep, want waiting", s)
	}
	_, err := r.waitlist.Confirm(ctx, r.clinic.ID, link)
	if ae := apperr.As(err); ae == nil || ae.Code != apperr.CodeEntryOver || ae.Kind != apperr.Gone {
		t.Fatalf("confirming a place that lapsed: %v, want WAITLIST_ENTRY_OVER (410)", err)
	}
}

// A patient who passes a time on goes to the end of the list: the next
// freed time goes to the one who waited behind them, not to them again.
// Fails if a decline keeps the place where it was.
func TestPassingOnMovesThePlaceToTheEnd(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	first, second := r.at(3, 14, 0), r.at(3, 14, 30)
	b1, b2 := r.book(t, first, "booked1@example.org"), r.book(t, second, "booked2@example.org")
	a, b, c := r.join(t, "a@example.org", first), r.join(t, "b@example.org", first), r.join(t, "c@example.org", first)

	r.cancel(t, b1.Booking)
	opening, _ := r.opening(t, first.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if err := r.waitlist.Decline(ctx, r.clinic.ID, r.offerToken(t, a.ID)); err != nil {
		t.Fatal(err)
	}
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.waitlist.Accept(ctx, r.clinic.ID, r.offerToken(t, b.ID)); err != nil {
		t.Fatalf("the second takes the time the first passed on: %v", err)
	}

	r.cancel(t, b2.Booking)
	opening, _ = r.opening(t, second.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, a.ID) + "|" + r.offersOf(t, c.ID); got != "declined|open" {
		t.Fatalf("offers after the second freed time (first|third): %q, want declined|open", got)
	}
}
