package booking

// A new booking written in one batch with its hooks' writes, ending with
// its COMMIT: the specialist's lock is held for that one round trip.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinic/booking/internal/db"
)

// batched says whether a new booking's hooks let it be written in one
// batch: there are hooks, and none has a Before step, which must run
// under the booking's locks.
func (s *Service) batched() bool { return len(s.hooks) > 0 && !s.hasBefore() }

// bookInBatch writes the booking of p in a transaction whose last round
// trip is one batch: the check that the clinic's verification mode
// stands (when stands is set), the patient's lock (a patient's booking),
// what the hooks' Queue steps queued, BookingCreate (which takes the
// specialist's lock), BookingWritten and COMMIT. The Queue steps run
// first, in the transaction, before any lock is taken; the transaction
// begins with their first statement (the queue's jobs travel with its
// `begin`), or with the batch when they run none, so a booking with its
// e-mails makes two round trips, one without any. A hook that does not
// queue has its After step run once the batch has written the booking;
// the commit then follows them. n is the count of bookings BookingCreate
// wrote.
func (s *Service) bookInBatch(ctx context.Context, p db.BookingCreateParams, ch Change, stands *db.VerificationStandsParams) (n int64, err error) {
	err = retried(ctx, func() error {
		n = 0
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		// Begun with its first round trip: the Queue steps' first
		// statement (the queue's jobs), or else the batch itself.
		tx := newLazyTx(c.Conn())
		defer func() { _ = tx.Rollback(ctx) }()
		b := &pgx.Batch{}
		later := queue{b}
		tx.later = func(sql string, args []any) bool {
			if !strings.HasPrefix(sql, riverNotify) {
				return false
			}
			b.Queue(sql, args...)
			return true
		}
		if stands != nil {
			_ = db.New(later).VerificationStands(ctx, *stands)
		}
		guards := b.Len()
		if p.CheckCooldown {
			_ = db.New(later).BookingPatientLock(ctx, db.BookingPatientLockParams{AppointmentTypeID: p.AppointmentTypeID, EmailKey: p.PatientEmailKey, PhoneKey: p.PatientPhoneKey})
		}
		locks := b.Len()
		queued, after, err := s.queue(ctx, tx, later, ch)
		if err != nil {
			return err
		}
		_, _ = db.New(later).BookingCreate(ctx, p)
		commit := len(after) == 0
		if commit {
			_ = db.New(later).BookingWritten(ctx, p.ID)
			b.Queue("COMMIT")
		}
		n, err = sendBooking(ctx, tx, b, guards, locks, queued)
		tx.later = nil // the batch went: what comes now is sent at once
		if err != nil || n != 1 {
			return err
		}
		if commit {
			tx.committed()
			return nil
		}
		for _, h := range after {
			if err := h.After(ctx, tx, ch); err != nil {
				return fmt.Errorf("%s: %w", h.Name, err)
			}
		}
		return tx.Commit(ctx)
	})
	return n, err
}

// riverNotify begins the job queue's statement that tells its workers of
// jobs inserted: NOTIFY is delivered at the commit whenever it is sent in
// the transaction, so it travels with the booking's batch instead of in a
// round trip of its own (the queue sends it at most once every 100 ms,
// after a job insert). Should the queue name it otherwise, it is sent at
// once, in a round trip of its own.
const riverNotify = "-- name: PGNotifyMany"

// queued is where a hook's queued statements end in the batch (one past
// its last), to name it in an error of theirs.
type queued struct {
	name string
	end  int
}

// queue runs the hooks' Queue steps, each queuing on later; it returns
// where each hook's statements end and the hooks whose After step is to
// run instead.
func (s *Service) queue(ctx context.Context, tx pgx.Tx, later queue, ch Change) ([]queued, []TxHook, error) {
	var q []queued
	var after []TxHook
	for _, h := range s.hooks {
		if h.Queue == nil {
			if h.After != nil {
				after = append(after, h)
			}
			continue
		}
		err := h.Queue(ctx, tx, later, ch)
		switch {
		case errors.Is(err, ErrNotQueued):
			if h.After != nil {
				after = append(after, h)
			}
		case err != nil:
			return nil, nil, fmt.Errorf("%s: %w", h.Name, err)
		default:
			q = append(q, queued{name: h.Name, end: later.b.Len()})
		}
	}
	return q, after, nil
}

// sendBooking sends the batch b and reads its answers: first the
// guards' (up to guards), then the locks' (up to locks), then the hooks'
// statements, then BookingCreate's count, then, if queued,
// BookingWritten's and COMMIT's. Nothing is read past a count other than
// 1: BookingWritten then failed the transaction, and its COMMIT was
// never run. n is the count.
func sendBooking(ctx context.Context, tx pgx.Tx, b *pgx.Batch, guards, locks int, hooks []queued) (n int64, err error) {
	br := tx.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && n == 1 {
			err = cerr
		}
	}()
	for range guards {
		if _, err := br.Exec(); err != nil {
			return 0, err
		}
	}
	for range locks - guards {
		if _, err := br.Exec(); err != nil {
			return 0, fmt.Errorf("lock patient: %w", err)
		}
	}
	i := locks
	for _, h := range hooks {
		for ; i < h.end; i++ {
			if _, err := br.Exec(); err != nil {
				return 0, fmt.Errorf("%s: %w", h.name, err)
			}
		}
	}
	if err := br.QueryRow().Scan(&n); err != nil {
		return 0, err
	}
	if n != 1 {
		return n, errNotWritten
	}
	for range b.Len() - i - 1 {
		if _, err := br.Exec(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// queue is a db.DBTX that queues the generated statements on a batch
// instead of running them; their results are read from the batch.
type queue struct{ b *pgx.Batch }

func (q queue) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	q.b.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

func (q queue) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("booking: a batch queues no multi-row queries")
}

func (q queue) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	q.b.Queue(sql, args...)
	return queuedRow{}
}

// SendBatch queues the statements of another batch (a generated
// :batchexec query's) on this one; its results read as empty.
func (q queue) SendBatch(_ context.Context, other *pgx.Batch) pgx.BatchResults {
	for _, s := range other.QueuedQueries {
		q.b.Queue(s.SQL, s.Arguments...)
	}
	return queuedResults{}
}

type queuedRow struct{}

func (queuedRow) Scan(...any) error { return nil }

type queuedResults struct{}

func (queuedResults) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, nil }
func (queuedResults) Query() (pgx.Rows, error) {
	return nil, errors.New("booking: a batch queues no multi-row queries")
}
func (queuedResults) QueryRow() pgx.Row { return queuedRow{} }
func (queuedResults) Close() error      { return nil }
func (queuedResults) Tx() pgx.Tx        { return nil }
