package outbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
)

// rig is a clinic, its booking service with an outbox, a real SMTP server
// and the queue's clock.
type rig struct {
	pool     *pgxpool.Pool
	clinic   testkit.Clinic
	bookings *booking.Service
	outbox   *outbox.Outbox
	smtp     *testkit.SMTPServer
	clock    *testkit.Clock
	loc      *time.Location
	queue    string // the rig's own job queue
}

type rigOptions struct {
	workers int          // 0: 2
	sender  *mail.SMTP   // nil: to the rig's SMTP server
	noSMTP  bool         // keep messages for the outbox page instead
	retry   outbox.Retry // zero: fast retries for tests
	// cap is the cap on public e-mails to one address; nil: raised out of
	// the way, since the rigs of a package share a database and mail the
	// same few addresses.
	cap *outbox.Cap
	// ownDB: a database of the rig's own, so that its queue client is the
	// only one and leads the queue's upkeep (moving due reminders along)
	// by the rig's clock.
	ownDB bool
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	pool := testkit.DB(t)
	if o.ownDB {
		pool = ownDB(t)
	}
	r := &rig{pool: pool, smtp: testkit.SMTP(t), clock: &testkit.Clock{}}
	r.clinic = testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	loc, err := time.LoadLocation(r.clinic.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	r.loc = loc
	r.queue = "mail_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	cfg := outbox.Config{PublicURL: "http://clinic.test", Workers: 2, Clock: r.clock, Queue: r.queue,
		Retry: outbox.Retry{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond, Attempts: 5}}
	if o.workers > 0 {
		cfg.Workers = o.workers
	}
	if o.retry != (outbox.Retry{}) {
		cfg.Retry = o.retry
	}
	cfg.Cap = outbox.Cap{PerClinic: 100000}
	if o.cap != nil {
		cfg.Cap = *o.cap
	}
	if !o.noSMTP {
		s := o.sender
		if s == nil {
			s = r.sender(t)
		}
		cfg.Sender = s
	}
	r.outbox, err = outbox.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.outbox.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		_ = r.outbox.Stop(stop)
		cancel()
	})
	r.bookings = booking.New(pool, booking.Options{TxHooks: []booking.TxHook{{Name: "e-mails", After: r.outbox.Enqueue, Queue: r.outbox.Queue}}})
	return r
}

// ownDB is a migrated database of the test's own. Its queue client is the
// only one there, so it is the queue's leader: the one that moves jobs
// waiting for a retry or their time along, by the test's clock. In the
// shared database the leader may be any package's client, with a clock
// of its own test, and such jobs may wait for it.
func ownDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := postgres.ConnectMigrated(ctx, testkit.FreshDB(t), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func (r *rig) sender(t *testing.T) *mail.SMTP {
	t.Helper()
	cfg, err := mail.ParseURL(r.smtp.URL())
	if err != nil {
		t.Fatal(err)
	}
	s, err := mail.NewSMTP(cfg, "Test clinic <bookings@clinic.test>")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// at is a wall-clock time in the clinic's zone, days from today.
func (r *rig) at(days, hour, minute int) time.Time {
	d := time.Now().In(r.loc).AddDate(0, 0, days)
	return time.Date(d.Year(), d.Month(), d.Day(), hour, minute, 0, 0, r.loc)
}

func (r *rig) book(t *testing.T, start time.Time, email string) booking.Booking {
	t.Helper()
	c, err := r.bookings.Book(context.Background(), r.request(start, email))
	if err != nil {
		t.Fatalf("book %s: %v", start, err)
	}
	return c.Booking
}

func (r *rig) request(start time.Time, email string) booking.BookRequest {
	return booking.BookRequest{
		AppointmentTypeID: r.clinic.Types[0].ID, SpecialistID: r.clinic.Specialists[0].ID, Start: start,
		Patient: booking.Patient{Name: "Ada Patient", Email: email}, Actor: booking.ActorPatient, Language: "en",
	}
}

// messages are the rows of a booking's messages, oldest first.
func (r *rig) messages(t *testing.T, bookingID uuid.UUID) []db.Message {
	t.Helper()
	rows, err := db.New(r.pool).MessageListByBooking(context.Background(), db.MessageListByBookingParams{
		ClinicID: r.clinic.ID, BookingID: uuid.NullUUID{UUID: bookingID, Valid: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func kinds(ms []db.Message) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Kind+":"+m.Status)
	}
	return strings.Join(out, " ")
}

// waitStatus waits until the message reaches status.
func (r *rig) waitStatus(t *testing.T, id uuid.UUID, status string) db.Message {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err := db.New(r.pool).MessageGet(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == status {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("message %s (%s) is %s after 20 s, want %s (%s)", id, m.Kind, m.Status, status, m.LastError)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// drained waits until the rig's queues, the e-mails' and the other jobs'
// (the waitlist's steps), have no job left to run by the rig's clock (see
// testkit.Drained): after it, a count of e-mails is final.
func (r *rig) drained(t *testing.T) {
	t.Helper()
	testkit.Drained(t, r.pool, testkit.Jobs{Queues: []string{r.queue, outbox.WorkQueue(r.outbox)}, Clock: r.clock})
}

// settle waits until nothing due is waiting to be sent.
func (r *rig) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := r.count(t, `SELECT count(*) FROM messages WHERE clinic_id = $1
			AND status IN ('queued', 'sending', 'retrying') AND send_at <= now()`, r.clinic.ID)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages still waiting after 20 s", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := r.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// runDue makes a job waiting for its retry (or its time) due now, as if
// the wait were over; a job already done is left as it is.
func (r *rig) runDue(t *testing.T, id int64) {
	t.Helper()
	if _, err := r.pool.Exec(context.Background(), `UPDATE river_job SET state = 'available', scheduled_at = now()
		WHERE id = $1 AND state IN ('retryable', 'scheduled')`, id); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) jobState(t *testing.T, id int64) string {
	t.Helper()
	var s string
	if err := r.pool.QueryRow(context.Background(), `SELECT state::text FROM river_job WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (r *rig) jobScheduledAt(t *testing.T, id int64) time.Time {
	t.Helper()
	var at time.Time
	if err := r.pool.QueryRow(context.Background(), `SELECT scheduled_at FROM river_job WHERE id = $1`, id).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}
