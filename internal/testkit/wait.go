package testkit

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
)

// WaitFor polls cond every 20 ms until it holds, and fails the test with
// what after within.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
	}
}

// Drained waits (up to a minute) until the job queue named queue (every
// queue if queue is "") has no job of the given kinds (of any kind if none are given) that is still to
// run: available, running, waiting for a retry, or scheduled and due. A
// test that says "exactly one" counts after this, not after a fixed sleep:
// a duplicate that comes late is still in the queue, and is waited for.
// A job that makes another makes it before it completes, so the queue is
// never seen empty between the two.
func Drained(t testing.TB, pool *pgxpool.Pool, queue string, kinds ...string) {
	t.Helper()
	DrainedBut(t, pool, queue, nil, kinds...)
}

// DrainedBut is Drained, but for the jobs orphans: jobs a killed process
// left running, which no live one will run until the queue rescues them
// (an hour later). A test that kills a process takes them with Running
// right after the kill, before a successor starts.
func DrainedBut(t testing.TB, pool *pgxpool.Pool, queue string, orphans []int64, kinds ...string) {
	t.Helper()
	if kinds == nil {
		kinds = []string{}
	}
	if orphans == nil {
		orphans = []int64{}
	}
	var left int
	WaitFor(t, time.Minute, "the job queue "+queue+" to be drained", func() bool {
		err := pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job
			WHERE ($1 = '' OR queue = $1) AND (cardinality($2::text[]) = 0 OR kind = ANY($2::text[]))
			  AND NOT id = ANY($3::bigint[])
			  AND (state IN ('available', 'running', 'retryable', 'pending')
			       OR (state = 'scheduled' AND scheduled_at <= now()))`, queue, kinds, orphans).Scan(&left)
		if err != nil {
			t.Fatalf("jobs left in %s: %v", queue, err)
		}
		return left == 0
	})
}

// Running is the ids of the jobs running now, in every queue.
func Running(t testing.TB, pool *pgxpool.Pool) []int64 {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id FROM river_job WHERE state = 'running'`)
	if err != nil {
		t.Fatalf("running jobs: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatalf("running jobs: %v", err)
	}
	return ids
}

// AuditCount is the number of the clinic's audit rows.
func AuditCount(t testing.TB, pool *pgxpool.Pool, clinicID uuid.UUID) int64 {
	t.Helper()
	n, err := db.New(pool).AuditCountByClinic(context.Background(), clinicID)
	if err != nil {
		t.Fatalf("count audit rows: %v", err)
	}
	return n
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago, for a
// process a test starts (a Redis, a server) to listen on. In-process
// servers listen on "127.0.0.1:0" themselves instead, which has no gap.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
