package privacy

// The daily run: a job of the queue, inserted once a day by the one
// process that leads the queue, and unique per day, so that a change of
// leader on the day inserts no second one.

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/clinic/booking/internal/outbox"
)

// RunAt is the time of day (UTC) of the daily run: the quiet of a
// European night.
const RunAt = 3 * time.Hour

// DailyArgs is the daily run's job; the queue's leader inserts it, a
// caller may too.
type DailyArgs struct{}

func (DailyArgs) Kind() string { return "privacy_retention" }

// InsertOpts: one run a day, whoever inserts it.
func (DailyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: 24 * time.Hour}}
}

type retentionWorker struct {
	river.WorkerDefaults[DailyArgs]
	r *Retention
}

func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[DailyArgs]) error {
	_, err := w.r.Run(ctx, "")
	return err
}

// Timeout: a first run over years of bookings takes longer than a send.
func (w *retentionWorker) Timeout(*river.Job[DailyArgs]) time.Duration { return time.Hour }

// Jobs is the daily run, for the outbox's queue to work
// (outbox.Outbox.Start).
func (r *Retention) Jobs() outbox.Jobs {
	return outbox.Jobs{
		Register: func(w *river.Workers) error { return river.AddWorkerSafely(w, &retentionWorker{r: r}) },
		Periodic: []outbox.Periodic{{Schedule: daily{at: RunAt}, Args: func() river.JobArgs { return DailyArgs{} }}},
	}
}

// daily is a schedule of once a day at a time of day, UTC. An interval of
// 24 hours would count from each start of the leading process, and a
// server restarted more often than daily would never run it.
type daily struct{ at time.Duration }

func (d daily) Next(current time.Time) time.Time {
	day := current.UTC().Truncate(24 * time.Hour)
	next := day.Add(d.at)
	if !next.After(current) {
		next = next.Add(24 * time.Hour)
	}
	return next
}

// RetentionStats counts the rows every run of this process changed, by
// kind: what the metrics show.
type RetentionStats struct {
	mu     sync.Mutex
	counts map[Count]int64 // keyed by kind and anonymised, N zero
}

func newRetentionStats() *RetentionStats { return &RetentionStats{counts: map[Count]int64{}} }

func (s *RetentionStats) add(cs []Count) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cs {
		n := c.N
		c.N = 0
		s.counts[c] += n
	}
}

// Each calls f with every kind counted so far and its total.
func (s *RetentionStats) Each(f func(c Count)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, n := range s.counts {
		c.N = n
		f(c)
	}
}
