package privacy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/testkit"
)

// The daily job runs the retention in the queue's worker, and is inserted
// once a day however many times it is asked for.
func TestRetentionJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := freshPool(t)
	h := newHeldOn(t, pool)
	old := h.book(t, "Otto Old", "otto@example.org", "")
	// The clock stands a year and a day past the booking.
	clock := &testkit.Clock{}
	clock.Set(old.End.AddDate(1, 0, 1))
	r := privacy.NewRetention(pool, privacy.RetentionConfig{Now: clock.Now})
	ob, err := outbox.New(pool, outbox.Config{Workers: 1, Queue: "mail_" + strings.ReplaceAll(uuid.NewString(), "-", "")})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	if err := ob.Start(run, r.Jobs()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		done, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = ob.Stop(done)
		stop()
	})
	var skipped []bool
	for range 2 {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			res, err := ob.InsertJob(ctx, tx, privacy.DailyArgs{}, privacy.DailyArgs{}.InsertOpts())
			if err == nil {
				skipped = append(skipped, res.UniqueSkippedAsDuplicate)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(skipped) != 2 || skipped[0] || !skipped[1] {
		t.Fatalf("two inserts on one day: skipped %v, want the second only", skipped)
	}
	testkit.WaitFor(t, 20*time.Second, "the daily job anonymised the booking", func() bool {
		return h.count(t, `SELECT count(*) FROM bookings WHERE id = $1 AND anonymised_at IS NOT NULL`, old.ID) == 1
	})
	if n := h.count(t, `SELECT count(*) FROM river_job WHERE kind = 'privacy_retention'`); n != 1 {
		t.Errorf("%d daily jobs, want 1", n)
	}
}
