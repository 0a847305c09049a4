package outbox_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

// roundTrips records what a pool's connections send, one entry per
// round trip: a statement alone, a statement's preparation, or a batch
// (its statements joined).
type roundTrips struct {
	mu   sync.Mutex
	sent []string
}

func (r *roundTrips) add(sql string) {
	r.mu.Lock()
	r.sent = append(r.sent, sql)
	r.mu.Unlock()
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(d.SQL)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var sqls []string
	for _, q := range d.Batch.QueuedQueries {
		sqls = append(sqls, q.SQL)
	}
	r.add(strings.Join(sqls, "\n;\n"))
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (r *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	r.add("PREPARE " + d.SQL)
	return ctx
}

func (r *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

func (r *roundTrips) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// traced is a pool of one connection to the rig's database whose round
// trips rec records.
func traced(t *testing.T, r *rig, rec *roundTrips) *pgxpool.Pool {
	t.Helper()
	cfg := r.pool.Config()
	cfg.ConnConfig.Tracer = rec
	cfg.MaxConns, cfg.MinConns = 1, 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// fromHold is the rig's request as a booking from a hold makes it: with
// its clinic and its end, which the one-batch path needs.
func (r *rig) fromHold(start time.Time, email string) booking.BookRequest {
	req := r.request(start, email)
	req.ClinicID = r.clinic.ID
	req.End = start.Add(time.Duration(r.clinic.Types[0].DurationMin) * time.Minute)
	return req
}

// A patient's booking with its e-mails holds the specialist's lock for
// one round trip: the statement that takes it is sent in the same batch
// as the COMMIT, with the e-mails' rows, the audit row and the lock on
// the patient, so bookings of one specialist wait for each other that
// long only. The booking makes two round trips in all: `begin` travels
// with the queue's jobs.
func TestBookingHoldsTheSpecialistsLockForOneRoundTrip(t *testing.T) {
	r := newRig(t, rigOptions{})
	rec := &roundTrips{}
	svc := booking.New(traced(t, r, rec), booking.Options{TxHooks: []booking.TxHook{
		{Name: "e-mails", After: r.outbox.Enqueue, Queue: r.outbox.Queue},
	}})
	ctx := context.Background()
	// The first booking prepares the statements on the one connection.
	if _, err := svc.Book(ctx, r.fromHold(r.at(3, 9, 0), "first@example.org")); err != nil {
		t.Fatal(err)
	}
	rec.take()
	c, err := svc.Book(ctx, r.fromHold(r.at(3, 10, 0), "second@example.org"))
	if err != nil {
		t.Fatal(err)
	}
	sent := rec.take()
	locked, committed := -1, -1
	for i, s := range sent {
		if locked < 0 && strings.Contains(s, "booking-specialist:") {
			locked = i
		}
		if strings.Contains(strings.ToLower(s), "commit") {
			committed = i
		}
	}
	if locked < 0 || committed < 0 {
		t.Fatalf("no lock or no commit among the %d round trips:\n%s", len(sent), strings.Join(sent, "\n----\n"))
	}
	if held := committed - locked + 1; held != 1 {
		t.Fatalf("the specialist's lock is held over %d round trips (of %d), want 1:\n%s",
			held, len(sent), strings.Join(sent[locked:committed+1], "\n----\n"))
	}
	batch := sent[committed]
	for _, part := range []string{"booking-patient:", "INSERT INTO messages", "INSERT INTO audit_log", "booking_written"} {
		if !strings.Contains(batch, part) {
			t.Errorf("the last round trip does not send %q:\n%s", part, batch)
		}
	}
	if got := r.messages(t, c.Booking.ID); len(got) != 2 {
		t.Fatalf("messages %s, want the confirmation and the reminder", kinds(got))
	}
	// The transaction begins with the queue's jobs, in their round trip.
	if len(sent) > 2 {
		t.Fatalf("a booking with its e-mails made %d round trips, want 2 (begin with the jobs, the batch):\n%s",
			len(sent), strings.Join(sent, "\n----\n"))
	}
	t.Logf("a booking with its e-mails: %d round trips, the lock held for the last", len(sent))
}

// Patients racing for one slot with the outbox on: exactly one books it,
// the rest are told SLOT_TAKEN, and only the winner's e-mails exist, as
// rows and as queue jobs; a loser's, written before its insert found the
// slot taken, went with its transaction.
func TestRaceForASlotLeavesOneBookingAndOneSetOfEmails(t *testing.T) {
	r := newRig(t, rigOptions{})
	const n = 12
	start := r.at(4, 11, 0)
	var mu sync.Mutex
	var won []booking.Booking
	errs := testkit.Race(n, func(i int) error {
		c, err := r.bookings.Book(context.Background(), r.fromHold(start, fmt.Sprintf("racer%d@example.org", i)))
		if err == nil {
			mu.Lock()
			won = append(won, c.Booking)
			mu.Unlock()
		}
		return err
	})
	taken := 0
	for _, err := range errs {
		if apperr.CodeOf(err) == apperr.CodeSlotTaken {
			taken++
		} else if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if len(won) != 1 || taken != n-1 {
		t.Fatalf("want 1 booking and %d SLOT_TAKEN, got %d and %d", n-1, len(won), taken)
	}
	mine := r.messages(t, won[0].ID)
	if len(mine) != 2 {
		t.Fatalf("the winner's messages: %s, want the confirmation and the reminder", kinds(mine))
	}
	if all := r.count(t, `SELECT count(*) FROM messages WHERE clinic_id = $1`, r.clinic.ID); all != len(mine) {
		t.Fatalf("%d messages at the clinic, want only the winner's %d", all, len(mine))
	}
	if jobs := r.count(t, `SELECT count(*) FROM river_job WHERE queue = $1`, r.queue); jobs != len(mine) {
		t.Fatalf("%d jobs in the queue, want the winner's %d", jobs, len(mine))
	}
	if orphans := r.count(t, `SELECT count(*) FROM river_job j WHERE j.queue = $1
		AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.job_id = j.id)`, r.queue); orphans != 0 {
		t.Fatalf("%d jobs without their message", orphans)
	}
}

// One patient booking several times of one type at once, with the outbox
// on: the cooldown lets exactly one through. The lock on the patient is
// taken by an earlier statement of the batch than the insert's check, so
// the check sees a booking that the lock's previous holder committed.
func TestOnePatientsBookingsAtOnceMakeOneWithTheOutbox(t *testing.T) {
	r := newRig(t, rigOptions{})
	const n = 8
	errs := testkit.Race(n, func(i int) error {
		_, err := r.bookings.Book(context.Background(), r.fromHold(r.at(5, 8+i, 0), "same.patient@example.org"))
		return err
	})
	won, cooling := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case apperr.CodeOf(err) == apperr.CodeCooldown:
			cooling++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if won != 1 || cooling != n-1 {
		t.Fatalf("want 1 booking and %d COOLDOWN, got %d and %d", n-1, won, cooling)
	}
	if all := r.count(t, `SELECT count(*) FROM messages WHERE clinic_id = $1`, r.clinic.ID); all != 2 {
		t.Fatalf("%d messages at the clinic, want the one booking's 2", all)
	}
}
