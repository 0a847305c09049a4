package booking_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// roomClinic is a clinic of three specialists who all perform a
// consultation (type 0, no room) and an ultrasound (type 1, which needs a
// room of the kind "ultrasound"), with one ultrasound room.
func roomClinic(t *testing.T, atOnce bool) (bundle, uuid.UUID) {
	t.Helper()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 3, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30},
		{Name: "Ultrasound", DurationMin: 30},
	}})
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	room := addRoom(t, pool, c.ID, "Ultrasound room", "ultrasound")
	needKind(t, pool, c.ID, c.Types[1].ID, "ultrasound")
	return bundle{pool: pool, svc: booking.NewService(pool), clinic: c, loc: loc, atOnce: atOnce}, room
}

func addRoom(t *testing.T, pool *pgxpool.Pool, clinic uuid.UUID, name, kind string) uuid.UUID {
	t.Helper()
	r, err := db.New(pool).ResourceInsert(context.Background(), db.ResourceInsertParams{
		ClinicID: clinic, Name: name, Kind: kind, AlwaysOpen: true, Active: true,
	})
	if err != nil {
		t.Fatalf("add room: %v", err)
	}
	return r.ID
}

func needKind(t *testing.T, pool *pgxpool.Pool, clinic, typ uuid.UUID, kind string) {
	t.Helper()
	if err := db.New(pool).TypeNeedSet(context.Background(), db.TypeNeedSetParams{
		ClinicID: clinic, AppointmentTypeID: typ, ResourceKind: pgtype.Text{String: kind, Valid: true},
	}); err != nil {
		t.Fatalf("type need: %v", err)
	}
}

// roomBookings counts the confirmed bookings of a resource that overlap
// [from, until).
func roomBookings(t *testing.T, pool *pgxpool.Pool, clinic, room uuid.UUID, from, until time.Time) int {
	t.Helper()
	rows, err := db.New(pool).ResourceBookingsInRange(context.Background(), db.ResourceBookingsInRangeParams{
		ClinicID: clinic, ResourceIds: []uuid.UUID{room}, RangeStart: from, RangeEnd: until,
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// Twelve patients released together on one ultrasound time, four with
// each of three specialists: the room is booked once. The time of the
// other specialists stays free for what needs no room, and neither a
// staff booking by another specialist nor a move onto the room's time
// gets the room again.
func TestRoomBookedOnceWhateverTheSpecialist(t *testing.T) {
	for _, atOnce := range []bool{false, true} {
		t.Run(map[bool]string{false: "StepByStep", true: "AtOnce"}[atOnce], func(t *testing.T) {
			t.Parallel()
			b, room := roomClinic(t, atOnce)
			ctx := context.Background()
			start := b.monday(10, 0)
			const n = 12
			errs := testkit.Race(n, func(i int) error {
				req := b.req(1, i%3, start)
				req.Patient.Email = fmt.Sprintf("patient%d@example.org", i)
				req.Patient.Phone = ""
				_, err := b.svc.Book(ctx, req)
				return err
			})
			if won, taken := tally(t, errs); won != 1 || taken != n-1 {
				t.Fatalf("want 1 confirmed and %d SLOT_TAKEN, got %d and %d", n-1, won, taken)
			}
			if got := roomBookings(t, b.pool, b.clinic.ID, room, start, start.Add(30*time.Minute)); got != 1 {
				t.Fatalf("%d bookings of the room at that time, want 1", got)
			}
			if got := testkit.AuditCount(t, b.pool, b.clinic.ID); got != 1 {
				t.Fatalf("%d audit rows, want only the winner's", got)
			}
			winner := -1
			for i := range 3 {
				if countConfirmed(t, b.pool, b.clinic.Specialists[i].ID, start) == 1 {
					winner = i
				}
			}
			other := (winner + 1) % 3

			t.Run("ConsultationAtThatTimeUnaffected", func(t *testing.T) {
				req := b.req(0, other, start)
				req.Patient.Email = "consult@example.org"
				if _, err := b.svc.Book(ctx, req); err != nil {
					t.Fatalf("a consultation needs no room: %v", err)
				}
			})
			t.Run("StaffBookingByAnotherSpecialistRefused", func(t *testing.T) {
				req := b.req(1, (winner+2)%3, start.Add(15*time.Minute))
				req.Actor = "staff:desk"
				req.Patient.Email = "phone@example.org"
				if b.atOnce {
					req.End = req.Start.Add(30 * time.Minute)
				}
				_, err := b.svc.Book(ctx, req)
				testkit.WantCode(t, err, apperr.CodeSlotTaken, "staff booking of the room's time")
			})
			t.Run("MoveOntoTheRoomsTimeRefused", func(t *testing.T) {
				req := b.req(1, other, start.Add(2*time.Hour))
				req.Patient.Email = "mover@example.org"
				c, err := b.svc.Book(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				_, err = b.svc.Reschedule(ctx, booking.RescheduleRequest{
					BookingID: c.Booking.ID, Start: start, SpecialistID: b.clinic.Specialists[(winner+2)%3].ID, Actor: "staff:desk",
				})
				testkit.WantCode(t, err, apperr.CodeSlotTaken, "move onto the room's time")
				after, err := b.svc.Get(ctx, c.Booking.ID, uuid.Nil)
				if err != nil {
					t.Fatal(err)
				}
				if after.Status != booking.StatusConfirmed || !after.Start.Equal(start.Add(2*time.Hour).UTC()) || after.ResourceID != room {
					t.Fatalf("a refused move changed the booking: %+v", after)
				}
			})
			if got := roomBookings(t, b.pool, b.clinic.ID, room, start, start.Add(30*time.Minute)); got != 1 {
				t.Fatalf("%d bookings of the room at that time after the refusals, want 1", got)
			}
		})
	}
}

// A move keeps its room when the room is free at the new time, and takes
// another of the kind when it is not.
func TestMoveKeepsOrReassignsTheRoom(t *testing.T) {
	t.Parallel()
	b, first := roomClinic(t, false)
	second := addRoom(t, b.pool, b.clinic.ID, "Ultrasound room 2", "ultrasound")
	ctx := context.Background()
	book := func(specialist int, at time.Time, email string) booking.Booking {
		t.Helper()
		req := b.req(1, specialist, at)
		req.Patient.Email = email
		c, err := b.svc.Book(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.svc.Get(ctx, c.Booking.ID, uuid.Nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	mine := book(0, b.monday(9, 0), "mine@example.org")
	if mine.ResourceID != first && mine.ResourceID != second {
		t.Fatalf("booking holds %v, want one of the two rooms", mine.ResourceID)
	}
	moved, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: mine.ID, Start: b.monday(9, 30), Actor: "staff:desk"})
	if err != nil {
		t.Fatal(err)
	}
	if moved.ResourceID != mine.ResourceID {
		t.Fatalf("move to a time its room is free at took %v, want its own %v", moved.ResourceID, mine.ResourceID)
	}
	// Another patient takes the room at 11:00 (the first free one, which
	// is this booking's room when both are free).
	blocker := book(1, b.monday(11, 0), "blocker@example.org")
	if blocker.ResourceID != moved.ResourceID {
		// The other room was taken first: block this booking's own.
		blocker = book(2, b.monday(11, 0), "blocker2@example.org")
	}
	again, err := b.svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: moved.ID, Start: b.monday(11, 0), Actor: "staff:desk"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceID == moved.ResourceID || again.ResourceID == uuid.Nil {
		t.Fatalf("move to a time its room is taken at holds %v, want the other room", again.ResourceID)
	}
}

// A booking of the room's time by another specialist waits for the room's
// lock while the first booking's transaction is open, not for the first
// booking's row in the constraint's index (where two such inserts can
// wait for each other), and then finds the room taken. Not parallel: it
// reads the server's lock table.
func TestRoomLockTakenBeforeTheInsert(t *testing.T) {
	b, room := roomClinic(t, false)
	ctx := context.Background()
	start := b.monday(10, 0)
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	q := db.New(tx)
	if err := q.BookingSpecialistLock(ctx, b.clinic.Specialists[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := q.BookingInsert(ctx, db.BookingInsertParams{
		ClinicID: b.clinic.ID, AppointmentTypeID: b.clinic.Types[1].ID, SpecialistID: b.clinic.Specialists[0].ID,
		SlotStart: start, SlotEnd: start.Add(30 * time.Minute), PatientName: "First", PatientEmail: "first@example.org",
		PatientEmailKey: "first@example.org",
	}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		req := b.req(1, 1, start)
		req.Patient.Email = "second@example.org"
		_, err := b.svc.Book(ctx, req)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		if err := b.pool.QueryRow(ctx, `
			SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted
			  AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('booking-resource:' || $1::text, 0)`,
			room).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 1 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the second booking ended (%v) while the first held the room, without waiting for its lock", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second booking never waited for the room's lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WantCode(t, <-done, apperr.CodeSlotTaken, "booking of a room taken while it waited")
}
