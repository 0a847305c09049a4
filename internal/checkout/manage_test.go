package checkout_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

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
