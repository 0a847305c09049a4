package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/waitlist"
)

// A time freed on a day the clinic closed after it was booked is not
// offered: nobody could book it, so the opening closes and the patient
// waits on for another time.
func TestWaitlistOffersNoTimeOnADayClosedSince(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	ctx := context.Background()
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(5, 10, 0)
	b := a.bookAs(t, c, typ, sp.ID, start, booking.Patient{Name: "Booked", Email: uniqueEmail("booked")})
	e, _, err := a.Deps.Waitlist.Join(ctx, waitlist.JoinRequest{
		ClinicID: c.ID, AppointmentTypeID: typ.ID, From: pwDay(c, start), To: pwDay(c, start),
		Patient: booking.Patient{Name: "Waiting", Email: uniqueEmail("waiting")}, ClientID: "c-" + uuid.NewString(), Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	pwConfirm(t, a, c, e.ID)
	local := start.In(c.Loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
	if _, err := db.New(a.Pool).OverrideInsert(ctx, db.OverrideInsertParams{ClinicID: c.ID, SpecialistID: sp.ID, Day: day, Closed: true, Note: "closed"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Deps.Bookings.Cancel(ctx, booking.CancelRequest{BookingID: b.Booking.ID, Actor: "staff:test", Reason: "closed"}); err != nil {
		t.Fatal(err)
	}
	var opening uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_openings WHERE clinic_id = $1 AND slot_start = $2`, c.ID, start).Scan(&opening); err != nil {
		t.Fatalf("no opening of the cancelled time: %v", err)
	}
	pwStep(t, a, opening)
	var offers int
	var state string
	if err := a.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM waitlist_offers WHERE entry_id = $1), (SELECT state FROM waitlist_openings WHERE id = $2)`,
		e.ID, opening).Scan(&offers, &state); err != nil {
		t.Fatal(err)
	}
	if offers != 0 || state != "released" {
		t.Fatalf("a time on a closed day: %d offers, opening %s; want none, released", offers, state)
	}
}
