// Package outbox tells patients of their bookings by e-mail: a
// confirmation, a reminder before the appointment, a notice when it is
// moved or cancelled, and the list of their bookings when they ask for it.
// The e-mails a stranger's request causes are capped per recipient and
// day (cap.go).
//
// Every message is written in the transaction of the change it tells of,
// as a row of messages and a job of the queue (River, on the same
// PostgreSQL): a booking commits with its e-mail or neither exists. Every
// serve process works the queue; a job is taken by one worker at a time,
// retried with backoff when the mail server fails, and never sent again
// once the server accepted it (the row records the acceptance before the
// job can run again).
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/mail"
)

// Kinds of message.
const (
	KindConfirmation = "confirmation"
	KindReminder     = "reminder"
	KindChange       = "change"
	KindCancellation = "cancellation"
	KindLookup       = "lookup"
	// The waitlist's: a place taken, a time offered, and an offered time
	// withdrawn because the clinic closed it.
	KindWaitlistJoined    = "waitlist_joined"
	KindWaitlistOffer     = "waitlist_offer"
	KindWaitlistWithdrawn = "waitlist_withdrawn"
	// A series': its sessions booked, and its sessions cancelled from
	// one on, each told in one message.
	KindSeries             = "series"
	KindSeriesCancellation = "series_cancellation"
)

// Kinds lists every kind, for metrics.
var Kinds = []string{KindConfirmation, KindReminder, KindChange, KindCancellation, KindLookup, KindWaitlistJoined, KindWaitlistOffer,
	KindSeries, KindSeriesCancellation, KindWaitlistWithdrawn}

// sendTimeout bounds one attempt: composing and the whole SMTP exchange.
// recordFor is how long a send that the server accepted insists on
// recording it (PostgreSQL failing over, say).
const (
	sendTimeout = time.Minute
	recordFor   = 2 * time.Minute
)

// defaultQueue is the queue the messages go through.
const defaultQueue = "mail"

// Config is how the outbox sends.
type Config struct {
	// Sender delivers a message. Nil keeps every message in the
	// development outbox (outbox_copies) instead, for the staff's outbox
	// page, and counts it as sent.
	Sender mail.Sender
	// From is the sender of the messages kept without a mail server
	// (MAIL_FROM); "" is "Clinic bookings <bookings@localhost>".
	From string
	// PublicURL is the base of the links in messages ("https://book.example.org").
	PublicURL string
	// Workers is how many messages this process sends at once; 0 makes
	// it only enqueue (a command, a test of something else).
	Workers int
	// Retry is the backoff after a failed attempt: Base, doubling, at
	// most Max, for Attempts attempts in all. Zero fields take defaults
	// (30 s, 1 h, 12).
	Retry Retry
	// Queue names the queue of this outbox's jobs; "" is "mail". Every
	// server of one database must use the same; tests that share a
	// database give each server its own so none sends another's messages.
	Queue string
	// Cap is how many e-mails public requests may cause to one address
	// a day; zero fields take the defaults.
	Cap Cap
	// Clock is the queue's and the outbox's time; nil is the real clock.
	// Tests move it to make reminders due without waiting.
	Clock rivertype.TimeGenerator
	Log   *slog.Logger
}

// Jobs are another package's jobs (the waitlist's), worked by the
// outbox's queue beside the e-mails, in every process that sends.
type Jobs struct {
	// Register adds the jobs' workers.
	Register func(*river.Workers) error
	// Periodic are jobs of those workers that the queue's leader (one
	// process of all) inserts at their interval, in the work queue.
	Periodic []Periodic
}

// Periodic is a job inserted every Every, or on Schedule when it is set
// (a time of day, say).
type Periodic struct {
	Every    time.Duration
	Schedule river.PeriodicSchedule
	Args     func() river.JobArgs
}

// Retry is the backoff of failed sends.
type Retry struct {
	Base, Max time.Duration
	Attempts  int
}

func (r Retry) withDefaults() Retry {
	if r.Base <= 0 {
		r.Base = 30 * time.Second
	}
	if r.Max <= 0 {
		r.Max = time.Hour
	}
	if r.Attempts <= 0 {
		r.Attempts = 12
	}
	return r
}

// Outbox enqueues messages with the changes they tell of, and sends them.
type Outbox struct {
	pool *pgxpool.Pool
	// river inserts jobs, in the transactions of the changes that make
	// them; worker works them, from Start on (nil before, and in a
	// process that only enqueues).
	river   *river.Client[pgx.Tx]
	worker  *river.Client[pgx.Tx]
	cfg     Config
	cap     Cap
	clinics *clinics.Service
	log     *slog.Logger
	stats   *stats
	// recordFor is how long a send insists on recording its acceptance.
	recordFor time.Duration

	leadsMu sync.Mutex
	leads   map[uuid.UUID]lead // reminder lead time by appointment type

	workerMu sync.Mutex
	stopOnce sync.Once
	stopErr  error
}

// sendArgs is the queue job of one message; the message's row holds
// everything else, so no patient data sits in the queue.
type sendArgs struct {
	MessageID uuid.UUID `json:"message_id"`
}

func (sendArgs) Kind() string { return "send_message" }

// InsertOpts: the queue. A message gets its one job in the statement that
// writes it (a job run twice would find its message sent), so the queue's
// own uniqueness check, a cost on every booking, is not asked for.
func (sendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: defaultQueue}
}

// New makes the outbox, which enqueues from now on; Start begins
// sending.
func New(pool *pgxpool.Pool, cfg Config) (*Outbox, error) {
	cfg.Retry = cfg.Retry.withDefaults()
	if cfg.From == "" {
		cfg.From = "Clinic bookings <bookings@localhost>"
	}
	if cfg.Queue == "" {
		cfg.Queue = defaultQueue
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	o := &Outbox{pool: pool, cfg: cfg, cap: cfg.Cap.withDefaults(), clinics: clinics.NewService(pool), log: cfg.Log, stats: newStats(), recordFor: recordFor,
		leads: map[uuid.UUID]lead{}}
	// A client without workers only inserts: the jobs' workers, the
	// waitlist's among them, are known once Start is given them.
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		MaxAttempts: cfg.Retry.Attempts,
		Logger:      cfg.Log.With("component", "queue"),
		Test:        river.TestConfig{Time: cfg.Clock},
	})
	if err != nil {
		return nil, fmt.Errorf("job queue client: %w", err)
	}
	o.river = c
	return o, nil
}

// Start begins working the queue, when this outbox has workers: the
// e-mails, and the jobs of others. It starts once: a second call returns
// an error and leaves the running workers as they are.
func (o *Outbox) Start(ctx context.Context, others ...Jobs) error {
	if o.cfg.Workers == 0 {
		return nil
	}
	// Held to the end, so two calls at once cannot both start a client.
	o.workerMu.Lock()
	defer o.workerMu.Unlock()
	if o.worker != nil {
		return errors.New("outbox: already started")
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &sendWorker{o: o}); err != nil {
		return fmt.Errorf("outbox worker: %w", err)
	}
	rc := &river.Config{
		Workers:     workers,
		MaxAttempts: o.cfg.Retry.Attempts,
		RetryPolicy: backoff{o.cfg.Retry},
		JobTimeout:  sendTimeout,
		// A job left running by a process that died is taken up again
		// once no live send could still be working on it (one attempt,
		// then the record of its acceptance).
		RescueStuckJobsAfter: sendTimeout + recordFor + 2*time.Minute,
		Logger:               o.log.With("component", "queue"),
		Test:                 river.TestConfig{Time: o.cfg.Clock},
		Queues:               map[string]river.QueueConfig{o.cfg.Queue: {MaxWorkers: o.cfg.Workers}, o.workQueue(): {MaxWorkers: 2}},
	}
	for _, j := range others {
		if j.Register != nil {
			if err := j.Register(workers); err != nil {
				return fmt.Errorf("outbox: other workers: %w", err)
			}
		}
		for _, p := range j.Periodic {
			sched := p.Schedule
			if sched == nil {
				sched = river.PeriodicInterval(p.Every)
			}
			rc.PeriodicJobs = append(rc.PeriodicJobs, river.NewPeriodicJob(sched,
				func() (river.JobArgs, *river.InsertOpts) { return p.Args(), &river.InsertOpts{Queue: o.workQueue()} }, nil))
		}
	}
	c, err := river.NewClient(riverpgxv5.New(o.pool), rc)
	if err != nil {
		return fmt.Errorf("job queue client: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("start job queue: %w", err)
	}
	o.worker = c
	return nil
}

// Stop waits for the sends under way to finish (until ctx ends). Every
// caller waits for the one stop, so the process can close its pool after.
func (o *Outbox) Stop(ctx context.Context) error {
	o.workerMu.Lock()
	c := o.worker
	o.workerMu.Unlock()
	if c == nil {
		return nil
	}
	o.stopOnce.Do(func() { o.stopErr = c.Stop(ctx) })
	return o.stopErr
}

// Write writes messages of other kinds than the bookings' (the
// waitlist's), with their jobs, in tx. A message without a Cause is
// public (capped), unless it is a waitlist offer or a reminder.
func (o *Outbox) Write(ctx context.Context, tx pgx.Tx, msgs ...db.MessageInsertParams) error {
	return o.write(ctx, tx, msgs)
}

// InsertJob adds a job of another kind (one of the Jobs given to Start)
// in tx. Such jobs have a queue of their own, beside the e-mails': a
// backlog of sends (a mail server that is slow, or down) never delays
// them.
func (o *Outbox) InsertJob(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts river.InsertOpts) (*rivertype.JobInsertResult, error) {
	opts.Queue = o.workQueue()
	return o.river.InsertTx(ctx, tx, args, &opts)
}

// workQueue is the queue of the jobs InsertJob adds.
func (o *Outbox) workQueue() string { return o.cfg.Queue + "_work" }

// RunJobNow makes a job of this queue run at once, in tx: a scheduled job
// is made available now, and one that ran already runs again (the
// waitlist's steps, the only callers, are safe to repeat); a job that is
// gone is left alone.
func (o *Outbox) RunJobNow(ctx context.Context, tx pgx.Tx, id int64) error {
	if _, err := o.river.JobRetryTx(ctx, tx, id); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("run job now: %w", err)
	}
	return nil
}

// CancelJob cancels a job of this queue that has not run, in tx.
func (o *Outbox) CancelJob(ctx context.Context, tx pgx.Tx, id int64) error {
	if _, err := o.river.JobCancelTx(ctx, tx, id); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("cancel job: %w", err)
	}
	return nil
}

// Now is the outbox's clock (Config.Clock).
func (o *Outbox) Now() time.Time { return o.now() }

// Stored says whether messages are kept for the outbox page rather than
// sent (no mail server configured).
func (o *Outbox) Stored() bool { return o.cfg.Sender == nil }

func (o *Outbox) now() time.Time {
	if o.cfg.Clock != nil {
		return o.cfg.Clock.Now()
	}
	return time.Now()
}

// backoff doubles the wait after each failed attempt, from Base to Max,
// with a tenth of jitter so that a mail server coming back is not met by
// every retry at once.
type backoff struct{ r Retry }

func (b backoff) NextRetry(job *rivertype.JobRow) time.Time {
	d := b.r.Base
	for i := 1; i < job.Attempt && d < b.r.Max; i++ {
		d *= 2
	}
	d = min(d, b.r.Max)
	d += time.Duration(rand.Int64N(int64(d)/10 + 1))
	at := time.Now()
	if job.AttemptedAt != nil && job.AttemptedAt.After(at) {
		at = *job.AttemptedAt // the queue's clock, which a test may move ahead
	}
	return at.Add(d)
}
