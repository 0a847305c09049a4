package slots_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/testkit"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type bundle struct {
	pool     *pgxpool.Pool
	rdb      redis.UniversalClient
	svc      *slots.Service
	bookings *booking.Service
	clinic   testkit.Clinic
	loc      *time.Location
	monday   availability.Date
}

func setup(t *testing.T) bundle {
	t.Helper()
	pool := testkit.DB(t)
	rdb := testkit.Redis(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	svc := slots.New(pool, rdb, slots.Options{Logger: quiet})
	bookings := booking.NewService(pool)
	bookings.Observe(svc.OnBookingChange)
	m := testkit.NextWeekday(time.Now(), loc, time.Monday, 0, 0)
	return bundle{pool: pool, rdb: rdb, svc: svc, bookings: bookings, clinic: c, loc: loc,
		monday: availability.Date{Year: m.Year(), Month: m.Month(), Day: m.Day()}}
}

func (b bundle) week() slots.Request {
	return slots.Request{AppointmentTypeID: b.clinic.Types[0].ID, From: b.monday, To: b.monday.AddDays(6)}
}

func (b bundle) at(days, hour, min int) time.Time {
	d := b.monday.AddDays(days)
	return time.Date(d.Year, d.Month, d.Day, hour, min, 0, 0, b.loc)
}

func free(t *testing.T, svc *slots.Service, req slots.Request) []availability.Slot {
	t.Helper()
	res, err := svc.Free(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res.Slots
}

func specialistsAt(sl []availability.Slot, start time.Time) []uuid.UUID {
	for _, s := range sl {
		if s.Start.Equal(start) {
			return s.SpecialistIDs
		}
	}
	return nil
}

func TestFreeWeek(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got := free(t, b.svc, b.week())
	// Two specialists, Monday to Friday 09:00-17:00, 30-minute slots: 16 a day.
	if len(got) != 5*16 {
		t.Fatalf("want 80 slots, got %d", len(got))
	}
	if !got[0].Start.Equal(b.at(0, 9, 0)) || len(got[0].SpecialistIDs) != 2 {
		t.Fatalf("first slot %+v", got[0])
	}
	if got[0].SpecialistIDs[0] != b.clinic.Specialists[0].ID {
		t.Fatal("the higher-priority specialist comes first")
	}
}

func TestCacheFollowsChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	req := b.week()
	free(t, b.svc, req) // fill the cache

	t.Run("ConfirmedBookingVisibleOnNextRead", func(t *testing.T) {
		_, err := b.bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: b.clinic.Specialists[0].ID,
			Start: b.at(0, 10, 0), Patient: booking.Patient{Name: "A", Email: "a@example.org"},
		})
		if err != nil {
			t.Fatal(err)
		}
		sp := specialistsAt(free(t, b.svc, req), b.at(0, 10, 0))
		if len(sp) != 1 || sp[0] != b.clinic.Specialists[1].ID {
			t.Fatalf("after booking, 10:00 should offer only the other specialist, got %v", sp)
		}
	})

	t.Run("HoursChangeIsStaleUntilGenerationBumps", func(t *testing.T) {
		// Specialist 2 stops working Mondays.
		if _, err := b.pool.Exec(ctx, "DELETE FROM weekly_hours WHERE specialist_id = $1 AND weekday = 1", b.clinic.Specialists[1].ID); err != nil {
			t.Fatal(err)
		}
		// The cache still answers the old hours: proof it is being read...
		if sp := specialistsAt(free(t, b.svc, req), b.at(0, 11, 0)); len(sp) != 2 {
			t.Fatalf("expected the cached answer, got %v", sp)
		}
		// ...and a bump makes the very next read right.
		b.svc.Invalidate(ctx, b.clinic.ID)
		if sp := specialistsAt(free(t, b.svc, req), b.at(0, 11, 0)); len(sp) != 1 {
			t.Fatalf("after the bump, want one specialist, got %v", sp)
		}
	})

	t.Run("CancelFreesOnNextRead", func(t *testing.T) {
		conf, err := b.bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: b.clinic.Specialists[0].ID,
			Start: b.at(1, 9, 0), Patient: booking.Patient{Name: "A", Email: "a@example.org"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if sp := specialistsAt(free(t, b.svc, req), b.at(1, 9, 0)); len(sp) != 1 {
			t.Fatalf("booked: %v", sp)
		}
		if _, _, err := b.bookings.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID}); err != nil {
			t.Fatal(err)
		}
		if sp := specialistsAt(free(t, b.svc, req), b.at(1, 9, 0)); len(sp) != 2 {
			t.Fatalf("cancelled: %v", sp)
		}
	})
}

func TestSameAnswerWithAndWithoutCacheAndWithoutRedis(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, h := range []int{9, 13, 15} {
		if _, err := b.bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: b.clinic.Specialists[h%2].ID,
			Start: b.at(2, h, 30), Patient: booking.Patient{Name: "A", Email: "a@example.org"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	noRedis := slots.New(b.pool, down, slots.Options{Logger: quiet})

	for _, who := range []uuid.UUID{uuid.Nil, b.clinic.Specialists[1].ID} {
		req := b.week()
		req.SpecialistID = who
		direct := req
		direct.NoCache = true
		want := free(t, b.svc, direct)
		first := free(t, b.svc, req)  // miss, fills the cache
		second := free(t, b.svc, req) // hit
		without := free(t, noRedis, req)
		for name, got := range map[string][]availability.Slot{"miss": first, "hit": second, "redis down": without} {
			if !equal(got, want) {
				t.Errorf("%s (specialist %v): %d slots, want %d", name, who, len(got), len(want))
			}
		}
	}
}

func equal(a, b []availability.Slot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Start.Equal(b[i].Start) || !a[i].End.Equal(b[i].End) || len(a[i].SpecialistIDs) != len(b[i].SpecialistIDs) {
			return false
		}
		for j := range a[i].SpecialistIDs {
			if a[i].SpecialistIDs[j] != b[i].SpecialistIDs[j] {
				return false
			}
		}
	}
	return true
}

func TestOneQueryPerKindOfDataWhateverTheRange(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pool, tracer := testkit.CountedPool(t, b.pool)
	svc := slots.New(pool, nil, slots.Options{Logger: quiet})
	for _, days := range []int{0, 6, 61} {
		tracer.Store(0)
		req := slots.Request{AppointmentTypeID: b.clinic.Types[0].ID, From: b.monday, To: b.monday.AddDays(days), NoCache: true}
		if _, err := svc.Free(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		// type+clinic, specialists, weekly hours, overrides, bookings.
		if got := tracer.Load(); got != 5 {
			t.Fatalf("%d days: %d queries, want 5", days+1, got)
		}
	}
}

func TestFreeRefusesBadRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := testkit.NewClinic(t, b.pool, testkit.ClinicOptions{})
	cases := map[string]struct {
		req   slots.Request
		field string
	}{
		"ToBeforeFrom":           {slots.Request{AppointmentTypeID: b.clinic.Types[0].ID, From: b.monday, To: b.monday.AddDays(-1)}, "to"},
		"RangeTooLong":           {slots.Request{AppointmentTypeID: b.clinic.Types[0].ID, From: b.monday, To: b.monday.AddDays(62)}, "to"},
		"UnknownType":            {slots.Request{AppointmentTypeID: uuid.New(), From: b.monday, To: b.monday}, "id"},
		"SpecialistNotOfTheType": {slots.Request{AppointmentTypeID: b.clinic.Types[0].ID, From: b.monday, To: b.monday, SpecialistID: other.Specialists[0].ID}, "specialistId"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := b.svc.Free(context.Background(), tc.req)
			if err == nil || fieldOf(err) != tc.field {
				t.Fatalf("want an error naming %q, got %v", tc.field, err)
			}
		})
	}
	t.Run("SixtyTwoDaysIsAllowed", func(t *testing.T) {
		if _, err := b.svc.Free(context.Background(), slots.Request{AppointmentTypeID: b.clinic.Types[0].ID, From: b.monday, To: b.monday.AddDays(61)}); err != nil {
			t.Fatal(err)
		}
	})
}

func fieldOf(err error) string {
	type fielder interface{ Field() string }
	if f, ok := err.(fielder); ok {
		return f.Field()
	}
	return ""
}

// A booking retires the cached lists of the days it can reach and no
// others: under a booking rush the rest of the calendar stays cached. Seen
// from another instance: the bookings are made through b.svc's instance,
// which holds none of these lists (so it carries none over); svc, another
// instance on the same Redis, reads them.
func TestBookingRetiresOnlyTheDaysItReaches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	pool, tracer := testkit.CountedPool(t, b.pool)
	svc := slots.New(pool, b.rdb, slots.Options{Logger: quiet})
	day := func(n int) slots.Request {
		d := b.monday.AddDays(n)
		return slots.Request{AppointmentTypeID: b.clinic.Types[0].ID, From: d, To: d}
	}
	for n := range 5 {
		free(t, svc, day(n))
	}
	queries := func(n int) int64 {
		tracer.Store(0)
		free(t, svc, day(n))
		return tracer.Load()
	}
	for n := range 5 {
		if q := queries(n); q != 0 {
			t.Fatalf("day %d: %d queries before any booking, want a cache hit", n, q)
		}
	}

	// Wednesday 10:00, a type without buffers: only Wednesday's list is
	// retired (its slots end by midnight, so no other day's can overlap it).
	if _, err := b.bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: b.clinic.Specialists[0].ID,
		Start: b.at(2, 10, 0), Patient: booking.Patient{Name: "A", Email: "a@example.org"},
	}); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]bool{0: false, 1: false, 2: true, 3: false, 4: false} {
		if recomputed := queries(n) > 0; recomputed != want {
			t.Errorf("day %d after a Wednesday booking: recomputed %v, want %v", n, recomputed, want)
		}
	}
	if sp := specialistsAt(free(t, svc, day(2)), b.at(2, 10, 0)); len(sp) != 1 {
		t.Fatalf("Wednesday 10:00 after the booking: %v, want one specialist", sp)
	}
	// The recomputation reads only what a booking can change: the day's
	// overrides and bookings; the type, specialists and hours are kept.
	if _, err := b.bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: b.clinic.Specialists[0].ID,
		Start: b.at(2, 11, 0), Patient: booking.Patient{Name: "B", Email: "b@example.org"},
	}); err != nil {
		t.Fatal(err)
	}
	if q := queries(2); q != 2 {
		t.Errorf("recomputing Wednesday after a booking: %d queries, want 2 (overrides, bookings)", q)
	}

	// A set-up change retires every day.
	svc.Invalidate(ctx, b.clinic.ID)
	for n := range 5 {
		if queries(n) == 0 {
			t.Errorf("day %d was not recomputed after a set-up change", n)
		}
	}
}
