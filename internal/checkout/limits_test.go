package checkout_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// The cooldown binds the patient (e-mail, phone), not the client id an API
// caller chooses.
func TestPatientCooldown(t *testing.T) {
	t.Parallel()

	confirmAs := func(e *env, start time.Time, p booking.Patient) error {
		client := newClient()
		h := e.hold(e.typeID(0), start, e.specialist(0), client)
		_, err := e.co.Confirm(e.t.Context(), checkout.ConfirmRequest{
			AppointmentTypeID: e.typeID(0), HoldID: h.HoldID, ClientID: client, Patient: p,
		})
		return err
	}

	t.Run("OneEmailTwoClientsAtOnceBooksOnce", testOneEmailTwoClientsAtOnce)

	t.Run("TheEmailCaseAsideAndThePhoneDigitsAreThePatient", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		if err := confirmAs(e, e.monday(9, 0), booking.Patient{Name: "Ada", Email: "ada@example.com", Phone: "+49 30 1234567"}); err != nil {
			t.Fatal(err)
		}
		err := confirmAs(e, e.monday(10, 0), booking.Patient{Name: "Ada", Email: "  ADA@Example.COM "})
		wantCode(t, err, apperr.CodeCooldown, apperr.TooMany)
		err = confirmAs(e, e.monday(11, 0), booking.Patient{Name: "Ada", Email: "other@example.com", Phone: "+49 (30) 123-4567"})
		wantCode(t, err, apperr.CodeCooldown, apperr.TooMany)
		if err := confirmAs(e, e.monday(12, 0), booking.Patient{Name: "Bob", Email: "bob@example.com", Phone: "+49 30 7654321"}); err != nil {
			t.Fatalf("another patient: %v", err)
		}
		if n := e.confirmedAt(e.specialist(0), e.monday(10, 0)) + e.confirmedAt(e.specialist(0), e.monday(11, 0)); n != 0 {
			t.Fatalf("%d bookings of refused patients", n)
		}
	})

	t.Run("StaffBookingsAreExemptAndACancellationLiftsIt", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
		p := booking.Patient{Name: "Ada", Email: "ada@example.com"}
		if err := confirmAs(e, e.monday(9, 0), p); err != nil {
			t.Fatal(err)
		}
		staff, err := e.bookings.Book(t.Context(), booking.BookRequest{
			AppointmentTypeID: e.typeID(0), SpecialistID: e.specialist(0), Start: e.monday(10, 0),
			Patient: p, Actor: "staff:test", ClinicID: e.clinic.ID,
		})
		if err != nil {
			t.Fatalf("staff booking of the same patient: %v", err)
		}
		if _, _, err := e.bookings.Cancel(t.Context(), booking.CancelRequest{BookingID: staff.Booking.ID, Actor: "staff:test"}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, confirmAs(e, e.monday(11, 0), p), apperr.CodeCooldown, apperr.TooMany)
	})

	t.Run("NoCooldownNoLimit", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
			{Name: "Walk-in", DurationMin: 30, SlotStepMin: 30, CooldownMin: 0},
		}})
		p := booking.Patient{Name: "Ada", Email: "ada@example.com"}
		for i := range 3 {
			if err := confirmAs(e, e.monday(9+i, 0), p); err != nil {
				t.Fatalf("booking %d: %v", i, err)
			}
		}
	})
}

// Two clients confirm for one e-mail address at once, four times over:
// each time one books and the other is refused with COOLDOWN.
func testOneEmailTwoClientsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	for round := range 4 {
		p := booking.Patient{Name: "Ada", Email: fmt.Sprintf("ada-%d@example.com", round)}
		clients := []string{newClient(), newClient()}
		starts := []time.Time{e.monday(9+2*round, 0), e.monday(10+2*round, 0)}
		hs := make([]checkoutHold, 2)
		for i := range 2 {
			hs[i] = checkoutHold{client: clients[i], id: e.hold(e.typeID(0), starts[i], e.specialist(0), clients[i]).HoldID}
		}
		errs := make([]error, 2)
		testkit.Together(2, func(i int) {
			_, errs[i] = e.co.Confirm(context.Background(), checkout.ConfirmRequest{
				AppointmentTypeID: e.typeID(0), HoldID: hs[i].id, ClientID: hs[i].client, Patient: p,
			})
		})
		booked, cooled := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				booked++
			case apperr.CodeOf(err) == apperr.CodeCooldown:
				ae := wantCode(t, err, apperr.CodeCooldown, apperr.TooMany)
				if ae.RetryAfter < 23*time.Hour {
					t.Fatalf("round %d: retry after %s, want about a day", round, ae.RetryAfter)
				}
				cooled++
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if booked != 1 || cooled != 1 {
			t.Fatalf("round %d: %d booked and %d COOLDOWN, want 1 and 1", round, booked, cooled)
		}
	}
	// The refused patient's hold went back to everyone.
	if a := e.active(); len(a) != 0 {
		t.Fatalf("holds left: %+v", a)
	}
}

type checkoutHold struct{ client, id string }

// Two holds of different types that overlap for one specialist: the claim
// lets exactly one through, however close together they come.
func TestOverlappingHoldsOfTwoTypesAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, CooldownMin: 1440},
		{Name: "Check-up", DurationMin: 60, SlotStepMin: 30, CooldownMin: 1440},
	}})
	for round := range 8 {
		starts := []time.Time{e.monday(9+round, 30), e.monday(9+round, 0)} // 9:30-10:00 inside 9:00-10:00
		clients := []string{newClient(), newClient()}
		errs := make([]error, 2)
		testkit.Together(2, func(i int) {
			_, errs[i] = e.co.Hold(context.Background(), checkout.HoldRequest{
				AppointmentTypeID: e.typeID(i), Start: starts[i], SpecialistID: e.specialist(0), ClientID: clients[i],
			})
		})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case apperr.CodeOf(err) != "SLOT_HELD":
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d holds, want 1 (%v)", round, won, errs)
		}
	}
}

// Hours or an override that close a held time make the confirm fail with
// SLOT_UNAVAILABLE, and nothing is booked.
func TestConfirmAfterAnOverrideClosedTheTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	start := e.monday(10, 0)
	client := newClient()
	h := e.hold(e.typeID(0), start, e.specialist(0), client)
	day := start.In(e.loc)
	if err := db.New(e.pool).OverrideInsertClosed(t.Context(), db.OverrideInsertClosedParams{
		ClinicID: e.clinic.ID, SpecialistID: e.specialist(0),
		Day: time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC), Note: "closed",
	}); err != nil {
		t.Fatal(err)
	}
	e.slots.Invalidate(t.Context(), e.clinic.ID) // as a staff change does
	_, err := e.confirm(h, e.typeID(0), client)
	wantCode(t, err, apperr.CodeSlotUnavailable, apperr.Conflict)
	if n := e.confirmedAt(e.specialist(0), start); n != 0 {
		t.Fatalf("%d bookings at a closed time", n)
	}
	if a := e.active(); len(a) != 0 {
		t.Fatalf("the hold on a closed time stays: %+v", a)
	}
}

// A bitmap bit that a failed clear left set after a cancellation does not
// make the freed slot unbookable: the bitmap is a hint.
func TestAStaleBitmapBitDoesNotRefuseAFreedSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	start := e.monday(11, 0)
	end := start.Add(30 * time.Minute)
	staff, err := e.bookings.Book(t.Context(), booking.BookRequest{
		AppointmentTypeID: e.typeID(0), SpecialistID: e.specialist(0), Start: start,
		Patient: patientOf("staff-booked"), Actor: "staff:test", ClinicID: e.clinic.ID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.bookings.Cancel(t.Context(), booking.CancelRequest{BookingID: staff.Booking.ID, Actor: "staff:test"}); err != nil {
		t.Fatal(err)
	}
	// The clear "failed": the bit is set again by hand (on the bitmap as
	// rebuilt from the database: a cleared one is gone, and a mark only
	// sets bits of a bitmap that exists).
	e.slots.Bitmap.Taken(t.Context(), e.loc, e.clinic.ID, e.specialist(0), start, end)
	e.slots.Bitmap.Mark(t.Context(), e.loc, e.clinic.ID, e.specialist(0), start, end)
	if taken, known := e.slots.Bitmap.Taken(t.Context(), e.loc, e.clinic.ID, e.specialist(0), start, end); !known || !taken {
		t.Fatalf("the bitmap says taken=%v known=%v, want a stale bit", taken, known)
	}
	client := newClient()
	h := e.hold(e.typeID(0), start, e.specialist(0), client)
	if _, err := e.confirm(h, e.typeID(0), client); err != nil {
		t.Fatalf("confirm of a freed slot with a stale bit: %v", err)
	}
	if n := e.confirmedAt(e.specialist(0), start); n != 1 {
		t.Fatalf("%d bookings, want 1", n)
	}
}
