package slots_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/slots"
)

func TestBitmap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sp := b.clinic.Specialists[0].ID
	bm := b.svc.Bitmap

	t.Run("MissingIsRebuiltFromTheDatabase", func(t *testing.T) {
		// A booking made with no observer: the bitmap has never heard of it.
		plain := booking.NewService(b.pool)
		if _, err := plain.Book(ctx, booking.BookRequest{
			AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: sp,
			Start: b.at(0, 9, 0), Patient: booking.Patient{Name: "A", Email: "a@example.org"},
		}); err != nil {
			t.Fatal(err)
		}
		taken, known := bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(0, 9, 0), b.at(0, 9, 30))
		if !known || !taken {
			t.Fatalf("09:00 should be known taken after a rebuild, got taken=%v known=%v", taken, known)
		}
		taken, known = bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(0, 9, 30), b.at(0, 10, 0))
		if !known || taken {
			t.Fatalf("09:30 touches but does not overlap, got taken=%v known=%v", taken, known)
		}
		taken, _ = bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(0, 8, 45), b.at(0, 9, 15))
		if !taken {
			t.Fatal("an overlapping range of another length is taken too")
		}
	})

	t.Run("ConfirmSetsAndCancelClears", func(t *testing.T) {
		conf, err := b.bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: sp,
			Start: b.at(0, 14, 0), Patient: booking.Patient{Name: "A", Email: "a@example.org"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if taken, known := bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(0, 14, 0), b.at(0, 14, 30)); !taken || !known {
			t.Fatalf("after confirm: taken=%v known=%v", taken, known)
		}
		if _, _, err := b.bookings.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID}); err != nil {
			t.Fatal(err)
		}
		if taken, known := bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(0, 14, 0), b.at(0, 14, 30)); taken || !known {
			t.Fatalf("after cancel the slot must read as known free: taken=%v known=%v", taken, known)
		}
		if taken, _ := bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(0, 9, 0), b.at(0, 9, 30)); !taken {
			t.Fatal("the cancel must not forget the other booking of the day")
		}
	})

	t.Run("RedisDownMeansAskTheDatabase", func(t *testing.T) {
		down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
		defer down.Close()
		svc := slots.New(b.pool, down, slots.Options{Logger: quiet})
		if taken, known := svc.Bitmap.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(0, 9, 0), b.at(0, 9, 30)); taken || known {
			t.Fatalf("want unknown, got taken=%v known=%v", taken, known)
		}
	})

	t.Run("BookingAcrossMidnightMarksBothDays", func(t *testing.T) {
		// Straight into the table: the gate does not care about hours.
		start := b.at(3, 23, 30)
		if _, err := b.pool.Exec(ctx, `INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, patient_name, patient_email)
			VALUES ($1, $2, $3, $4, $5, 'A', 'a@example.org')`, b.clinic.ID, b.clinic.Types[0].ID, sp, start, start.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if taken, _ := bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(4, 0, 0), b.at(4, 0, 15)); !taken {
			t.Fatal("the next day's first minutes are taken")
		}
		if taken, _ := bm.Taken(ctx, b.loc, b.clinic.ID, sp, b.at(3, 23, 45), b.at(4, 0, 15)); !taken {
			t.Fatal("a range across midnight sees it")
		}
	})
}
