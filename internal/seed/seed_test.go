package seed_test

import (
	"context"
	"testing"
	"time"

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
			(SELECT count(*) FROM staff_users u JOIN clinics c ON c.id = u.clinic_id WHERE c.slug = 'demo') * 100000000`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first, err := seed.Run(ctx, pool, "pw-one", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !first.AdminCreated || first.Clinic.Timezone != "Europe/Berlin" || len(first.Specialists) != 3 || len(first.Types) != 3 {
		t.Fatalf("first seed: %+v", first)
	}
	if first.ClosedDay.Weekday() != time.Wednesday {
		t.Fatalf("closed day %v", first.ClosedDay)
	}
	// 1 clinic, 3 specialists, 3 types, 3x10 hour ranges, 1 override, 2+3+2 links, 1 admin.
	want := 1 + 3*10 + 3*100 + 30*1000 + 1*100000 + 7*1000000 + 1*100000000
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
}
