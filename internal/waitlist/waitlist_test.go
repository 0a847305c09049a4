package waitlist_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// A cancellation with three matching entries is offered to the oldest;
// its expiry passes the time to the second, who takes it; the third is
// never offered it. The time is held for the offers throughout, and the
// booking spends the hold.
func TestCancellationIsOfferedInOrder(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(3, 10, 0)
	first := r.book(t, start, "first@example.org")
	entries := []waitlist.Entry{r.join(t, "a@example.org", start), r.join(t, "b@example.org", start), r.join(t, "c@example.org", start)}

	r.cancel(t, first.Booking)
	opening, holdID := r.opening(t, start.UTC())
	if holdID == "" || r.heldBy(t, start) != owner(opening) {
		t.Fatalf("the freed time is not held for its opening right after the cancel (hold %q, held by %q)", holdID, r.heldBy(t, start))
	}
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, entries[0].ID) + "|" + r.offersOf(t, entries[1].ID); got != "open|" {
		t.Fatalf("offers after the cancel: %q, want the oldest's open offer only", got)
	}
	if n := r.messages(t, "waitlist_offer", "a@example.org"); n != 1 {
		t.Fatalf("%d offer e-mails to the first, want 1", n)
	}

	// The offer, which reached the first, runs out: the first leaves the
	// list, the second is offered.
	r.delivered(t, "a@example.org")
	r.clock.Advance(waitlist.DefaultOfferFor + time.Second)
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, entries[0].ID) + "|" + r.offersOf(t, entries[1].ID); got != "expired|open" {
		t.Fatalf("offers after the first's expiry: %q, want expired|open", got)
	}
	if s := r.entryState(t, entries[0].ID); s != waitlist.StateLapsed {
		t.Fatalf("the first entry is %s after its offer ran out, want lapsed", s)
	}
	if r.heldBy(t, start) != owner(opening) {
		t.Fatal("the time is not held while offered to the second")
	}

	c, err := r.waitlist.Accept(ctx, r.clinic.ID, r.offerToken(t, entries[1].ID))
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	if !c.Booking.Start.Equal(start) || c.Booking.Patient.Email != "b@example.org" {
		t.Fatalf("booked %s for %s", c.Booking.Start, c.Booking.Patient.Email)
	}
	if s := r.entryState(t, entries[1].ID); s != waitlist.StateBooked {
		t.Fatalf("the second entry is %s, want booked", s)
	}
	if h := r.heldBy(t, start); h != "" {
		t.Fatalf("the hold outlived the booking: held by %q", h)
	}
	// Whatever runs later for this opening offers nothing more.
	r.clock.Advance(waitlist.DefaultOfferFor + time.Second)
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, entries[2].ID); got != "" {
		t.Fatalf("the third was offered a booked time: %q", got)
	}
	if s := r.entryState(t, entries[2].ID); s != waitlist.StateWaiting {
		t.Fatalf("the third entry is %s, want still waiting", s)
	}
}

// While a time is offered, nobody else can hold it; a declined offer goes
// to the next at once; after the last, the time is free for everyone.
func TestOfferedTimeIsHeldUntilTheListEnds(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(4, 11, 0)
	b := r.book(t, start, "first@example.org")
	only := r.join(t, "only@example.org", start)
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	_, err := r.holds.Claim(ctx, holds.ClaimRequest{ClientID: "someone-else", ClinicID: r.clinic.ID,
		AppointmentTypeID: r.clinic.Types[0].ID, SpecialistID: r.clinic.Specialists[0].ID,
		Start: start, End: start.Add(time.Duration(r.clinic.Types[0].DurationMin) * time.Minute), Quota: 1})
	if !errors.Is(err, holds.ErrHeld) {
		t.Fatalf("another patient's hold of the offered time: %v, want ErrHeld", err)
	}
	if err := r.waitlist.Decline(ctx, r.clinic.ID, r.offerToken(t, only.ID)); err != nil {
		t.Fatal(err)
	}
	if s := r.entryState(t, only.ID); s != waitlist.StateWaiting {
		t.Fatalf("a declining entry is %s, want waiting for other times", s)
	}
	// The follow-up step, which the queue runs at once after a decline.
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if h := r.heldBy(t, start); h != "" {
		t.Fatalf("nobody else waits, yet the time is held by %q", h)
	}
	if s := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE id = $1 AND state = 'released'`, opening); s != 1 {
		t.Fatal("the opening was not released")
	}
}

// Two processes running the same opening's step at once make one offer,
// one hold and one e-mail.
func TestTwoInstancesMakeOneOffer(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	other := r.newInstance(t)
	start := r.at(5, 9, 0)
	b := r.book(t, start, "first@example.org")
	e := r.join(t, "waiting@example.org", start)
	r.join(t, "second@example.org", start)
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())

	errs := make([]error, 2)
	testkit.Together(2, func(i int) {
		errs[i] = []*instance{r.instance, other}[i].waitlist.Step(context.Background(), opening, uuid.Nil)
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_offers WHERE opening_id = $1`, opening); n != 1 {
		t.Fatalf("%d offers of one freed time, want 1", n)
	}
	if got := r.offersOf(t, e.ID); got != "open" {
		t.Fatalf("the oldest entry's offers: %q", got)
	}
	if n := r.messages(t, "waitlist_offer", "waiting@example.org") + r.messages(t, "waitlist_offer", "second@example.org"); n != 1 {
		t.Fatalf("%d offer e-mails, want 1", n)
	}
}

// A step that fails after taking the hold and before it commits (a process
// dying there) sends nothing; run again it sends the offer once, under
// the same hold. Never run again, the hold lapses with its life.
func TestOfferInterruptedAfterTheHoldSendsOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(6, 14, 0)
	b := r.book(t, start, "first@example.org")
	e := r.join(t, "waiting@example.org", start)
	r.cancel(t, b.Booking)
	opening, holdID := r.opening(t, start.UTC())

	waitlist.CrashAfterHold(r.waitlist, true)
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err == nil {
		t.Fatal("the interrupted step reported success")
	}
	if n := r.messages(t, "waitlist_offer", "waiting@example.org"); n != 0 {
		t.Fatalf("an interrupted offer wrote %d e-mails", n)
	}
	h, ok, err := r.holds.HeldBy(ctx, r.clinic.ID, r.clinic.Types[0].ID, r.clinic.Specialists[0].ID, start)
	if err != nil || !ok || h.HoldID != holdID {
		t.Fatalf("the time's hold after the interruption: %+v %v %v", h, ok, err)
	}
	if life := time.Until(h.ExpiresAt); life > waitlist.DefaultOfferFor+2*time.Minute {
		t.Fatalf("the hold of an offer never sent lives %s, longer than an offer and its grace", life)
	}

	waitlist.CrashAfterHold(r.waitlist, false)
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil { // a duplicate run
		t.Fatal(err)
	}
	if n := r.messages(t, "waitlist_offer", "waiting@example.org"); n != 1 {
		t.Fatalf("%d offer e-mails after the retry, want 1", n)
	}
	if got := r.offersOf(t, e.ID); got != "open" {
		t.Fatalf("offers: %q", got)
	}
	if _, h2 := r.opening(t, start.UTC()); h2 != holdID {
		t.Fatalf("the retry took another hold (%s, was %s)", h2, holdID)
	}
}

// A booking moved away frees its old time like a cancellation; a move
// onto an overlapping time of its own frees nothing.
func TestMoveFreesTheOldTime(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	start := r.at(7, 9, 0)
	b := r.book(t, start, "mover@example.org")
	r.join(t, "waiting@example.org", start)
	moved, err := r.bookings.Reschedule(context.Background(), booking.RescheduleRequest{BookingID: b.Booking.ID, Start: start.Add(10 * time.Minute), Actor: "staff:test"})
	if err != nil {
		t.Fatal(err)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, r.clinic.ID); n != 0 {
		t.Fatalf("a move onto an overlapping time made %d openings", n)
	}
	if _, err := r.bookings.Reschedule(context.Background(), booking.RescheduleRequest{BookingID: moved.ID, Start: start.Add(3 * time.Hour), Actor: "staff:test"}); err != nil {
		t.Fatal(err)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1 AND cause = 'move'`, r.clinic.ID); n != 1 {
		t.Fatalf("%d openings after a move away, want 1", n)
	}
}

// Staff offer a time by hand to a patient they choose, ahead of the
// list's order, and remove an entry; both are in the audit log.
func TestStaffOfferByHandAndRemoveAreAudited(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(8, 15, 0)
	r.join(t, "older@example.org", start)
	chosen := r.join(t, "chosen@example.org", start)
	desk := staff.User{ClinicID: r.clinic.ID, Email: "desk", Role: staff.RoleReception} // audited as staff:desk
	if err := r.waitlist.OfferByHand(ctx, desk, chosen.ID, r.clinic.Specialists[0].ID, start); err != nil {
		t.Fatal(err)
	}
	opening, _ := r.opening(t, start.UTC())
	// The opening's first job names the chosen entry; the queue would run it.
	var entry uuid.UUID
	if err := r.pool.QueryRow(ctx, `SELECT (args->>'entry')::uuid FROM river_job WHERE kind = 'waitlist_offer' AND args->>'opening_id' = $1::text`, opening).Scan(&entry); err != nil {
		t.Fatal(err)
	}
	if err := r.waitlist.Step(ctx, opening, entry); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, chosen.ID); got != "open" {
		t.Fatalf("the chosen entry's offers: %q", got)
	}
	err := r.waitlist.OfferByHand(ctx, desk, chosen.ID, r.clinic.Specialists[0].ID, start.Add(time.Hour))
	if apperr.CodeOf(err) != apperr.CodeEntryOver {
		t.Fatalf("offering a second time to an entry with an offer: %v", err)
	}
	if err := r.waitlist.Remove(ctx, desk, chosen.ID); err != nil {
		t.Fatal(err)
	}
	if s := r.entryState(t, chosen.ID); s != waitlist.StateRemoved {
		t.Fatalf("removed entry is %s", s)
	}
	if got := r.offersOf(t, chosen.ID); got != "withdrawn" {
		t.Fatalf("the removed entry's offer is %q, want withdrawn", got)
	}
	for _, action := range []string{"waitlist.offer", "waitlist.remove"} {
		if n := r.count(t, `SELECT count(*) FROM audit_log WHERE clinic_id = $1 AND action = $2 AND actor = 'staff:desk'`, r.clinic.ID, action); n != 1 {
			t.Fatalf("%d audit rows of %s, want 1", n, action)
		}
	}
}

// A cancellation finds the patient waiting while another transaction
// writes a row that refers to their place (a link minted for an e-mail
// being composed): such a row locks the place only for key share, which
// must not make the place look taken.
func TestCancelFindsAPlaceWhileALinkToItIsWritten(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(5, 10, 0)
	b := r.book(t, start, "booked@example.org")
	e := r.join(t, "waiting@example.org", start)
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	hash := sha256.Sum256([]byte(uuid.NewString()))
	if _, err := tx.Exec(ctx, `INSERT INTO waitlist_links (token_hash, entry_id, clinic_id)
		SELECT $1, id, clinic_id FROM waitlist_entries WHERE id = $2`, hash[:], e.ID); err != nil {
		t.Fatal(err)
	}
	r.cancel(t, b.Booking)
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, r.clinic.ID); n != 1 {
		t.Fatalf("%d openings: the cancellation passed over the only patient waiting", n)
	}
}

// An opening whose time was booked all the same (its hold lost, and
// someone booking before the step took it again) offers nothing and
// closes.
func TestStepOffersNoTimeBookedMeanwhile(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(6, 11, 0)
	b := r.book(t, start, "booked@example.org")
	e := r.join(t, "waiting@example.org", start)
	r.cancel(t, b.Booking)
	id, holdID := r.opening(t, start.UTC())
	if _, err := r.holds.Release(ctx, holdID, "waitlist:"+id.String()); err != nil {
		t.Fatalf("lose the hold: %v", err)
	}
	r.book(t, start, "quick@example.org")
	if err := r.waitlist.Step(ctx, id, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, e.ID); got != "" {
		t.Fatalf("offers of a booked time: %q", got)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE id = $1 AND state = 'released'`, id); n != 1 {
		t.Fatal("the opening of a booked time is still open")
	}
}

// An offer whose e-mail never went out (the mail server was away all the
// while) passes the time on when it runs out, but the patient, never
// told, keeps their place.
func TestOfferNeverSentKeepsThePlace(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(4, 15, 0)
	b := r.book(t, start, "booked@example.org")
	first, second := r.join(t, "first@example.org", start), r.join(t, "second@example.org", start)
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(waitlist.DefaultOfferFor + time.Second)
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if s := r.entryState(t, first.ID); s != waitlist.StateWaiting {
		t.Fatalf("the patient whose offer never went out is %s, want waiting", s)
	}
	if got := r.offersOf(t, second.ID); got != "open" {
		t.Fatalf("the second's offers: %q, want open", got)
	}
}

// The sweep steps on an opening whose follow-up job was lost (its offer
// ran out over a minute ago and nothing moved it), and lapses places
// whose last day is over. The test sweeps its own clinic only, at a clock
// 17 minutes ahead: the other tests of this package run in parallel on the
// same database, and a sweep of every clinic would run out their offers.
// A neighbouring clinic's open offer and place whose last day was
// yesterday prove the scope: the test fails if the sweep stops filtering
// openings, or the places it lapses, by clinic.
func TestSweepMovesOnWhatNoJobDoes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	start := r.at(4, 11, 0)

	neighbour := newRig(t)
	nb := neighbour.book(t, start, "booked@example.org")
	nbWaiting := neighbour.join(t, "neighbour@example.org", start)
	neighbour.cancel(t, nb.Booking)
	nbOpening, _ := neighbour.opening(t, start.UTC())
	if err := neighbour.waitlist.Step(ctx, nbOpening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	neighbour.delivered(t, "neighbour@example.org")
	nbPast := neighbour.join(t, "neighbour-past@example.org", start)
	if _, err := r.pool.Exec(ctx, `UPDATE waitlist_entries SET from_date = current_date - 2, to_date = current_date - 1 WHERE id = $1`, nbPast.ID); err != nil {
		t.Fatal(err)
	}

	b := r.book(t, start, "booked@example.org")
	first, second := r.join(t, "first@example.org", start), r.join(t, "second@example.org", start)
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	r.delivered(t, "first@example.org")
	r.clock.Advance(waitlist.DefaultOfferFor + 2*time.Minute)
	if _, err := r.pool.Exec(ctx, `UPDATE waitlist_entries SET from_date = current_date - 2, to_date = current_date - 1 WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	if err := waitlist.SweepClinic(ctx, r.waitlist, r.clinic.ID); err != nil {
		t.Fatal(err)
	}
	if got := neighbour.offersOf(t, nbWaiting.ID); got != "open" {
		t.Fatalf("another clinic's offer is %q after this clinic's sweep, want open", got)
	}
	if s := neighbour.entryState(t, nbPast.ID); s != waitlist.StateWaiting {
		t.Fatalf("another clinic's place whose days are over is %s after this clinic's sweep, want waiting", s)
	}
	if s := r.entryState(t, first.ID); s != waitlist.StateLapsed {
		t.Fatalf("the first is %s after the sweep, want lapsed (their offer ran out)", s)
	}
	if s := r.entryState(t, second.ID); s != waitlist.StateLapsed {
		t.Fatalf("a place whose days are over is %s after the sweep, want lapsed", s)
	}
	if n := r.count(t, `SELECT count(*) FROM waitlist_openings WHERE id = $1 AND state = 'released'`, opening); n != 1 {
		t.Fatal("the opening nobody else waits for is still open after the sweep")
	}
}
