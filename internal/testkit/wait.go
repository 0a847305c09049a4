package testkit

import (
	"context"
	"net"
	"strings"
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

// Jobs names the jobs Drained waits for. The zero value is every job in
// every queue, judged by the database's time.
type Jobs struct {
	// Queues are the queues looked at; none is every queue.
	Queues []string
	// Kinds are the kinds of job looked at; none is every kind.
	Kinds []string
	// Orphans are jobs a killed process left running, which no live one
	// will run until the queue rescues them, once the outbox's
	// RescueStuckJobsAfter (about five minutes) has passed. A test that
	// kills a process takes them with Running right after the kill,
	// before a successor starts.
	Orphans []int64
	// Clock is the time the queue's clients were given (their
	// TestConfig.Time): a scheduled job is due when its time has come by
	// this clock, as the queue's scheduler judges it, not by the
	// database's. Nil is the database's now().
	Clock interface{ Now() time.Time }
}

// Drained waits (up to a minute) until no job that jobs names is still to
// run: available, running, waiting for a retry, or scheduled and due. A
// test that says "exactly one" counts after this, not after a fixed sleep:
// a duplicate that comes late is still in the queue, and is waited for.
// A job that makes another makes it before it completes, so the queues
// are never seen empty between the two when both are looked at.
func Drained(t testing.TB, pool *pgxpool.Pool, jobs Jobs) {
	t.Helper()
	queues, kinds, orphans := jobs.Queues, jobs.Kinds, jobs.Orphans
	if queues == nil {
		queues = []string{}
	}
	if kinds == nil {
		kinds = []string{}
	}
	if orphans == nil {
		orphans = []int64{}
	}
	const left = `FROM river_job
		WHERE (cardinality($1::text[]) = 0 OR queue = ANY($1::text[]))
		  AND (cardinality($2::text[]) = 0 OR kind = ANY($2::text[]))
		  AND NOT id = ANY($3::bigint[])
		  AND (state IN ('available', 'running', 'retryable', 'pending')
		       OR (state = 'scheduled' AND scheduled_at <= coalesce($4::timestamptz, now())))`
	now := func() *time.Time { // the database's now() when nil
		if jobs.Clock == nil {
			return nil
		}
		c := jobs.Clock.Now()
		return &c
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) "+left, queues, kinds, orphans, now()).Scan(&n); err != nil {
			t.Fatalf("jobs left in %q: %v", queues, err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			// What is left, so that a failure says which job and why.
			var jobsLeft []string
			rows, err := pool.Query(context.Background(), `SELECT format('%s #%s %s attempt %s, scheduled %s (database now %s) %s',
				kind, id, state, attempt, scheduled_at, now(), coalesce(errors[cardinality(errors)]->>'error', ''))
				`+left+` ORDER BY id LIMIT 10`, queues, kinds, orphans, now())
			if err == nil {
				jobsLeft, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			t.Fatalf("timed out after 1m0s waiting for the job queues %q to be drained: %d left (%v):\n%s",
				queues, n, err, strings.Join(jobsLeft, "\n"))
		}
	}
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
