package checkout_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/testkit"
)

// A patient's move from one day to another: each day's free slots, read
// through the slot cache after the move, are right: the old slot is free
// again on the old day, the new one taken on the new day. Both days'
// lists are cached before the move, and each is read on its own (a list
// of both days would be retired by either day's change).
//
// Mutation: slots.Service.OnBookingChange skips the old booking's
// invalidation on a reschedule (the invalidateBooking of ch.Previous):
// the old day's cached list still leaves the old slot out.
func TestAMoveToAnotherDayIsSeenOnBothDaysThroughTheCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, testkit.ClinicOptions{Specialists: 1})
	from, to := e.monday(10, 0), e.tuesday(11, 0)
	c := e.mustConfirm(e.hold(e.typeID(0), from, uuid.Nil, newClient()))

	fromDay, toDay := availability.DateOf(from, e.loc), availability.DateOf(to, e.loc)
	if fromDay == toDay {
		t.Fatalf("%s and %s are one day", from, to)
	}
	if e.offered(fromDay, from) || !e.offered(toDay, to) {
		t.Fatalf("before the move: %s offered=%v (want false), %s offered=%v (want true)",
			from, e.offered(fromDay, from), to, e.offered(toDay, to))
	}

	moved, err := e.co.RescheduleAppointment(t.Context(), c.Booking.ID, c.ManageToken, c.Booking.Version, to)
	if err != nil {
		t.Fatal(err)
	}
	if !moved.Start.Equal(to) || moved.SpecialistID != e.specialist(0) {
		t.Fatalf("moved %+v", moved)
	}

	if !e.offered(fromDay, from) {
		t.Errorf("after the move the old day's list (through the cache) still leaves the freed %s out", from)
	}
	if e.offered(toDay, to) {
		t.Errorf("after the move the new day's list (through the cache) still offers the taken %s", to)
	}
	for _, d := range []availability.Date{fromDay, toDay} {
		if got, want := e.daySlots(d, false), e.daySlots(d, true); !reflect.DeepEqual(got, want) {
			t.Errorf("%s through the cache differs from a computation:\n got %v\nwant %v", d, got, want)
		}
	}
}

// daySlots are the free slots of the first type on day d, through the
// slot cache or, with exact, computed from PostgreSQL.
func (e *env) daySlots(d availability.Date, exact bool) []availability.Slot {
	e.t.Helper()
	res, err := e.slots.Free(e.t.Context(), slots.Request{AppointmentTypeID: e.typeID(0), From: d, To: d, NoCache: exact})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Slots
}

// offered reports whether the cached list of day d offers start with the
// first specialist.
func (e *env) offered(d availability.Date, start time.Time) bool {
	e.t.Helper()
	for _, sl := range e.daySlots(d, false) {
		if sl.Start.Equal(start) {
			return slices.Contains(sl.SpecialistIDs, e.specialist(0))
		}
	}
	return false
}
