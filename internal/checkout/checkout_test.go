package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

func TestCooldown(t *testing.T) {
	t.Parallel()

	t.Run("SetAfterBooking", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		if d := e.cooldown(client); d < 1439*time.Minute || d > 1440*time.Minute {
			t.Fatalf("cooldown %s, want the type's 1440 min", d)
		}
		_, err := e.tryHold(e.typeID(0), e.monday(11, 0), client)
		ae := wantCode(t, err, "COOLDOWN", apperr.TooMany)
		if ae.RetryAfter < 1439*time.Minute || ae.Details["retryAfterSeconds"] == nil {
			t.Fatalf("COOLDOWN %+v must say when to retry", ae)
		}
		e.hold(e.typeID(0), e.monday(11, 0), uuid.Nil, newClient()) // others are not affected
	})

	// The patient's own cancel keeps the cooldown for an hour at most, so
	// booking and cancelling in a loop renews nothing; staff's lifts it.
	t.Run("KeptForAnHourByThePatientsCancel", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		c := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		if _, err := e.co.CancelAppointment(t.Context(), c.Booking.ID, c.ManageToken, "changed my mind"); err != nil {
			t.Fatal(err)
		}
		if d := e.cooldown(client); d < 59*time.Minute || d > booking.CancelKeepsCooldown {
			t.Fatalf("cooldown %s after the patient's cancel, want the hour it keeps", d)
		}
		_, err := e.tryHold(e.typeID(0), e.monday(11, 0), client)
		wantCode(t, err, "COOLDOWN", apperr.TooMany)
	})

	t.Run("ClearedByStaffCancel", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		c := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		if _, _, err := e.bookings.Cancel(t.Context(), booking.CancelRequest{BookingID: c.Booking.ID, Actor: "staff:" + uuid.NewString()}); err != nil {
			t.Fatal(err)
		}
		if d := e.cooldown(client); d != 0 {
			t.Fatalf("cooldown %s after a staff cancel, want none", d)
		}
		e.hold(e.typeID(0), e.monday(11, 0), uuid.Nil, client)
	})

	t.Run("KeptAfterCancelOfARescheduledBooking", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{})
		client := newClient()
		c := e.mustConfirm(e.hold(e.typeID(0), e.monday(10, 0), uuid.Nil, client))
		moved, err := e.co.RescheduleAppointment(t.Context(), c.Booking.ID, c.ManageToken, c.Booking.Version, e.monday(12, 0))
		if err != nil {
			t.Fatal(err)
		}
		if d := e.cooldown(client); d <= 0 {
			t.Fatal("a reschedule must keep the cooldown")
		}
		if _, err := e.co.CancelAppointment(t.Context(), moved.ID, c.ManageToken, ""); err != nil {
			t.Fatal(err)
		}
		if d := e.cooldown(client); d < 59*time.Minute || d > booking.CancelKeepsCooldown {
			t.Fatalf("cooldown %s left after cancelling the rescheduled booking, want the hour a cancel keeps", d)
		}
	})

	t.Run("NotSetWhenTheSlotWasTakenMeanwhile", testNoCooldownAfterALostSlot)

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
		if d := e.cooldown(client); d != 0 {
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

// A confirm that loses its slot to a staff booking sets no cooldown.
func testNoCooldownAfterALostSlot(t *testing.T) {
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
	if d := e.cooldown(client); d != 0 {
		t.Fatalf("cooldown %s after a failed booking", d)
	}
	if n := e.confirmedAt(e.specialist(0), start); n != 1 {
		t.Fatalf("%d confirmed bookings, want the staff one only", n)
	}
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

// cooldown is what is left of the client's cooldown on the first type.
func (e *env) cooldown(client string) time.Duration {
	e.t.Helper()
	d, err := e.holds.CooldownRemaining(context.Background(), e.clinic.ID, client, e.typeID(0))
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}
