package checkout_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

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
