package waitlist_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/holds"
)

// A freed time of a type that needs a room is offered with its room: the
// offer's hold holds the room, so no other specialist's patient can hold
// the room's time meanwhile, and the accepted offer books that room.
//
// Guards the rooms of the opening's claim: without them the offer's hold
// holds the specialist alone, and another specialist's patient holds the
// room's time.
func TestAnOfferHoldsTheRoomOfTheFreedTime(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	typ := r.clinic.Types[0]
	var room uuid.UUID
	if err := r.pool.QueryRow(ctx, `INSERT INTO resources (clinic_id, name, kind) VALUES ($1, 'Sono 1', 'ultrasound') RETURNING id`,
		r.clinic.ID).Scan(&room); err != nil {
		t.Fatal(err)
	}
	if _, err := r.pool.Exec(ctx, `INSERT INTO appointment_type_resources (clinic_id, appointment_type_id, resource_kind) VALUES ($1, $2, 'ultrasound')`,
		r.clinic.ID, typ.ID); err != nil {
		t.Fatal(err)
	}
	start := r.at(4, 11, 0)
	b := r.book(t, start, "first@example.org")
	if b.Booking.ResourceID != room {
		t.Fatalf("the first booking holds room %s, want %s", b.Booking.ResourceID, room)
	}
	waiting := r.join(t, "waiting@example.org", start)
	r.cancel(t, b.Booking)
	opening, _ := r.opening(t, start.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	h, ok, err := r.holds.HeldBy(ctx, r.clinic.ID, typ.ID, r.clinic.Specialists[0].ID, start)
	if err != nil || !ok || h.ResourceID != room {
		t.Fatalf("the offer's hold = %+v, %v, %v; want it holding room %s", h, ok, err, room)
	}
	end := start.Add(time.Duration(typ.DurationMin) * time.Minute)
	_, err = r.holds.Claim(ctx, holds.ClaimRequest{ClientID: "another-patient", ClinicID: r.clinic.ID,
		AppointmentTypeID: typ.ID, SpecialistID: uuid.New(), Start: start, End: end, Quota: 1, Rooms: []uuid.UUID{room}})
	if !errors.Is(err, holds.ErrHeld) {
		t.Fatalf("another specialist's hold of the offered room's time: %v, want ErrHeld", err)
	}

	c, err := r.waitlist.Accept(ctx, r.clinic.ID, r.offerToken(t, waiting.ID))
	if err != nil {
		t.Fatal(err)
	}
	var got uuid.UUID
	if err := r.pool.QueryRow(ctx, `SELECT resource_id FROM bookings WHERE id = $1`, c.Booking.ID).Scan(&got); err != nil || got != room {
		t.Fatalf("the accepted offer's booking holds room %s (%v), want %s", got, err, room)
	}
}
