package waitlist_test

// Accepting offers under races, and the cooldown rule that passes over a
// patient who booked the type meanwhile.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// Two Accepts of one offer at once (a double click, two tabs), released
// together at a barrier: exactly one books, the other is refused with a
// user's error (the offer over, or the time taken, whichever check it
// meets first), and the time is booked once. Fails if the loser's refusal
// becomes an internal error (a lost race answered 500), or if both book
// (the offer's lock and the time's one-booking rule both gone).
func TestTwoAcceptsOfOneOfferBookOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(4, 13, 0)
	b := r.book(t, start, "booked@example.org")
	only := r.join(t, "only@example.org", start)
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	token := r.offerToken(t, only.ID)
	errs := make([]error, 2)
	testkit.Together(2, func(i int) {
		_, errs[i] = r.waitlist.Accept(ctx, r.clinic.ID, token)
	})
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		if ae := apperr.As(err); ae == nil || (ae.Code != apperr.CodeOfferOver && ae.Code != apperr.CodeSlotTaken) {
			t.Errorf("the losing Accept: %v, want OFFER_OVER or SLOT_TAKEN", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d Accepts of one offer booked, want 1 (errors %v)", won, errs)
	}
	if n := r.count(t, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND slot_start = $2 AND status = 'confirmed'`, r.clinic.ID, start); n != 1 {
		t.Fatalf("%d confirmed bookings of the offered time, want 1", n)
	}
	if s := r.entryState(t, only.ID); s != waitlist.StateBooked {
		t.Fatalf("the entry is %s, want booked", s)
	}
}

// A waiting patient who has meanwhile booked the type (within its
// cooldown) is passed over: the booking gate would refuse them the time,
// which would be held for them for nothing. The next in the list gets it.
// Fails if the waitlist's match stops checking the patient's bookings of
// the type.
func TestAPatientWhoBookedMeanwhileIsPassedOver(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(4, 14, 0)
	b := r.book(t, start, "booked@example.org")
	first, second := r.join(t, "first@example.org", start), r.join(t, "second@example.org", start)
	r.book(t, r.at(5, 10, 0), "FIRST@example.org") // the same patient, booked elsewhere
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, first.ID); got != "" {
		t.Fatalf("the patient who booked meanwhile was offered the time: %q", got)
	}
	if got := r.offersOf(t, second.ID); got != "open" {
		t.Fatalf("the next patient's offers: %q, want open", got)
	}
	if _, err := r.waitlist.Accept(ctx, r.clinic.ID, r.offerToken(t, second.ID)); err != nil {
		t.Fatalf("the next patient's accept: %v", err)
	}
}

// The match compares identities, as the booking gate does: a waiting
// patient who booked the type meanwhile under another spelling of the
// same mailbox (a +tag, Gmail's dots and second domain, capitals) is
// passed over too. Fails if the match compares the addresses as typed.
func TestAPatientWhoBookedMeanwhileUnderAnotherSpellingIsPassedOver(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(4, 15, 0)
	b := r.book(t, start, "taken@example.org")
	first, second := r.join(t, "ada.patient@gmail.com", start), r.join(t, "next@example.org", start)
	r.book(t, r.at(5, 11, 0), "AdaPatient+again@googlemail.com") // the same mailbox
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, first.ID); got != "" {
		t.Fatalf("the patient who booked meanwhile under another spelling was offered the time: %q", got)
	}
	if got := r.offersOf(t, second.ID); got != "open" {
		t.Fatalf("the next patient's offers: %q, want open", got)
	}
}

// An offer by hand obeys the cooldown as the list's order does: staff
// offering a time to a patient who booked the type within its cooldown
// are refused with a conflict (COOLDOWN) that says why, and nothing is
// offered or held; a chosen patient who books the type after the offer
// was asked for and before its step runs is not offered the time either:
// the time goes back to everyone. Fails if OfferByHand, or the step's
// pick of a chosen entry, stops checking the cooldown.
func TestAnOfferByHandObeysTheCooldown(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	sp := r.clinic.Specialists[0].ID
	desk := staff.User{ClinicID: r.clinic.ID, Email: "desk", Role: staff.RoleReception}

	start := r.at(6, 10, 0)
	booked := r.join(t, "booked@example.org", start)
	r.book(t, r.at(7, 10, 0), "BOOKED@example.org") // the same patient, booked elsewhere
	err := r.waitlist.OfferByHand(ctx, desk, booked.ID, sp, start)
	if ae := apperr.As(err); ae == nil || ae.Code != apperr.CodeCooldown || ae.Kind != apperr.Conflict || !strings.Contains(ae.Message, "cooldown") {
		t.Fatalf("offering a time to a patient who booked the type: %v, want a COOLDOWN conflict naming the cooldown", err)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, r.clinic.ID); n != 0 {
		t.Fatalf("the refused offer made %d openings", n)
	}
	if s := r.entryState(t, booked.ID); s != waitlist.StateWaiting {
		t.Fatalf("the refused patient is %s, want waiting", s)
	}

	later := r.at(6, 11, 0)
	chosen := r.join(t, "chosen@example.org", later)
	if err := r.waitlist.OfferByHand(ctx, desk, chosen.ID, sp, later); err != nil {
		t.Fatal(err)
	}
	r.book(t, r.at(7, 11, 0), "chosen@example.org") // before the offer's step runs
	opening, _ := r.opening(t, later.UTC())
	if err := r.waitlist.Step(ctx, opening, chosen.ID); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, chosen.ID); got != "" {
		t.Fatalf("the chosen patient, who booked the type meanwhile, was offered the time: %q", got)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE id = $1 AND state = 'released'`, opening); n != 1 {
		t.Fatal("the time offered by hand to a patient in their cooldown is still held")
	}
}

// An Accept racing the step that runs the offer out (on an instance whose
// clock is set, each round, just past that round's offer's end, as the
// follow-up job's would be), released
// together at a barrier, five times: one of them wins, never both. Either
// the patient booked (the offer accepted, nothing else offered) or the
// offer ran out (no booking, the Accept refused as over). Can fail (when
// the two interleave) if the step stops locking the offer before it ends
// it, or the booking's transaction stops checking the offer is still
// open: then a booking and an expired offer, or an Accept refused with
// another code, are seen.
func TestAcceptRacingTheOffersEnd(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	late := &testkit.Clock{}
	expirer := r.newInstanceOn(t, late)
	for round := range 5 {
		start := r.at(4, 9+round, 30)
		b := r.book(t, start, fmt.Sprintf("booked%d@example.org", round))
		email := fmt.Sprintf("patient%d@example.org", round)
		patient := r.join(t, email, start)
		r.cancel(t, b.Booking)
		opening, _ := r.opening(t, start.UTC())
		if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
			t.Fatal(err)
		}
		r.delivered(t, email)
		token := r.offerToken(t, patient.ID)
		var ends time.Time
		if err := r.pool.QueryRow(ctx, `SELECT expires_at FROM waitlist_offers WHERE entry_id = $1 AND state = 'open'`, patient.ID).Scan(&ends); err != nil {
			t.Fatalf("round %d: the offer's end: %v", round, err)
		}
		late.Set(ends.Add(time.Millisecond))
		if now := expirer.outbox.Now(); !now.After(ends) {
			t.Fatalf("round %d: the expirer's clock %s is not past the offer's end %s: it would not run the offer out", round, now, ends)
		}
		var acceptErr, stepErr error
		testkit.Together(2, func(i int) {
			if i == 0 {
				_, acceptErr = r.waitlist.Accept(ctx, r.clinic.ID, token)
			} else {
				stepErr = expirer.waitlist.Step(ctx, opening, uuid.Nil)
			}
		})
		if stepErr != nil {
			t.Fatalf("round %d: the expiry step: %v", round, stepErr)
		}
		booked := r.count(t, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND slot_start = $2 AND status = 'confirmed'`, r.clinic.ID, start)
		offers := r.offersOf(t, patient.ID)
		switch {
		case acceptErr == nil:
			if booked != 1 || offers != "accepted" || r.entryState(t, patient.ID) != waitlist.StateBooked {
				t.Fatalf("round %d: the Accept won, but %d bookings, offers %q, entry %s", round, booked, offers, r.entryState(t, patient.ID))
			}
		default:
			if ae := apperr.As(acceptErr); ae == nil || ae.Code != apperr.CodeOfferOver {
				t.Fatalf("round %d: the Accept that lost: %v, want OFFER_OVER", round, acceptErr)
			}
			if booked != 0 || offers != "expired" {
				t.Fatalf("round %d: the offer ran out, but %d bookings, offers %q", round, booked, offers)
			}
		}
	}
}
