package checkout_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// outcome is what one of many concurrent Hold calls got.
type outcome struct {
	client string
	hold   holds.Hold
	err    error
}

// race has n fresh clients ask for the same pooled slot at once.
func (e *env) race(n int, typeID uuid.UUID, start time.Time) []outcome {
	e.t.Helper()
	out := make([]outcome, n)
	for i := range out {
		out[i].client = newClient()
	}
	testkit.Together(n, func(i int) {
		out[i].hold, out[i].err = e.tryHold(typeID, start, out[i].client)
	})
	return out
}

// split sorts outcomes into holds won and errors by code; any other error
// fails the test.
func split(t *testing.T, outs []outcome, loserCode string, loserKind apperr.Kind) (won []outcome, lost int) {
	t.Helper()
	for _, o := range outs {
		switch {
		case o.err == nil:
			won = append(won, o)
		case apperr.CodeOf(o.err) == loserCode && apperr.As(o.err).Kind == loserKind:
			lost++
		default:
			t.Errorf("client %s: unexpected error %v", o.client, o.err)
		}
	}
	return won, lost
}

func TestConcurrentClaimsOfOneSlot(t *testing.T) {
	t.Parallel()

	t.Run("OneSpecialistHundredClientsGiveExactlyOneHold", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		start := e.monday(10, 0)

		won, lost := split(t, e.race(100, e.typeID(0), start), "SLOT_HELD", apperr.Locked)
		if len(won) != 1 || lost != 99 {
			t.Fatalf("%d holds and %d SLOT_HELD, want 1 and 99", len(won), lost)
		}
		w := won[0].hold
		if w.SpecialistID != e.specialist(0) || !w.Start.Equal(start) || w.ClientID != won[0].client {
			t.Fatalf("winning hold %+v", w)
		}
		if a := e.active(); len(a) != 1 || a[0].HoldID != w.HoldID {
			t.Fatalf("live holds %+v, want only the winner's", a)
		}
	})

	t.Run("PooledSlotGivesOneHoldPerFreeSpecialistAndBooksOnce", testPooledSlot)

	t.Run("ConcurrentConfirmsOfOneHoldBookOnce", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		start := e.monday(12, 0)
		client := newClient()
		h := e.hold(e.typeID(0), start, uuid.Nil, client)

		var ok, expired atomic.Int32
		testkit.Together(10, func(int) {
			_, err := e.confirm(h, e.typeID(0), client)
			switch apperr.CodeOf(err) {
			case "":
				if err != nil {
					t.Errorf("confirm: %v", err)
					return
				}
				ok.Add(1)
			case "HOLD_EXPIRED", apperr.CodeSlotTaken:
				expired.Add(1)
			default:
				t.Errorf("confirm: %v", err)
			}
		})
		if ok.Load() != 1 || expired.Load() != 9 {
			t.Fatalf("%d booked and %d refused, want 1 and 9", ok.Load(), expired.Load())
		}
		if n := e.confirmedAt(e.specialist(0), start); n != 1 {
			t.Fatalf("%d confirmed bookings, want 1", n)
		}
	})
}

func testPooledSlot(t *testing.T) {
	t.Parallel()
	const k = 3
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: k})
	start := e.monday(11, 0)

	outs := e.race(100, e.typeID(0), start)
	won, lost := split(t, outs, "SLOT_HELD", apperr.Locked)
	if len(won) != k || lost != 100-k {
		t.Fatalf("%d holds and %d SLOT_HELD, want %d and %d", len(won), lost, k, 100-k)
	}
	bySpecialist := map[uuid.UUID]outcome{}
	for _, w := range won {
		if _, dup := bySpecialist[w.hold.SpecialistID]; dup {
			t.Fatalf("two holds on specialist %s", w.hold.SpecialistID)
		}
		bySpecialist[w.hold.SpecialistID] = w
	}
	for i := range k {
		if _, ok := bySpecialist[e.specialist(i)]; !ok {
			t.Fatalf("specialist %d got no hold; holds %v", i, bySpecialist)
		}
	}
	if a := e.active(); len(a) != k {
		t.Fatalf("%d live holds, want %d", len(a), k)
	}

	owner := bySpecialist[e.specialist(0)]
	var loser string
	for _, o := range outs {
		if o.err != nil {
			loser = o.client
			break
		}
	}

	t.Run("AnotherClientCannotConfirmALiveHold", func(t *testing.T) {
		_, err := e.confirm(owner.hold, e.typeID(0), loser)
		wantCode(t, err, "NOT_YOUR_HOLD", apperr.Forbidden)
	})
	t.Run("TheOwnerBooks", func(t *testing.T) {
		c, err := e.confirm(owner.hold, e.typeID(0), owner.client)
		if err != nil {
			t.Fatalf("owner's confirm: %v", err)
		}
		b := c.Booking
		if b.SpecialistID != e.specialist(0) || !b.Start.Equal(start) || b.Status != booking.StatusConfirmed || c.ManageToken == "" {
			t.Fatalf("booking %+v", b)
		}
	})
	t.Run("TheSpentHoldIsExpiredForEveryone", func(t *testing.T) {
		// The hold was consumed by the booking: the code answers
		// HOLD_EXPIRED (410), not NOT_YOUR_HOLD, for another client and
		// for the owner retrying without an idempotency key.
		_, err := e.confirm(owner.hold, e.typeID(0), loser)
		wantCode(t, err, "HOLD_EXPIRED", apperr.Gone)
		_, err = e.confirm(owner.hold, e.typeID(0), owner.client)
		wantCode(t, err, "HOLD_EXPIRED", apperr.Gone)
	})
	t.Run("NothingIsBookedTwice", func(t *testing.T) {
		if n := e.confirmedAt(e.specialist(0), start); n != 1 {
			t.Fatalf("%d confirmed bookings of specialist 0 at %s, want 1", n, start)
		}
	})
	t.Run("TheOtherHoldersBookTheirOwnSpecialists", func(t *testing.T) {
		for i := 1; i < k; i++ {
			w := bySpecialist[e.specialist(i)]
			c, err := e.confirm(w.hold, e.typeID(0), w.client)
			if err != nil || c.Booking.SpecialistID != e.specialist(i) {
				t.Fatalf("holder of specialist %d: %+v %v", i, c.Booking, err)
			}
		}
		for i := range k {
			if n := e.confirmedAt(e.specialist(i), start); n != 1 {
				t.Fatalf("specialist %d: %d confirmed bookings, want 1", i, n)
			}
		}
		if _, err := e.tryHold(e.typeID(0), start, newClient()); apperr.CodeOf(err) != apperr.CodeSlotTaken {
			t.Fatalf("hold of the fully booked slot: %v, want SLOT_TAKEN", err)
		}
	})
}

func TestHoldQuota(t *testing.T) {
	t.Parallel()
	for _, quota := range []int32{1, 3} {
		t.Run(fmt.Sprintf("TwentyConcurrentHoldsWithQuota%dGive%d", quota, quota), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 0, testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{{
				Name: "Checkup", DurationMin: 30, SlotStepMin: 30, MaxHoldsPerClient: quota,
			}}})
			// Twenty different slots: all sixteen of Monday, four of Tuesday.
			var starts []time.Time
			for i := range 16 {
				starts = append(starts, e.monday(9, 0).Add(time.Duration(i)*30*time.Minute))
			}
			for i := range 4 {
				starts = append(starts, e.tuesday(9, 0).Add(time.Duration(i)*30*time.Minute))
			}
			client := newClient()
			outs := make([]outcome, len(starts))
			testkit.Together(len(starts), func(i int) {
				outs[i] = outcome{client: client}
				outs[i].hold, outs[i].err = e.tryHold(e.typeID(0), starts[i], client)
			})
			won, lost := split(t, outs, "HOLD_QUOTA", apperr.TooMany)
			if len(won) != int(quota) || lost != len(starts)-int(quota) {
				t.Fatalf("%d holds and %d HOLD_QUOTA, want %d and %d", len(won), lost, quota, len(starts)-int(quota))
			}
			for _, o := range outs {
				if o.err != nil {
					if ae := apperr.As(o.err); ae.RetryAfter <= 0 || ae.Details["maxHolds"] != quota {
						t.Fatalf("HOLD_QUOTA without Retry-After or maxHolds: %+v", ae)
					}
				}
			}
			if a := e.active(); len(a) != int(quota) {
				t.Fatalf("%d live holds, want %d", len(a), quota)
			}

			t.Run("ReleasingOneMakesRoom", func(t *testing.T) {
				if err := e.co.Release(t.Context(), won[0].hold.HoldID, client); err != nil {
					t.Fatal(err)
				}
				var free time.Time
				for i, o := range outs {
					if o.err != nil {
						free = starts[i]
						break
					}
				}
				e.hold(e.typeID(0), free, uuid.Nil, client)
			})
		})
	}

	t.Run("QuotaIsPerAppointmentType", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{
			{Name: "A", DurationMin: 30, SlotStepMin: 30},
			{Name: "B", DurationMin: 30, SlotStepMin: 30},
		}})
		client := newClient()
		e.hold(e.typeID(0), e.monday(9, 0), uuid.Nil, client)
		_, err := e.tryHold(e.typeID(0), e.monday(10, 0), client)
		wantCode(t, err, "HOLD_QUOTA", apperr.TooMany)
		e.hold(e.typeID(1), e.monday(11, 0), uuid.Nil, client)
	})
}
