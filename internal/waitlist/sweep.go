package waitlist

// The sweep: what no job moves on any more is moved on once a minute.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/clinic/booking/internal/db"
)

// SweepEvery is how often the sweep runs (in one process of all).
const SweepEvery = time.Minute

type sweepArgs struct{}

func (sweepArgs) Kind() string { return "waitlist_sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	s *Service
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	return w.s.Sweep(ctx)
}

// Sweep lapses the places whose last day is over (in their clinic's
// zone) and those nobody confirmed within ConfirmWithin, and steps on every opening that no job moves on: an offer whose
// follow-up job was lost or gave up, or a freed time whose first job did.
// Each step locks its opening, so a sweep racing a job makes one offer.
func (s *Service) Sweep(ctx context.Context) error {
	return s.sweep(ctx, uuid.NullUUID{})
}

// sweep is Sweep over one clinic, or over every clinic when clinic is
// null (as the periodic job runs it). Tests sweep their own clinic only:
// they run in parallel on one database, each on a clock of its own, and a
// sweep at one test's time would move on the others' offers.
func (s *Service) sweep(ctx context.Context, clinic uuid.NullUUID) error {
	now := s.now()
	q := db.New(s.pool)
	if _, err := q.WaitlistLapsePast(ctx, db.WaitlistLapsePastParams{Now: now, ClinicID: clinic}); err != nil {
		return fmt.Errorf("lapse places whose days are over: %w", err)
	}
	if err := s.lapseUnconfirmed(ctx, q, clinic); err != nil {
		return err
	}
	ids, err := q.WaitlistOpeningsAdrift(ctx, db.WaitlistOpeningsAdriftParams{
		ExpiredBefore: now.Add(-time.Minute), QuietSince: now.Add(-2 * time.Minute), ClinicID: clinic,
	})
	if err != nil {
		return fmt.Errorf("find openings adrift: %w", err)
	}
	for _, id := range ids {
		err := s.Step(ctx, id, uuid.Nil)
		var snooze *river.JobSnoozeError
		if err != nil && !errors.As(err, &snooze) {
			s.log.Warn("waitlist: step an opening adrift", "err", err)
		}
	}
	return nil
}
