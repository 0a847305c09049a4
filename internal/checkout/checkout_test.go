package checkout_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
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

	t.Run("PooledSlotGivesOneHoldPerFreeSpecialistAndBooksOnce", func(t *testing.T) {
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
	})

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

func TestAssignment(t *testing.T) {
	t.Parallel()

	t.Run("PooledHoldGoesToTheHighestPriority", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 3})
		if !(e.clinic.Specialists[0].Priority > e.clinic.Specialists[1].Priority && e.clinic.Specialists[1].Priority > e.clinic.Specialists[2].Priority) {
			t.Fatalf("testkit priorities changed: %+v", e.clinic.Specialists)
		}
		for _, hh := range []int{9, 12, 16} {
			h := e.hold(e.typeID(0), e.monday(hh, 0), uuid.Nil, newClient())
			if h.SpecialistID != e.specialist(0) {
				t.Fatalf("%02d:00 went to %s, want the top specialist", hh, h.SpecialistID)
			}
		}
	})

	t.Run("NextPriorityWhenTheTopOneIsHeldByAnother", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 3})
		start := e.monday(10, 0)
		for i := range 3 {
			if h := e.hold(e.typeID(0), start, uuid.Nil, newClient()); h.SpecialistID != e.specialist(i) {
				t.Fatalf("hold %d went to %s, want specialist %d", i, h.SpecialistID, i)
			}
		}
		_, err := e.tryHold(e.typeID(0), start, newClient())
		ae := wantCode(t, err, "SLOT_HELD", apperr.Locked)
		if ae.RetryAfter < time.Second || ae.Details["retryAfterSeconds"] == nil {
			t.Fatalf("SLOT_HELD must say when to retry: %+v", ae)
		}
	})

	t.Run("AClientsOwnHoldDoesNotPushItAside", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 2})
		start := e.monday(10, 0)
		client := newClient()
		first := e.hold(e.typeID(0), start, uuid.Nil, client)
		again := e.hold(e.typeID(0), start, uuid.Nil, client)
		if again.HoldID != first.HoldID || again.SpecialistID != e.specialist(0) {
			t.Fatalf("re-click gave %+v, want the same hold %+v", again, first)
		}
		if a := e.active(); len(a) != 1 {
			t.Fatalf("%d live holds after a re-click, want 1", len(a))
		}
	})

	t.Run("RequestedSpecialistIsHonoured", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 3})
		h := e.hold(e.typeID(0), e.monday(10, 0), e.specialist(2), newClient())
		if h.SpecialistID != e.specialist(2) {
			t.Fatalf("went to %s, want the requested specialist", h.SpecialistID)
		}
		_, err := e.co.Hold(t.Context(), checkout.HoldRequest{
			AppointmentTypeID: e.typeID(0), Start: e.monday(10, 0), SpecialistID: e.specialist(2), ClientID: newClient(),
		})
		wantCode(t, err, "SLOT_HELD", apperr.Locked)
	})

	t.Run("AHoldOfAnotherTypeBlocksTheSpecialist", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 2, Types: []db.AppointmentTypeInsertParams{
			{Name: "Short", DurationMin: 30, SlotStepMin: 30},
			{Name: "Long", DurationMin: 60, SlotStepMin: 30},
		}})
		long := e.hold(e.typeID(1), e.monday(10, 0), uuid.Nil, newClient()) // 10:00-11:00 on the top specialist
		if long.SpecialistID != e.specialist(0) {
			t.Fatalf("long hold went to %s", long.SpecialistID)
		}
		short := e.hold(e.typeID(0), e.monday(10, 30), uuid.Nil, newClient())
		if short.SpecialistID != e.specialist(1) {
			t.Fatalf("short hold at 10:30 went to %s, want specialist 1 (0 is held through the long type)", short.SpecialistID)
		}
	})

	t.Run("ABookingBlocksTheSpecialist", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 2})
		start := e.monday(14, 0)
		if _, err := e.bookings.Book(t.Context(), booking.BookRequest{
			AppointmentTypeID: e.typeID(0), SpecialistID: e.specialist(0), Start: start, Patient: patient, Actor: "staff:test",
		}); err != nil {
			t.Fatal(err)
		}
		if h := e.hold(e.typeID(0), start, uuid.Nil, newClient()); h.SpecialistID != e.specialist(1) {
			t.Fatalf("went to %s, want specialist 1", h.SpecialistID)
		}
	})
}

// sweepers runs n stores' SweepClinic for the clinic every 100 ms until the
// test ends, as n server instances would. (The global Sweep would also
// sweep other test binaries' clinics in the shared Redis and steal the
// expiries their tests count.)
func (e *env) sweepers(n int, ttl time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		s := holds.NewStore(testkit.Redis(e.t), ttl, quietLogger)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if _, err := s.SweepClinic(ctx, e.clinic.ID); err != nil && ctx.Err() == nil {
						e.t.Errorf("sweep: %v", err)
					}
				}
			}
		}()
	}
	e.t.Cleanup(func() { cancel(); wg.Wait() })
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	const ttl = time.Second

	t.Run("KeepsAHoldAlivePastItsTTL", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, ttl, testkit.ClinicOptions{Specialists: 1})
		ev := subscribe(t, e.rdb, holds.Channel(e.typeID(0)))
		e.sweepers(2, ttl)
		start := e.monday(10, 0)
		client := newClient()
		h := e.hold(e.typeID(0), start, uuid.Nil, client)

		began := time.Now()
		last := h.ExpiresAt
		for time.Since(began) < 2*ttl {
			time.Sleep(350 * time.Millisecond)
			hb, err := e.co.Heartbeat(t.Context(), h.HoldID, client)
			if err != nil {
				t.Fatalf("heartbeat after %s: %v", time.Since(began).Round(time.Millisecond), err)
			}
			if hb.HoldID != h.HoldID || !hb.ExpiresAt.After(last) {
				t.Fatalf("heartbeat gave %+v, want the hold with a later expiry than %s", hb, last)
			}
			last = hb.ExpiresAt
			_, err = e.tryHold(e.typeID(0), start, newClient())
			wantCode(t, err, "SLOT_HELD", apperr.Locked)
		}
		if held, ok, err := e.holds.HeldBy(t.Context(), e.clinic.ID, e.typeID(0), e.specialist(0), start); err != nil || !ok || held.HoldID != h.HoldID {
			t.Fatalf("after %s of heartbeats the slot is held by %+v (%v, %v), want %s", time.Since(began), held, ok, err, h.HoldID)
		}
		if n := releases(ev.until(300*time.Millisecond, func([]holds.Event) bool { return false }), h.HoldID, holds.ReasonExpired); n != 0 {
			t.Fatalf("%d expiry events for a heartbeated hold", n)
		}
		e.mustConfirm(h)
	})

	t.Run("WithoutHeartbeatTheHoldExpiresAndIsAnnouncedOnce", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, ttl, testkit.ClinicOptions{Specialists: 1})
		ev := subscribe(t, e.rdb, holds.Channel(e.typeID(0)))
		e.sweepers(2, ttl)
		start := e.monday(10, 0)
		client := newClient()
		h := e.hold(e.typeID(0), start, uuid.Nil, client)

		seen := ev.until(5*ttl, func(evs []holds.Event) bool { return releases(evs, h.HoldID, holds.ReasonExpired) > 0 })
		if releases(seen, h.HoldID, holds.ReasonExpired) != 1 {
			t.Fatalf("no expiry event within %s; events %+v", 5*ttl, seen)
		}
		// Both sweepers get several more turns: no second announcement.
		seen = append(seen, ev.until(800*time.Millisecond, func([]holds.Event) bool { return false })...)
		if n := releases(seen, h.HoldID, holds.ReasonExpired); n != 1 {
			t.Fatalf("%d expiry events with two sweepers, want exactly 1", n)
		}
		for _, x := range seen {
			if x.Type == holds.EventRelease && x.HoldID == h.HoldID && (x.Start != h.Start || x.SpecialistID != h.SpecialistID) {
				t.Fatalf("expiry event %+v does not describe the hold %+v", x, h)
			}
		}

		_, err := e.co.Heartbeat(t.Context(), h.HoldID, client)
		wantCode(t, err, "HOLD_GONE", apperr.Gone)
		_, err = e.confirm(h, e.typeID(0), client)
		wantCode(t, err, "HOLD_EXPIRED", apperr.Gone)
		if a := e.active(); len(a) != 0 {
			t.Fatalf("live holds after expiry: %+v", a)
		}
		e.hold(e.typeID(0), start, uuid.Nil, newClient()) // the slot is free for someone else
	})

	t.Run("AnotherClientsHeartbeatIsGoneAndChangesNothing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		h := e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, newClient())
		_, err := e.co.Heartbeat(t.Context(), h.HoldID, newClient())
		wantCode(t, err, "HOLD_GONE", apperr.Gone)
		if a := e.active(); len(a) != 1 || !a[0].ExpiresAt.Equal(h.ExpiresAt) {
			t.Fatalf("holds after a stranger's heartbeat: %+v", a)
		}
	})

	t.Run("MalformedIdsAreInvalid", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		for _, tc := range []struct{ holdID, client, field string }{
			{"", newClient(), "holdId"},
			{"not-a-hold", newClient(), "holdId"},
			{"h" + fmt.Sprintf("%052d", 0), newClient(), "holdId"}, // nil clinic
			{"h" + uuidHex(e.clinic.ID) + "00112233445566778899", "", "clientId"},
			{"h" + uuidHex(e.clinic.ID) + "00112233445566778899", "has space", "clientId"},
		} {
			_, err := e.co.Heartbeat(t.Context(), tc.holdID, tc.client)
			if ae := wantCode(t, err, "INVALID_ARGUMENT", apperr.Invalid); ae.Field() != tc.field {
				t.Fatalf("heartbeat(%q, %q) names %q, want %q", tc.holdID, tc.client, ae.Field(), tc.field)
			}
		}
	})
}

func uuidHex(id uuid.UUID) string { return fmt.Sprintf("%x", id[:]) }

func TestCooldown(t *testing.T) {
	t.Parallel()

	remaining := func(e *env, client string) time.Duration {
		e.t.Helper()
		d, err := e.holds.CooldownRemaining(context.Background(), e.clinic.ID, client, e.typeID(0))
		if err != nil {
			e.t.Fatal(err)
		}
		return d
	}

	t.Run("SetAfterBooking", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		if d := remaining(e, client); d < 1439*time.Minute || d > 1440*time.Minute {
			t.Fatalf("cooldown %s, want the type's 1440 min", d)
		}
		_, err := e.tryHold(e.typeID(0), e.monday(11, 0), client)
		ae := wantCode(t, err, "COOLDOWN", apperr.TooMany)
		if ae.RetryAfter < 1439*time.Minute || ae.Details["retryAfterSeconds"] == nil {
			t.Fatalf("COOLDOWN %+v must say when to retry", ae)
		}
		e.hold(e.typeID(0), e.monday(11, 0), uuid.Nil, newClient()) // others are not affected
	})

	t.Run("ClearedByCancel", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		c := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		if _, err := e.co.CancelAppointment(t.Context(), c.Booking.ID, c.ManageToken, "changed my mind"); err != nil {
			t.Fatal(err)
		}
		if d := remaining(e, client); d != 0 {
			t.Fatalf("cooldown %s after cancel, want none", d)
		}
		e.hold(e.typeID(0), e.monday(11, 0), uuid.Nil, client)
	})

	t.Run("ClearedByCancelAfterReschedule", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		c := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		moved, err := e.co.RescheduleAppointment(t.Context(), c.Booking.ID, c.ManageToken, c.Booking.Version, e.monday(12, 0))
		if err != nil {
			t.Fatal(err)
		}
		if d := remaining(e, client); d <= 0 {
			t.Fatal("a reschedule must keep the cooldown")
		}
		if _, err := e.co.CancelAppointment(t.Context(), moved.ID, c.ManageToken, ""); err != nil {
			t.Fatal(err)
		}
		if d := remaining(e, client); d != 0 {
			t.Fatalf("cooldown %s left after cancelling the rescheduled booking, want none", d)
		}
	})

	t.Run("NotSetWhenTheSlotWasTakenMeanwhile", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		client := newClient()
		start := e.monday(10, 0)
		h := e.hold(e.typeID(0), start, uuid.Nil, client)
		if _, err := e.bookings.Book(t.Context(), booking.BookRequest{
			AppointmentTypeID: e.typeID(0), SpecialistID: e.specialist(0), Start: start, Patient: patient, Actor: "staff:test",
		}); err != nil {
			t.Fatal(err)
		}
		_, err := e.confirm(h, e.typeID(0), client)
		wantCode(t, err, apperr.CodeSlotTaken, apperr.Conflict)
		if d := remaining(e, client); d != 0 {
			t.Fatalf("cooldown %s after a failed booking", d)
		}
		if n := e.confirmedAt(e.specialist(0), start); n != 1 {
			t.Fatalf("%d confirmed bookings, want the staff one only", n)
		}
	})

	t.Run("NotSetWhenThePatientIsInvalid", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		h := e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client)
		_, err := e.co.Confirm(t.Context(), checkout.ConfirmRequest{
			AppointmentTypeID: e.typeID(0), HoldID: h.HoldID, ClientID: client,
			Patient: booking.Patient{Name: "Ada", Email: "not-an-address"},
		})
		if ae := wantCode(t, err, "INVALID_ARGUMENT", apperr.Invalid); ae.Field() != "patient.email" {
			t.Fatalf("field %q", ae.Field())
		}
		if d := remaining(e, client); d != 0 {
			t.Fatalf("cooldown %s after a refused booking", d)
		}
		e.mustConfirm(h) // the hold is still good
	})

	t.Run("TypeWithoutCooldownSetsNone", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{{
			Name: "Walk-in", DurationMin: 30, SlotStepMin: 30, CooldownMin: 0,
		}}})
		client := newClient()
		e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		e.hold(e.typeID(0), e.monday(11, 0), uuid.Nil, client)
	})
}

func TestFailedConfirm(t *testing.T) {
	t.Parallel()

	t.Run("ASlotTakenMeanwhileFreesTheClientToPickAnother", func(t *testing.T) {
		t.Parallel()
		// Quota 1: the hold on the lost slot must not keep the patient from
		// holding the next one (the answer tells them to pick another time).
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		client := newClient()
		start := e.monday(10, 0)
		h := e.hold(e.typeID(0), start, uuid.Nil, client)
		if _, err := e.bookings.Book(t.Context(), booking.BookRequest{
			AppointmentTypeID: e.typeID(0), SpecialistID: e.specialist(0), Start: start, Patient: patient, Actor: "staff:test",
		}); err != nil {
			t.Fatal(err)
		}
		_, err := e.confirm(h, e.typeID(0), client)
		wantCode(t, err, apperr.CodeSlotTaken, apperr.Conflict)

		next, err := e.tryHold(e.typeID(0), e.monday(11, 0), client)
		if err != nil {
			t.Fatalf("holding another slot after SLOT_TAKEN: %v (live holds %+v)", err, e.active())
		}
		e.mustConfirm(next)
	})

	t.Run("ARefusedPatientKeepsTheHoldAsItWas", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		h := e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client)
		_, err := e.co.Confirm(t.Context(), checkout.ConfirmRequest{
			AppointmentTypeID: e.typeID(0), HoldID: h.HoldID, ClientID: client, Patient: booking.Patient{Email: "a@example.com"},
		})
		if ae := wantCode(t, err, "INVALID_ARGUMENT", apperr.Invalid); ae.Field() != "patient.name" {
			t.Fatalf("field %q", ae.Field())
		}
		if a := e.active(); len(a) != 1 || a[0].HoldID != h.HoldID || !a[0].ExpiresAt.Equal(h.ExpiresAt) {
			t.Fatalf("holds after a refused patient: %+v, want %+v untouched", a, h)
		}
	})
}

func TestManageAppointment(t *testing.T) {
	t.Parallel()

	t.Run("RescheduleKeepsTheSpecialistWhenFree", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 2})
		// Take the top specialist with someone else's hold first, so the
		// booking lands on specialist 1.
		e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, newClient())
		c := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, newClient()))
		if c.Booking.SpecialistID != e.specialist(1) {
			t.Fatalf("booked %s", c.Booking.SpecialistID)
		}
		moved, err := e.co.RescheduleAppointment(t.Context(), c.Booking.ID, c.ManageToken, c.Booking.Version, e.monday(15, 0))
		if err != nil {
			t.Fatal(err)
		}
		if moved.SpecialistID != e.specialist(1) || !moved.Start.Equal(e.monday(15, 0)) || moved.RescheduledFrom != c.Booking.ID {
			t.Fatalf("moved %+v", moved)
		}
	})

	t.Run("MovingWithinItsOwnTimeIsAllowed", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{{
			Name: "Fine grid", DurationMin: 30, SlotStepMin: 15,
		}}})
		c := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, newClient()))
		moved, err := e.co.RescheduleAppointment(t.Context(), c.Booking.ID, c.ManageToken, c.Booking.Version, e.monday(10, 15))
		if err != nil {
			t.Fatal(err)
		}
		if !moved.Start.Equal(e.monday(10, 15)) {
			t.Fatalf("moved to %s", moved.Start)
		}
	})

	t.Run("ATokenOpensOnlyItsBooking", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		a := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, newClient()))
		b := e.mustConfirm(e.hold(e.typeID(0), e.monday(11, 0), uuid.Nil, newClient()))
		_, err := e.co.Appointment(t.Context(), a.Booking.ID, b.ManageToken)
		wantCode(t, err, "NOT_FOUND", apperr.NotFound)
		_, err = e.co.CancelAppointment(t.Context(), a.Booking.ID, b.ManageToken, "")
		wantCode(t, err, "NOT_FOUND", apperr.NotFound)
		_, err = e.co.Appointment(t.Context(), a.Booking.ID, "")
		wantCode(t, err, "TOKEN_REQUIRED", apperr.Unauthorized)
		if got, err := e.co.Appointment(t.Context(), a.Booking.ID, a.ManageToken); err != nil || got.Status != booking.StatusConfirmed {
			t.Fatalf("own token: %+v %v", got, err)
		}
	})

	t.Run("OnBookingChangePublishesConfirmAndCancel", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		ev := subscribe(t, e.rdb, holds.Channel(e.typeID(0)))
		h := e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, newClient())
		c := e.mustConfirm(h)
		if _, err := e.co.CancelAppointment(t.Context(), c.Booking.ID, c.ManageToken, ""); err != nil {
			t.Fatal(err)
		}
		seen := ev.until(3*time.Second, func(evs []holds.Event) bool {
			return len(evs) > 0 && evs[len(evs)-1].Type == holds.EventCancel
		})
		var types []string
		for _, x := range seen {
			types = append(types, x.Type)
		}
		if fmt.Sprint(types) != fmt.Sprint([]string{holds.EventHold, holds.EventConfirm, holds.EventCancel}) {
			t.Fatalf("events %v, want hold, confirm, cancel", types)
		}
		if seen[1].HoldID != h.HoldID || !seen[1].Start.Equal(h.Start) {
			t.Fatalf("confirm event %+v", seen[1])
		}
	})
}
