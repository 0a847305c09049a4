package booking

// Transactions that PostgreSQL may abort for a deadlock.

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// deadlockTries is how often a transaction is tried when PostgreSQL picks
// it as a deadlock's victim. Two bookings racing for overlapping times can
// each find the other's uncommitted row in the exclusion constraint's index
// and wait for each other; PostgreSQL aborts one of them (40P01) after
// deadlock_timeout. Nothing of it was written, so it is simply run again,
// and the second run sees the winner's committed row: a clean SLOT_TAKEN.
const deadlockTries = 4

// inTx runs f in a transaction on the pool, again when PostgreSQL aborted
// it as a deadlock's victim.
func (s *Service) inTx(ctx context.Context, f func(tx pgx.Tx) error) error {
	return retried(ctx, func() error { return pgx.BeginFunc(ctx, s.pool, f) })
}

// retried runs a unit of work that PostgreSQL commits or aborts whole (a
// transaction, or a batch in its implicit one), again when it was aborted
// as a deadlock's victim (40P01) or for a serialization failure (40001).
func retried(ctx context.Context, run func() error) error {
	var err error
	for range deadlockTries {
		err = run()
		if !isSQLState(err, "40P01", "40001") || ctx.Err() != nil {
			return err
		}
	}
	return err
}
