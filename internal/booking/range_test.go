package booking_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// The range queries read the index from a day before the range (a booking
// is at most a day long), so a day-long booking that began 23 hours before
// the range must still be found by every one of them, and a longer booking
// must be refused by the table.
func TestRangeQueriesFindADayLongBookingFromTheDayBefore(t *testing.T) {
	ctx := context.Background()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{
		{Name: "Day surgery", DurationMin: 1440},
	}})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	q := db.New(pool)
	sp := c.Specialists[0].ID
	start := testkit.NextWeekday(time.Now(), loc, time.Monday, 10, 0)
	ins := db.BookingInsertParams{
		ClinicID: c.ID, AppointmentTypeID: c.Types[0].ID, SpecialistID: sp,
		SlotStart: start, SlotEnd: start.Add(24 * time.Hour), PatientName: "Erika Mustermann",
	}
	b, err := q.BookingInsert(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}

	// [start+23h, start+23h30m): the booking began 23 hours before it.
	from, to := start.Add(23*time.Hour), start.Add(23*time.Hour+30*time.Minute)
	byType, err := q.BookingListConfirmedByType(ctx, db.BookingListConfirmedByTypeParams{AppointmentTypeID: c.Types[0].ID, RangeStart: from, RangeEnd: to})
	if err != nil || len(byType) != 1 || byType[0].SpecialistID != sp {
		t.Errorf("BookingListConfirmedByType = %v, %v; want the day-long booking", byType, err)
	}
	bySp, err := q.BookingListConfirmedBySpecialistRange(ctx, db.BookingListConfirmedBySpecialistRangeParams{SpecialistID: sp, RangeStart: from, RangeEnd: to})
	if err != nil || len(bySp) != 1 {
		t.Errorf("BookingListConfirmedBySpecialistRange = %v, %v; want the day-long booking", bySp, err)
	}
	overlap, err := q.BookingOverlapExists(ctx, db.BookingOverlapExistsParams{SpecialistIds: []uuid.UUID{sp}, RangeStart: from, RangeEnd: to})
	if err != nil || !overlap {
		t.Errorf("BookingOverlapExists = %v, %v; want true", overlap, err)
	}
	cal, err := q.BookingCalendar(ctx, db.BookingCalendarParams{ClinicID: c.ID, RangeStart: from, RangeEnd: to})
	if err != nil || len(cal) != 1 || cal[0].ID != b.ID {
		t.Errorf("BookingCalendar = %v, %v; want the day-long booking", cal, err)
	}
	// And it ends where it ends: nothing from its last minute on.
	after, err := q.BookingListConfirmedBySpecialistRange(ctx, db.BookingListConfirmedBySpecialistRangeParams{SpecialistID: sp, RangeStart: start.Add(24 * time.Hour), RangeEnd: start.Add(25 * time.Hour)})
	if err != nil || len(after) != 0 {
		t.Errorf("after the booking: %v, %v; want none", after, err)
	}

	ins.SlotStart = start.Add(7 * 24 * time.Hour)
	ins.SlotEnd = ins.SlotStart.Add(24*time.Hour + time.Minute)
	_, err = q.BookingInsert(ctx, ins)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.ConstraintName != "bookings_length_bounded" {
		t.Errorf("a booking of a day and a minute: err %v, want a bookings_length_bounded violation", err)
	}
}
