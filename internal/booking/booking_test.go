package booking_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/testkit"
)

type bundle struct {
	pool   *pgxpool.Pool
	svc    *booking.Service
	clinic testkit.Clinic
	loc    *time.Location
	// atOnce makes req name the clinic and the end, as a booking from a
	// hold does, which lets Book take its single-statement gate.
	atOnce bool
}

// gates runs a test against both of Book's paths: requests without a
// clinic and an end go step by step; with them, at once (and step by step
// only when refused).
func gates(t *testing.T, test func(t *testing.T, b bundle)) {
	for _, atOnce := range []bool{false, true} {
		t.Run(map[bool]string{false: "StepByStep", true: "AtOnce"}[atOnce], func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.atOnce = atOnce
			test(t, b)
		})
	}
}

// setup makes a clinic of the test's own with two specialists and a 30- and
// a 60-minute type both perform.
func setup(t *testing.T) bundle {
	t.Helper()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30},
		{Name: "Examination", DurationMin: 60},
	}})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{pool: pool, svc: booking.NewService(pool), clinic: c, loc: loc}
}

func (b bundle) req(typ, specialist int, start time.Time) booking.BookRequest {
	r := booking.BookRequest{
		AppointmentTypeID: b.clinic.Types[typ].ID,
		SpecialistID:      b.clinic.Specialists[specialist].ID,
		Start:             start,
		Patient:           booking.Patient{Name: "Erika Mustermann", Email: "erika@example.org", Phone: "+49 30 1234567"},
		ClientID:          "client-" + uuid.NewString(),
		Actor:             "patient",
	}
	if b.atOnce {
		r.ClinicID = b.clinic.ID
		r.End = start.Add(time.Duration(b.clinic.Types[typ].DurationMin) * time.Minute)
	}
	return r
}

func (b bundle) monday(hour, min int) time.Time {
	return testkit.NextWeekday(time.Now(), b.loc, time.Monday, hour, min)
}

func countConfirmed(t *testing.T, pool *pgxpool.Pool, specialist uuid.UUID, start time.Time) int64 {
	t.Helper()
	n, err := db.New(pool).BookingCountConfirmedAt(context.Background(), db.BookingCountConfirmedAtParams{
		SpecialistID: specialist, SlotStart: start,
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func tally(t *testing.T, errs []error) (won, taken int) {
	t.Helper()
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case apperr.CodeOf(err) == apperr.CodeSlotTaken:
			taken++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	return won, taken
}

func TestBookConcurrentSameSlotOneWinner(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		start := b.monday(10, 0)
		const n = 50
		errs := testkit.Race(n, func(int) error {
			_, err := b.svc.Book(context.Background(), b.req(0, 0, start))
			return err
		})
		won, taken := tally(t, errs)
		t.Logf("%d goroutines on one slot: %d confirmed, %d SLOT_TAKEN", n, won, taken)
		if won != 1 || taken != n-1 {
			t.Fatalf("want 1 confirmed and %d SLOT_TAKEN, got %d and %d", n-1, won, taken)
		}
		if got := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, start); got != 1 {
			t.Fatalf("want exactly one row, got %d", got)
		}
		if got := testkit.AuditCount(t, b.pool, b.clinic.ID); got != 1 {
			t.Fatalf("want exactly one audit row (the winner's), got %d", got)
		}
	})
}

// The first booking of an empty day has no row to lock; the constraints
// must still let exactly one of mixed-length overlapping attempts win.
func TestBookEmptyDayFirstSlotOneWinner(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		start := b.monday(9, 0) // the first slot of a day with nothing booked
		const n = 20
		errs := testkit.Race(n, func(i int) error {
			if i%2 == 0 {
				_, err := b.svc.Book(context.Background(), b.req(1, 0, start)) // 09:00-10:00
				return err
			}
			_, err := b.svc.Book(context.Background(), b.req(0, 0, start.Add(30*time.Minute))) // 09:30-10:00
			return err
		})
		won, taken := tally(t, errs)
		t.Logf("empty day, %d mixed-length attempts: %d confirmed, %d SLOT_TAKEN", n, won, taken)
		if won != 1 || taken != n-1 {
			t.Fatalf("want exactly one winner, got %d winners and %d SLOT_TAKEN", won, taken)
		}
	})
}

func TestBookOverlapOfDifferentLengths(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		if _, err := b.svc.Book(ctx, b.req(1, 0, b.monday(8, 30))); err != nil { // 60 min, 08:30-09:30
			t.Fatal(err)
		}
		t.Run("BlocksOverlapForSameSpecialist", func(t *testing.T) {
			_, err := b.svc.Book(ctx, b.req(0, 0, b.monday(9, 0)))
			if apperr.CodeOf(err) != apperr.CodeSlotTaken {
				t.Fatalf("want SLOT_TAKEN, got %v", err)
			}
		})
		t.Run("AllowsSameTimeForAnotherSpecialist", func(t *testing.T) {
			if _, err := b.svc.Book(ctx, b.req(0, 1, b.monday(9, 0))); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("AllowsBackToBack", func(t *testing.T) {
			if _, err := b.svc.Book(ctx, b.req(0, 0, b.monday(9, 30))); err != nil {
				t.Fatal(err)
			}
			if _, err := b.svc.Book(ctx, b.req(0, 0, b.monday(10, 0))); err != nil {
				t.Fatal(err)
			}
		})
	})
}

func TestCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	start := b.monday(11, 0)
	conf, err := b.svc.Book(ctx, b.req(0, 0, start))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("FreesTheSlotForRebooking", func(t *testing.T) {
		got, changed, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID, Actor: "patient", Reason: "feeling better"})
		if err != nil || !changed || got.Status != booking.StatusCancelled {
			t.Fatalf("cancel: %+v changed=%v err=%v", got, changed, err)
		}
		if _, err := b.svc.Book(ctx, b.req(0, 0, start)); err != nil {
			t.Fatalf("rebook after cancel: %v", err)
		}
	})
	t.Run("TwiceIsHarmless", func(t *testing.T) {
		got, changed, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID, Actor: "patient"})
		if err != nil || changed || got.Status != booking.StatusCancelled {
			t.Fatalf("second cancel: %+v changed=%v err=%v", got, changed, err)
		}
		if n := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, start); n != 1 {
			t.Fatalf("the rebooking must still stand, got %d confirmed", n)
		}
	})
	t.Run("OfAnotherClinicIsNotFound", func(t *testing.T) {
		_, _, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID, ClinicID: uuid.New()})
		if e := apperr.As(err); e == nil || e.Kind != apperr.NotFound {
			t.Fatalf("want NOT_FOUND, got %v", err)
		}
	})
	t.Run("UnknownIsNotFound", func(t *testing.T) {
		_, _, err := b.svc.Cancel(ctx, booking.CancelRequest{BookingID: uuid.New()})
		if e := apperr.As(err); e == nil || e.Kind != apperr.NotFound {
			t.Fatalf("want NOT_FOUND, got %v", err)
		}
	})
	// book, cancel, rebook: three state changes, three audit rows; the
	// harmless second cancel and the refused ones wrote none.
	if got := testkit.AuditCount(t, b.pool, b.clinic.ID); got != 3 {
		t.Fatalf("want 3 audit rows, got %d", got)
	}
}

func TestReschedule(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	mine, err := b.svc.Book(ctx, b.req(0, 0, b.monday(9, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Book(ctx, b.req(0, 0, b.monday(10, 0))); err != nil {
		t.Fatal(err)
	}

	t.Run("OntoTakenSlotChangesNothing", func(t *testing.T) {
		before := testkit.AuditCount(t, b.pool, b.clinic.ID)
		_, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: mine.Booking.ID, Start: b.monday(10, 0), Actor: "patient"})
		if apperr.CodeOf(err) != apperr.CodeSlotTaken {
			t.Fatalf("want SLOT_TAKEN, got %v", err)
		}
		got, err := b.svc.Get(ctx, mine.Booking.ID, uuid.Nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != booking.StatusConfirmed || !got.Start.Equal(mine.Booking.Start) || got.Version != mine.Booking.Version {
			t.Fatalf("original changed: %+v", got)
		}
		if _, err := b.svc.ByManageToken(ctx, mine.ManageToken); err != nil {
			t.Fatalf("manage link must still work: %v", err)
		}
		if after := testkit.AuditCount(t, b.pool, b.clinic.ID); after != before {
			t.Fatalf("a failed reschedule wrote %d audit rows", after-before)
		}
	})

	t.Run("OntoOverlappingOwnTimeWorks", func(t *testing.T) {
		before := testkit.AuditCount(t, b.pool, b.clinic.ID)
		nb, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: mine.Booking.ID, Start: b.monday(9, 15), Actor: "patient"})
		if err != nil {
			t.Fatal(err)
		}
		if nb.RescheduledFrom != mine.Booking.ID || nb.Status != booking.StatusConfirmed {
			t.Fatalf("new booking: %+v", nb)
		}
		old, err := b.svc.Get(ctx, mine.Booking.ID, uuid.Nil)
		if err != nil || old.Status != booking.StatusRescheduled {
			t.Fatalf("old status %q (%v)", old.Status, err)
		}
		viaLink, err := b.svc.ByManageToken(ctx, mine.ManageToken)
		if err != nil || viaLink.ID != nb.ID {
			t.Fatalf("the manage link must follow the booking: %v %v", viaLink.ID, err)
		}
		if after := testkit.AuditCount(t, b.pool, b.clinic.ID); after != before+1 {
			t.Fatalf("want one audit row for the reschedule, got %d", after-before)
		}
		_, err = b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: mine.Booking.ID, Start: b.monday(15, 0)})
		if apperr.CodeOf(err) != "BOOKING_NOT_ACTIVE" {
			t.Fatalf("rescheduling the moved-away booking: want BOOKING_NOT_ACTIVE, got %v", err)
		}
	})
}

func TestBookRejectsBadInput(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		other := setup(t) // another clinic
		ctx := context.Background()
		start := b.monday(14, 0)
		cases := []struct {
			name      string
			mutate    func(r *booking.BookRequest)
			wantKind  apperr.Kind
			wantField string
		}{
			{"UnknownSpecialist", func(r *booking.BookRequest) { r.SpecialistID = uuid.New() }, apperr.Invalid, "specialistId"},
			{"SpecialistOfAnotherClinic", func(r *booking.BookRequest) { r.SpecialistID = other.clinic.Specialists[0].ID }, apperr.Invalid, "specialistId"},
			{"MissingSpecialist", func(r *booking.BookRequest) { r.SpecialistID = uuid.Nil }, apperr.Invalid, "specialistId"},
			{"UnknownType", func(r *booking.BookRequest) { r.AppointmentTypeID = uuid.New() }, apperr.NotFound, "appointmentTypeId"},
			{"TypeOfAnotherClinicWhenScoped", func(r *booking.BookRequest) { r.ClinicID = other.clinic.ID }, apperr.NotFound, "appointmentTypeId"},
			{"EndBeforeStart", func(r *booking.BookRequest) { r.End = r.Start.Add(-30 * time.Minute) }, apperr.Invalid, "slotEndDate"},
			{"EndEqualsStart", func(r *booking.BookRequest) { r.End = r.Start }, apperr.Invalid, "slotEndDate"},
			{"DurationNotTheType", func(r *booking.BookRequest) { r.End = r.Start.Add(45 * time.Minute) }, apperr.Invalid, "slotEndDate"},
			{"MissingStart", func(r *booking.BookRequest) { r.Start = time.Time{} }, apperr.Invalid, "slotStartDate"},
			{"StartOffTheMinute", func(r *booking.BookRequest) { r.Start = r.Start.Add(7 * time.Second) }, apperr.Invalid, "slotStartDate"},
			{"MissingName", func(r *booking.BookRequest) { r.Patient.Name = "  " }, apperr.Invalid, "patient.name"},
			{"BadEmail", func(r *booking.BookRequest) { r.Patient.Email = "not-an-email" }, apperr.Invalid, "patient.email"},
			{"BadPhone", func(r *booking.BookRequest) { r.Patient.Phone = "call me maybe" }, apperr.Invalid, "patient.phone"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := b.req(0, 0, start)
				tc.mutate(&r)
				_, err := b.svc.Book(ctx, r)
				e := apperr.As(err)
				if e == nil || e.Kind != tc.wantKind || e.Field() != tc.wantField {
					t.Fatalf("want kind %d on field %q, got %v", tc.wantKind, tc.wantField, err)
				}
			})
		}
		t.Run("InactiveSpecialist", func(t *testing.T) {
			if _, err := b.pool.Exec(ctx, "UPDATE specialists SET active = false WHERE id = $1", b.clinic.Specialists[1].ID); err != nil {
				t.Fatal(err)
			}
			_, err := b.svc.Book(ctx, b.req(0, 1, start))
			if e := apperr.As(err); e == nil || e.Field() != "specialistId" {
				t.Fatalf("want specialistId error, got %v", err)
			}
		})
		if got := testkit.AuditCount(t, b.pool, b.clinic.ID); got != 0 {
			t.Fatalf("refused bookings wrote %d audit rows", got)
		}
	})
}

func (b bundle) key(k string, hash string) idempotency.Key {
	return idempotency.Key{ClinicID: b.clinic.ID, Principal: "client:test", Route: "book:test", Key: k, RequestHash: []byte(hash)}
}

// An answer that cannot be rendered rolls the booking back with it: no
// row, no audit, no record.
func TestBookRememberFailureWritesNothing(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		r := b.req(0, 0, b.monday(16, 0))
		r.Remember = &booking.Remember{Key: b.key("k", "h"), Encode: func(booking.Confirmation) (int, []byte, error) {
			return 0, nil, fmt.Errorf("boom")
		}}
		if _, err := b.svc.Book(context.Background(), r); err == nil || err.Error() != "boom" {
			t.Fatalf("want the encoder's error, got %v", err)
		}
		if n := countConfirmed(t, b.pool, b.clinic.Specialists[0].ID, r.Start); n != 0 {
			t.Fatalf("want no booking, got %d", n)
		}
		if n := testkit.AuditCount(t, b.pool, b.clinic.ID); n != 0 {
			t.Fatalf("want no audit row, got %d", n)
		}
		if rec, err := idempotency.Find(context.Background(), b.pool, b.key("k", "h")); err != nil || rec != nil {
			t.Fatalf("want no record, got %v, %v", rec, err)
		}
	})
}

// The answer is stored with the booking; a request repeating the key books
// nothing and gets it back; one with the key but another request is refused.
func TestBookRemembersTheAnswer(t *testing.T) {
	gates(t, func(t *testing.T, b bundle) {
		ctx := context.Background()
		remember := func(hash string) *booking.Remember {
			return &booking.Remember{Key: b.key("k", hash), Encode: func(c booking.Confirmation) (int, []byte, error) {
				return 201, []byte(c.Booking.ID.String()), nil
			}}
		}
		r := b.req(0, 0, b.monday(11, 0))
		r.Remember = remember("h")
		first, err := b.svc.Book(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		again := b.req(0, 1, b.monday(12, 0)) // another slot: nothing stops it but the key
		again.Remember = remember("h")
		_, err = b.svc.Book(ctx, again)
		var replay *idempotency.ReplayError
		if !errors.As(err, &replay) || replay.Record.Status != 201 || string(replay.Record.Body) != first.Booking.ID.String() {
			t.Fatalf("want a replay of %s, got %v", first.Booking.ID, err)
		}
		other := b.req(0, 1, b.monday(12, 0))
		other.Remember = remember("another request")
		if _, err := b.svc.Book(ctx, other); apperr.CodeOf(err) != "IDEMPOTENCY_MISMATCH" {
			t.Fatalf("want IDEMPOTENCY_MISMATCH, got %v", err)
		}
		if n := countConfirmed(t, b.pool, b.clinic.Specialists[1].ID, again.Start); n != 0 {
			t.Fatalf("the repeats booked %d", n)
		}
		if n := testkit.AuditCount(t, b.pool, b.clinic.ID); n != 1 {
			t.Fatalf("want one audit row, got %d", n)
		}
	})
}

// A booking from a hold (clinic and end named) costs one round trip (the
// patient's lock and the statement, batched), and what Book returns, the
// audit row and the row itself agree.
func TestBookAtOnceIsOneStatementAndReadsLikeItsRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.atOnce = true
	ctx := context.Background()
	pool, queries := testkit.CountedPool(t, b.pool)
	svc := booking.NewService(pool)
	c, err := svc.Book(ctx, b.req(1, 1, b.monday(15, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if n := queries.Load(); n != 1 {
		t.Fatalf("%d round trips, want 1", n)
	}
	stored, err := b.svc.Get(ctx, c.Booking.ID, b.clinic.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stored, c.Booking) {
		t.Fatalf("Book returned\n%+v\nthe row reads\n%+v", c.Booking, stored)
	}
	if got, err := b.svc.ByManageToken(ctx, c.ManageToken); err != nil || got.ID != c.Booking.ID {
		t.Fatalf("the manage token finds %v, %v", got.ID, err)
	}
	rows, err := db.New(b.pool).AuditListByEntity(ctx, db.AuditListByEntityParams{Entity: "booking", EntityID: c.Booking.ID.String()})
	if err != nil || len(rows) != 1 {
		t.Fatalf("want one audit row, got %d (%v)", len(rows), err)
	}
	want, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	var gotAfter, wantAfter any
	if err := json.Unmarshal(rows[0].After, &gotAfter); err != nil {
		t.Fatalf("audit row's after %s: %v", rows[0].After, err)
	}
	if err := json.Unmarshal(want, &wantAfter); err != nil {
		t.Fatal(err)
	}
	if a := rows[0]; a.Action != "booking.create" || a.Actor != "patient" || a.Before != nil || !reflect.DeepEqual(gotAfter, wantAfter) {
		t.Fatalf("audit row %s by %s, before %s, after %s; want after %s", a.Action, a.Actor, a.Before, a.After, want)
	}

	// A request the single statement cannot take goes step by step.
	queries.Store(0)
	if _, err := svc.Book(ctx, b.req(0, 1, b.monday(15, 30))); apperr.CodeOf(err) != apperr.CodeSlotTaken {
		t.Fatalf("want SLOT_TAKEN, got %v", err)
	}
	if n := queries.Load(); n < 3 {
		t.Fatalf("a refusal was explained in %d statements; want the step-by-step gate", n)
	}
}
