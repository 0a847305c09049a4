package slots_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/testkit"
)

// After a booking, the cached lists this instance had read are carried
// over the booking (patched) instead of recomputed: the next read costs
// no query, and answers exactly what a computation from PostgreSQL
// answers. Random bookings of two types with different lengths and
// buffers, pooled and single-specialist lists of a day and of a week, and
// cancellations (which retire lists: recomputed, never patched) between.
func TestListsCarriedOverABookingEqualAComputation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 3, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30},
		{Name: "Examination", DurationMin: 60, SlotStepMin: 15, BufferBeforeMin: 10, BufferAfterMin: 15},
	}})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	counted, tracer := testkit.CountedPool(t, pool)
	svc := slots.New(counted, testkit.Redis(t), slots.Options{Logger: quiet})
	bookings := booking.NewService(pool)
	bookings.Observe(svc.OnBookingChange)

	m := testkit.NextWeekday(time.Now(), loc, time.Monday, 0, 0)
	monday := availability.Date{Year: m.Year(), Month: m.Month(), Day: m.Day()}
	consult, exam := c.Types[0].ID, c.Types[1].ID
	lists := map[string]slots.Request{
		"consultation, Monday, pooled":      {AppointmentTypeID: consult, From: monday, To: monday},
		"consultation, week, pooled":        {AppointmentTypeID: consult, From: monday, To: monday.AddDays(6)},
		"examination, week, pooled":         {AppointmentTypeID: exam, From: monday, To: monday.AddDays(6)},
		"examination, week, specialist 3":   {AppointmentTypeID: exam, From: monday, To: monday.AddDays(6), SpecialistID: c.Specialists[2].ID},
		"consultation, Tuesday, specialist": {AppointmentTypeID: consult, From: monday.AddDays(1), To: monday.AddDays(1), SpecialistID: c.Specialists[0].ID},
	}
	exact := func(req slots.Request) []availability.Slot {
		req.NoCache = true
		return free(t, svc, req)
	}

	rng := rand.New(rand.NewPCG(8, 8))
	var made []booking.Booking
	patchedReads := 0
	for round := range 40 {
		for _, req := range lists {
			free(t, svc, req) // read: computed or cached, now in this instance's memo
		}
		// Every fourth round first cancels a booking and then books on its
		// day, without a read in between: the lists read before the
		// cancellation are stale, and must not be carried over the booking
		// (the ones of the day are recomputed instead).
		day := monday.AddDays(rng.IntN(5))
		cancelled := false
		if round%4 == 3 && len(made) > 0 {
			i := rng.IntN(len(made))
			if _, _, err := bookings.Cancel(ctx, booking.CancelRequest{BookingID: made[i].ID}); err != nil {
				t.Fatal(err)
			}
			day = availability.DateOf(made[i].Start, loc)
			made = append(made[:i], made[i+1:]...)
			cancelled = true
		}
		typ := []uuid.UUID{consult, exam}[rng.IntN(2)]
		open := exact(slots.Request{AppointmentTypeID: typ, From: day, To: day})
		if len(open) == 0 {
			continue
		}
		sl := open[rng.IntN(len(open))]
		res, err := bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: typ, SpecialistID: sl.SpecialistIDs[rng.IntN(len(sl.SpecialistIDs))],
			Start: sl.Start, Patient: booking.Patient{Name: "P", Email: "p@example.org"},
		})
		if err != nil {
			t.Fatalf("round %d: book %s: %v", round, sl.Start, err)
		}
		made = append(made, res.Booking)
		if !cancelled {
			// Every list this instance had read is carried over: no query.
			for name, req := range lists {
				tracer.Store(0)
				free(t, svc, req)
				if n := tracer.Load(); n != 0 {
					t.Fatalf("round %d: %s after a booking: %d queries, want 0 (carried over)", round, name, n)
				}
				patchedReads++
			}
		}
		for name, req := range lists {
			if got, want := free(t, svc, req), exact(req); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: %s: the cached list differs from a computation:\n got %v\nwant %v", round, name, got, want)
			}
		}
	}
	if patchedReads < 50 {
		t.Fatalf("only %d reads of carried lists: the test checked too little", patchedReads)
	}
}

// Two instances book the same days at once while both keep reading their
// lists: whatever order the bookings, the counters and the carry-overs
// land in, every list either instance then serves equals a computation.
func TestListsCarriedOverConcurrentBookingsOnTwoInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	rdb := testkit.Redis(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 4, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30},
		{Name: "Examination", DurationMin: 60, SlotStepMin: 15, BufferBeforeMin: 10, BufferAfterMin: 15},
	}})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	type instance struct {
		svc      *slots.Service
		bookings *booking.Service
	}
	var inst [2]instance
	for i := range inst {
		svc := slots.New(pool, rdb, slots.Options{Logger: quiet})
		bs := booking.NewService(pool)
		bs.Observe(svc.OnBookingChange)
		inst[i] = instance{svc, bs}
	}
	m := testkit.NextWeekday(time.Now(), loc, time.Monday, 0, 0)
	monday := availability.Date{Year: m.Year(), Month: m.Month(), Day: m.Day()}
	lists := []slots.Request{
		{AppointmentTypeID: c.Types[0].ID, From: monday, To: monday},
		{AppointmentTypeID: c.Types[1].ID, From: monday, To: monday},
		{AppointmentTypeID: c.Types[0].ID, From: monday, To: monday.AddDays(1)},
		{AppointmentTypeID: c.Types[1].ID, From: monday.AddDays(1), To: monday.AddDays(1), SpecialistID: c.Specialists[1].ID},
	}
	exact := func(req slots.Request) []availability.Slot {
		req.NoCache = true
		return free(t, inst[0].svc, req)
	}

	for round := range 6 {
		// Candidates: free starts of both types on Monday and Tuesday.
		tries := freeTries(c, func(typ int) []availability.Slot {
			return exact(slots.Request{AppointmentTypeID: c.Types[typ].ID, From: monday, To: monday.AddDays(1)})
		})
		rng := rand.New(rand.NewPCG(uint64(round), 3))
		rng.Shuffle(len(tries), func(i, j int) { tries[i], tries[j] = tries[j], tries[i] })
		tries = tries[:min(len(tries), 16)]

		for _, in := range inst {
			for _, req := range lists {
				free(t, in.svc, req) // both instances hold the lists
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, tr := range tries {
			in := inst[i%2]
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				// Overlapping tries lose to the gate; that is fine here.
				_, _ = in.bookings.Book(ctx, booking.BookRequest{
					AppointmentTypeID: c.Types[tr.typ].ID, SpecialistID: c.Specialists[tr.sp].ID,
					Start: tr.start, Patient: booking.Patient{Name: "P", Email: "p@example.org"},
				})
			}()
			go func() {
				defer wg.Done()
				<-start
				for _, req := range lists {
					if _, err := in.svc.Free(ctx, req); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		close(start)
		wg.Wait()

		for i, in := range inst {
			for _, req := range lists {
				if got, want := free(t, in.svc, req), exact(req); !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, instance %d, %+v: the served list differs from a computation:\n got %v\nwant %v", round, i, req, got, want)
				}
			}
		}
	}
}

// try is a booking to attempt: a type, a start and a specialist (indexes
// into the clinic's).
type try struct {
	typ   int
	start time.Time
	sp    int
}

// freeTries are the bookings free lists of the clinic's first two types
// offer, one per start and specialist.
func freeTries(c testkit.Clinic, free func(typ int) []availability.Slot) []try {
	var tries []try
	for typ := range 2 {
		for _, sl := range free(typ) {
			for _, id := range sl.SpecialistIDs {
				for k, s := range c.Specialists {
					if s.ID == id {
						tries = append(tries, try{typ, sl.Start, k})
					}
				}
			}
		}
	}
	return tries
}
