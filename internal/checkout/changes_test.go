package checkout_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// changeRig is a clinic of one specialist whose services (the patient's,
// through checkout, and the staff's, through desk.Bookings, as the web
// handlers call them) share a pool that runs two named requests in
// lockstep, and that counts the booking changes its observers hear of.
type changeRig struct {
	*env
	staff *desk.Bookings
	user  staff.User
	step  *lockstep

	mu      sync.Mutex
	changes []booking.Change
}

func newChangeRig(t *testing.T, match, first, second string) *changeRig {
	t.Helper()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	pool, step := newLockstep(t, e.pool, match, first, second)
	r := &changeRig{step: step}
	svc := wire(pool, e.rdb, 0, func(_ context.Context, ch booking.Change) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.changes = append(r.changes, ch)
	})
	r.env = e.withServices(svc)
	r.staff = desk.NewBookings(pool, nil, svc.bookings, svc.holds)
	r.user = staff.User{ID: uuid.New(), ClinicID: e.clinic.ID, Email: "desk@example.com", Name: "Desk", Role: staff.RoleStaff}
	return r
}

// book is a patient's booking at start.
func (r *changeRig) book(start time.Time) booking.Confirmation {
	r.t.Helper()
	c := r.mustConfirm(r.hold(r.typeID(0), start, uuid.Nil, newClient()))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = nil
	return c
}

// changesOf counts the committed changes (after book) of booking id, as
// observers heard of them, and its cancel and reschedule audit rows.
func (r *changeRig) changesOf(id uuid.UUID) (notified, audited int) {
	r.t.Helper()
	r.mu.Lock()
	for _, ch := range r.changes {
		if ch.Booking.ID == id || (ch.Previous != nil && ch.Previous.ID == id) {
			notified++
		}
	}
	r.mu.Unlock()
	err := r.pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log
		WHERE entity = 'booking' AND entity_id = $1 AND action IN ('booking.cancel', 'booking.reschedule')`,
		id.String()).Scan(&audited)
	if err != nil {
		r.t.Fatal(err)
	}
	return notified, audited
}

// row is the booking as stored.
func (r *changeRig) row(id uuid.UUID) db.Booking {
	r.t.Helper()
	b, err := db.New(r.pool).BookingGet(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// wantConflict asserts a clean refusal of a change that lost a race: the
// booking changed under it (412 CONCURRENCY_CONFLICT), is no longer
// active (409 BOOKING_NOT_ACTIVE) or lost its new slot (409 SLOT_TAKEN).
func wantConflict(t *testing.T, what string, err error, codes ...string) {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil || !slices.Contains(codes, ae.Code) || (ae.Kind != apperr.Conflict && ae.Kind != apperr.PreconditionFailed) {
		t.Fatalf("%s lost the race with %v; want a conflict, one of %v", what, err, codes)
	}
}

// Two changes of one booking at once, each order in turn: the first to
// lock the booking wins, the other is refused cleanly, and the booking
// ends as the winner left it, with one audit row and one notice.
func TestTwoChangesToOneBookingAtOnce(t *testing.T) {
	t.Parallel()
	t.Run("TheStaffCancelsFirstWhileThePatientMoves", func(t *testing.T) { testCancelAndMove(t, "cancel") })
	t.Run("ThePatientMovesFirstWhileTheStaffCancels", func(t *testing.T) { testCancelAndMove(t, "move") })
	t.Run("TwoCancelsCancelOnce", testTwoCancels)
	t.Run("TwoMovesOfTwoBookingsOntoOneFreeSlotBookItOnce", func(t *testing.T) { testTwoMovesOntoOneSlot(t, "a") })
	t.Run("TwoMovesOntoOneFreeSlotTheOtherWay", func(t *testing.T) { testTwoMovesOntoOneSlot(t, "b") })
}

// lockRead is the statement both changes of one booking start their
// transaction with (the row lock): the lockstep lets the first through,
// and the second only once the first holds the lock.
const lockRead = "FROM bookings WHERE id = $1"

// The staff's cancel and the patient's move of one booking (the calls
// the staff calendar and the manage page make), first the one, then the
// other.
//
// Mutations: Cancel treating a booking moved meanwhile like one already
// cancelled (a harmless no-op): the staff are told "cancelled" while the
// booking lives on at its new time, and ThePatientMovesFirst fails.
// lockBooking reading without FOR UPDATE (BookingGet): both changes pass,
// and both orders fail.
func testCancelAndMove(t *testing.T, first string) {
	t.Parallel()
	second := map[string]string{"cancel": "move", "move": "cancel"}[first]
	r := newChangeRig(t, lockRead, first, second)
	c := r.book(r.monday(10, 0))
	to := r.monday(14, 0)

	var cancelled, moved booking.Booking
	var cancelErr, moveErr error
	testkit.Together(2, func(i int) {
		ctx := context.Background()
		if i == 0 {
			cancelled, cancelErr = r.staff.Cancel(as(ctx, "cancel"), r.user, c.Booking.ID, "the specialist is ill")
		} else {
			moved, moveErr = r.co.RescheduleAppointment(as(ctx, "move"), c.Booking.ID, c.ManageToken, c.Booking.Version, to)
		}
	})
	if !r.step.met() {
		t.Fatal("the two changes never met at the row lock")
	}

	old := r.row(c.Booking.ID)
	switch first {
	case "cancel":
		if cancelErr != nil || cancelled.Status != booking.StatusCancelled {
			t.Fatalf("the first, the staff's cancel: %+v %v", cancelled, cancelErr)
		}
		wantConflict(t, "the patient's move", moveErr, apperr.CodeConcurrencyConflict, apperr.CodeBookingNotActive)
		if old.Status != booking.StatusCancelled {
			t.Fatalf("the booking is %s, want cancelled", old.Status)
		}
		if n := r.confirmedAt(r.specialist(0), to); n != 0 {
			t.Fatalf("%d bookings at the time the losing move asked for", n)
		}
	case "move":
		if moveErr != nil || !moved.Start.Equal(to) || moved.RescheduledFrom != c.Booking.ID {
			t.Fatalf("the first, the patient's move: %+v %v", moved, moveErr)
		}
		wantConflict(t, "the staff's cancel", cancelErr, apperr.CodeBookingNotActive)
		if old.Status != booking.StatusRescheduled {
			t.Fatalf("the old booking is %s, want rescheduled", old.Status)
		}
		if nb := r.row(moved.ID); nb.Status != booking.StatusConfirmed || !nb.SlotStart.Equal(to) {
			t.Fatalf("the moved booking is %s at %s, want confirmed at %s", nb.Status, nb.SlotStart, to)
		}
	}
	if n := r.confirmedAt(r.specialist(0), c.Booking.Start); n != 0 {
		t.Fatalf("%d confirmed bookings left at the old time", n)
	}
	if notified, audited := r.changesOf(c.Booking.ID); notified != 1 || audited != 1 {
		t.Fatalf("%d notices and %d audit rows of the booking's changes, want 1 and 1", notified, audited)
	}
}

// The staff and the patient cancel one booking at once. A second cancel
// is harmless by contract (the patient's page may be resent): it is told
// the booking is cancelled, and changes and announces nothing.
//
// Mutation: Cancel without its early return for a booking no longer
// confirmed: the second cancel writes a second audit row and notice.
func testTwoCancels(t *testing.T) {
	t.Parallel()
	r := newChangeRig(t, lockRead, "staff", "patient")
	c := r.book(r.monday(10, 0))

	got := make([]booking.Booking, 2)
	errs := make([]error, 2)
	testkit.Together(2, func(i int) {
		ctx := context.Background()
		if i == 0 {
			got[i], errs[i] = r.staff.Cancel(as(ctx, "staff"), r.user, c.Booking.ID, "the specialist is ill")
		} else {
			got[i], errs[i] = r.co.CancelAppointment(as(ctx, "patient"), c.Booking.ID, c.ManageToken, "cannot come")
		}
	})
	if !r.step.met() {
		t.Fatal("the two cancels never met at the row lock")
	}
	for i, who := range []string{"staff", "patient"} {
		if errs[i] != nil || got[i].Status != booking.StatusCancelled {
			t.Fatalf("the %s's cancel: %+v %v", who, got[i], errs[i])
		}
	}
	if b := r.row(c.Booking.ID); b.Status != booking.StatusCancelled || b.CancelReason != "the specialist is ill" {
		t.Fatalf("the booking is %s (%q), want cancelled with the first cancel's reason", b.Status, b.CancelReason)
	}
	if notified, audited := r.changesOf(c.Booking.ID); notified != 1 || audited != 1 {
		t.Fatalf("%d notices and %d audit rows of the cancels, want 1 and 1", notified, audited)
	}
}

// Two patients move their bookings onto one free slot at once, meeting at
// the specialist's booking lock the gate takes before its insert, each in
// turn first: one moves, the other is refused with SLOT_TAKEN and keeps
// its booking as it was; the slot is booked once.
//
// Mutation: the gate's insert not telling a lost race (no row returned,
// after waiting for the winner's commit) as SLOT_TAKEN: the loser gets an
// internal error.
func testTwoMovesOntoOneSlot(t *testing.T, first string) {
	t.Parallel()
	second := map[string]string{"a": "b", "b": "a"}[first]
	r := newChangeRig(t, "-- name: BookingSpecialistLock :exec", first, second)
	mine := map[string]booking.Confirmation{"a": r.book(r.monday(10, 0)), "b": r.book(r.monday(11, 0))}
	to := r.monday(14, 0)

	moved := map[string]booking.Booking{}
	errs := map[string]error{}
	var mu sync.Mutex
	testkit.Together(2, func(i int) {
		who := []string{"a", "b"}[i]
		c := mine[who]
		b, err := r.co.RescheduleAppointment(as(context.Background(), who), c.Booking.ID, c.ManageToken, c.Booking.Version, to)
		mu.Lock()
		defer mu.Unlock()
		moved[who], errs[who] = b, err
	})
	if !r.step.met() {
		t.Fatal("the two moves never met at the specialist's lock")
	}
	if errs[first] != nil || !moved[first].Start.Equal(to) {
		t.Fatalf("the first move: %+v %v", moved[first], errs[first])
	}
	wantConflict(t, "the second move", errs[second], apperr.CodeSlotTaken)
	if n := r.confirmedAt(r.specialist(0), to); n != 1 {
		t.Fatalf("%d confirmed bookings at the slot both moved to, want 1", n)
	}
	loser := mine[second].Booking
	if b := r.row(loser.ID); b.Status != booking.StatusConfirmed || !b.SlotStart.Equal(loser.Start) || b.Version != loser.Version {
		t.Fatalf("the refused move changed its booking: %s at %s, version %d", b.Status, b.SlotStart, b.Version)
	}
	if notified, audited := r.changesOf(loser.ID); notified != 0 || audited != 0 {
		t.Fatalf("the refused move left %d notices and %d audit rows", notified, audited)
	}
}
