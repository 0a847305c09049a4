package seed_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/seed"
	"github.com/clinic/booking/internal/testkit"
)

func TestSeedTwiceAddsNothing(t *testing.T) {
	pool := testkit.DB(t)
	ctx := context.Background()
	count := func() (n int) {
		err := pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM clinics WHERE slug = 'demo') +
			(SELECT count(*) FROM specialists s JOIN clinics c ON c.id = s.clinic_id WHERE c.slug = 'demo') * 10 +
			(SELECT count(*) FROM appointment_types a JOIN clinics c ON c.id = a.clinic_id WHERE c.slug = 'demo') * 100 +
			(SELECT count(*) FROM weekly_hours w JOIN clinics c ON c.id = w.clinic_id WHERE c.slug = 'demo') * 1000 +
			(SELECT count(*) FROM overrides o JOIN clinics c ON c.id = o.clinic_id WHERE c.slug = 'demo') * 100000 +
			(SELECT count(*) FROM appointment_type_specialists x JOIN clinics c ON c.id = x.clinic_id WHERE c.slug = 'demo') * 1000000 +
			(SELECT count(*) FROM staff_users u JOIN clinics c ON c.id = u.clinic_id WHERE c.slug = 'demo') * 100000000 +
			(SELECT count(*) FROM resources r JOIN clinics c ON c.id = r.clinic_id WHERE c.slug = 'demo') * 1000000000 +
			(SELECT count(*) FROM appointment_type_resources n JOIN clinics c ON c.id = n.clinic_id WHERE c.slug = 'demo') * 10000000000`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first, err := seed.Run(ctx, pool, "pw-one", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !first.AdminCreated || first.Clinic.Timezone != "Europe/Berlin" || len(first.Specialists) != 3 || len(first.Types) != 4 {
		t.Fatalf("first seed: %+v", first)
	}
	if first.ClosedDay.Weekday() != time.Wednesday {
		t.Fatalf("closed day %v", first.ClosedDay)
	}
	// 1 clinic, 3 specialists, 4 types, 3x10 hour ranges, 1 override,
	// 2+3+2+3 links, 1 admin, 1 room, 1 type that needs it.
	want := 1 + 3*10 + 4*100 + 30*1000 + 1*100000 + 10*1000000 + 1*100000000 + 1*1000000000 + 1*10000000000
	if first.Room.Kind != "ultrasound" || first.Types[3].Name != "Ultrasound" {
		t.Fatalf("first seed's ultrasound: room %+v, type %q", first.Room, first.Types[3].Name)
	}
	if got := count(); got != want {
		t.Fatalf("after first seed: got %d want %d", got, want)
	}
	second, err := seed.Run(ctx, pool, "pw-two", time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if second.AdminCreated || second.Clinic.ID != first.Clinic.ID {
		t.Fatalf("second seed recreated things: %+v", second)
	}
	if got := count(); got != want {
		t.Fatalf("after second seed: got %d want %d", got, want)
	}
	ultrasoundNeedsTheRoom(t, pool, second)
}

// ultrasoundNeedsTheRoom checks that the demo's ultrasound needs its one
// room: two specialists cannot both book it at one time, though each may
// book a consultation then. It books, so it runs after the seed's counts.
func ultrasoundNeedsTheRoom(t *testing.T, pool *pgxpool.Pool, d seed.Demo) {
	t.Helper()
	ctx := context.Background()
	loc, err := time.LoadLocation(d.Clinic.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	at := testkit.NextWeekday(time.Now(), loc, time.Thursday, 9, 0)
	svc := booking.NewService(pool)
	book := func(typ, specialist int, email string) error {
		_, err := svc.Book(ctx, booking.BookRequest{
			AppointmentTypeID: d.Types[typ].ID, SpecialistID: d.Specialists[specialist].ID, Start: at,
			Patient: booking.Patient{Name: "Demo Patient", Email: email}, Actor: booking.ActorPatient,
		})
		return err
	}
	if err := book(3, 0, "first@example.org"); err != nil {
		t.Fatal(err)
	}
	testkit.WantCode(t, book(3, 1, "second@example.org"), apperr.CodeSlotTaken, "the ultrasound room's time by another specialist")
	if err := book(1, 1, "third@example.org"); err != nil {
		t.Fatalf("a consultation at the room's time: %v", err)
	}
}
