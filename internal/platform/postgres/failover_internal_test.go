package postgres

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// testURL is the test database (testkit, which would say so, imports
// this package).
func testURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	return u
}

func TestFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("SwitchRunsTheCallbacksOnce", func(t *testing.T) {
		f := NewFailover(nil)
		f.server = "5432@the old primary" // as if connected to another server before
		calls := 0
		f.OnSwitch(func() { calls++ })
		pool, err := ConnectFollowing(ctx, testURL(t), 2, 0, f)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if calls != 1 || f.Switches() != 1 || f.Server() == "5432@the old primary" || f.Server() == "" {
			t.Fatalf("after connecting to another server: %d calls, %d switches, server %q", calls, f.Switches(), f.Server())
		}
		// More connections to the same server are no switch.
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = pool.Exec(ctx, "SELECT pg_sleep(0.05)")
			}()
		}
		wg.Wait()
		if calls != 1 {
			t.Fatalf("%d calls after more connections to the same server", calls)
		}
	})

	t.Run("ReadOnlyServerResetsThePool", func(t *testing.T) {
		f := NewFailover(nil)
		pool, err := ConnectFollowing(ctx, testURL(t), 4, 0, f)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = pool.Exec(ctx, "SELECT pg_sleep(0.1)")
			}()
		}
		wg.Wait()
		if n := pool.Stat().TotalConns(); n < 2 {
			t.Fatalf("%d connections open, want several", n)
		}
		// A write where the server no longer takes them, as on a demoted
		// primary.
		err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "CREATE TABLE failover_probe (id int)")
			return err
		})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "25006" || !Unavailable(err) {
			t.Fatalf("a write in a read-only transaction: %v (Unavailable %v)", err, Unavailable(err))
		}
		deadline := time.Now().Add(3 * time.Second)
		for pool.Stat().TotalConns() > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections still open after the read-only error", pool.Stat().TotalConns())
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("ARequestDeadlineIsNotALostServer", func(t *testing.T) {
		if serverGone(context.DeadlineExceeded) || serverGone(context.Canceled) {
			t.Fatal("a request's own deadline reset the pool")
		}
	})
}
