package slots_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/testkit"
)

// A type that needs the clinic's one ultrasound room: once the room is
// booked at a time, by any specialist and for any type that needs it,
// the time leaves the type's list for every specialist, whether the list
// was cached (and carried over a booking) or not; a consultation, which
// needs no room, keeps its other specialists at that time.
func TestRoomBookedLeavesTheListForEverySpecialist(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	rdb := testkit.Redis(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 3, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30},
		{Name: "Ultrasound", DurationMin: 30},
		{Name: "Long ultrasound", DurationMin: 60, SlotStepMin: 30},
	}})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := db.New(pool)
	if _, err := q.ResourceInsert(ctx, db.ResourceInsertParams{ClinicID: c.ID, Name: "Ultrasound room", Kind: "ultrasound", AlwaysOpen: true, Active: true}); err != nil {
		t.Fatal(err)
	}
	for _, typ := range c.Types[1:] {
		if err := q.TypeNeedSet(ctx, db.TypeNeedSetParams{ClinicID: c.ID, AppointmentTypeID: typ.ID,
			ResourceKind: pgtype.Text{String: "ultrasound", Valid: true}}); err != nil {
			t.Fatal(err)
		}
	}
	svc := slots.New(pool, rdb, slots.Options{Logger: quiet})
	bookings := booking.NewService(pool)
	bookings.Observe(svc.OnBookingChange)
	m := testkit.NextWeekday(time.Now(), loc, time.Monday, 0, 0)
	b := bundle{pool: pool, rdb: rdb, svc: svc, bookings: bookings, clinic: c, loc: loc}
	b.monday.Year, b.monday.Month, b.monday.Day = m.Year(), m.Month(), m.Day()
	day := func(typ int) slots.Request {
		return slots.Request{AppointmentTypeID: c.Types[typ].ID, From: b.monday, To: b.monday}
	}
	ten := b.at(0, 10, 0)
	for typ := range 3 {
		if sp := specialistsAt(free(t, svc, day(typ)), ten); len(sp) != 3 {
			t.Fatalf("type %d at 10:00 before any booking: %d specialists, want 3", typ, len(sp))
		}
	}

	// The long ultrasound at 09:30-10:30 by the first specialist takes the room.
	if _, err := bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: c.Types[2].ID, SpecialistID: c.Specialists[0].ID,
		Start: b.at(0, 9, 30), Patient: booking.Patient{Name: "A", Email: "a@example.org"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []bool{false, true} {
		other := svc
		if fresh {
			other = slots.New(pool, rdb, slots.Options{Logger: quiet}) // reads Redis, or PostgreSQL
		}
		if sp := specialistsAt(free(t, other, day(1)), ten); sp != nil {
			t.Errorf("ultrasound at 10:00 with the room booked (another instance: %v): offered with %v", fresh, sp)
		}
		if sp := specialistsAt(free(t, other, day(1)), b.at(0, 10, 30)); len(sp) != 3 {
			t.Errorf("ultrasound at 10:30, the room free again (another instance: %v): %d specialists, want 3", fresh, len(sp))
		}
		if sp := specialistsAt(free(t, other, day(0)), ten); len(sp) != 2 {
			t.Errorf("consultation at 10:00 (another instance: %v): %d specialists, want the 2 not booked", fresh, len(sp))
		}
	}
	res, err := svc.Free(ctx, slots.Request{AppointmentTypeID: c.Types[1].ID, From: b.monday, To: b.monday, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Slots {
		if len(s.ResourceIDs) != 1 {
			t.Fatalf("slot %v names rooms %v, want the one room", s.Start, s.ResourceIDs)
		}
	}
}

// A type that gains a need for a room after this process read it as
// needing none: a booking of it takes the room, so a cached list of
// another type that needs the room is not carried over the booking (which
// would keep the time the room no longer has) but recomputed.
func TestRoomNeedGainedIsNotCarriedOver(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	rdb := testkit.Redis(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 3, Types: []db.AppointmentTypeInsertParams{
		{Name: "Ultrasound", DurationMin: 30},
		{Name: "Long ultrasound", DurationMin: 60, SlotStepMin: 30},
	}})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := db.New(pool)
	if _, err := q.ResourceInsert(ctx, db.ResourceInsertParams{ClinicID: c.ID, Name: "Ultrasound room", Kind: "ultrasound", AlwaysOpen: true, Active: true}); err != nil {
		t.Fatal(err)
	}
	need := func(typ int) {
		t.Helper()
		if err := q.TypeNeedSet(ctx, db.TypeNeedSetParams{ClinicID: c.ID, AppointmentTypeID: c.Types[typ].ID,
			ResourceKind: pgtype.Text{String: "ultrasound", Valid: true}}); err != nil {
			t.Fatal(err)
		}
	}
	need(1)
	svc := slots.New(pool, rdb, slots.Options{Logger: quiet})
	bookings := booking.NewService(pool)
	bookings.Observe(svc.OnBookingChange)
	m := testkit.NextWeekday(time.Now(), loc, time.Monday, 0, 0)
	b := bundle{pool: pool, rdb: rdb, svc: svc, bookings: bookings, clinic: c, loc: loc}
	b.monday.Year, b.monday.Month, b.monday.Day = m.Year(), m.Month(), m.Day()
	day := func(typ int) slots.Request {
		return slots.Request{AppointmentTypeID: c.Types[typ].ID, From: b.monday, To: b.monday}
	}
	ten := b.at(0, 10, 0)
	// This process reads the ultrasound as needing no room.
	if sp := specialistsAt(free(t, svc, day(0)), ten); len(sp) != 3 {
		t.Fatalf("ultrasound at 10:00: %d specialists, want 3", len(sp))
	}
	// Then it gains the need, and the long ultrasound's list is cached
	// under the new set-up.
	need(0)
	svc.Invalidate(ctx, c.ID)
	if sp := specialistsAt(free(t, svc, day(1)), ten); len(sp) != 3 {
		t.Fatalf("long ultrasound at 10:00 before any booking: %d specialists, want 3", len(sp))
	}
	if _, err := bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[0].ID,
		Start: ten, Patient: booking.Patient{Name: "A", Email: "a@example.org"},
	}); err != nil {
		t.Fatal(err)
	}
	if sp := specialistsAt(free(t, svc, day(1)), ten); sp != nil {
		t.Errorf("long ultrasound at 10:00 with the room booked: offered with %v", sp)
	}
}
