package checkout_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockstep is a pgx tracer for a pool of a test's own. Two requests, each
// named by its context (see as), meet before the first statement of
// theirs whose SQL contains match; then the first named in order runs it,
// and the second runs it once the first's has returned. Both are inside
// their transactions at once, and the second queues inside PostgreSQL
// behind whatever the first's statement took (a row lock, an index
// entry): a race with a known winner, without sleeps.
type lockstep struct {
	t         *testing.T
	match     string
	order     [2]string
	mu        sync.Mutex
	seen      map[string]bool
	both      chan struct{} // closed when both requests reached the statement
	firstDone chan struct{} // closed when the first one's statement returned
}

type whoKey struct{}

type steppedKey struct{}

// as names the request that runs with ctx, for lockstep.
func as(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, whoKey{}, who)
}

// newLockstep returns a pool on pool's database whose statements are
// traced by a lockstep on match, first before second.
func newLockstep(t *testing.T, pool *pgxpool.Pool, match, first, second string) (*pgxpool.Pool, *lockstep) {
	t.Helper()
	l := &lockstep{t: t, match: match, order: [2]string{first, second}, seen: map[string]bool{},
		both: make(chan struct{}), firstDone: make(chan struct{})}
	cfg := pool.Config()
	cfg.ConnConfig.Tracer = l
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, l
}

func (l *lockstep) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	who, _ := ctx.Value(whoKey{}).(string)
	if who == "" || !strings.Contains(d.SQL, l.match) {
		return ctx
	}
	l.mu.Lock()
	again := l.seen[who]
	l.seen[who] = true
	if !again && len(l.seen) == 2 {
		close(l.both)
	}
	l.mu.Unlock()
	if again {
		return ctx
	}
	l.wait(l.both, who+": the other request never reached "+l.match)
	if who == l.order[1] {
		l.wait(l.firstDone, who+": "+l.order[0]+"'s statement never returned")
	}
	return context.WithValue(ctx, steppedKey{}, who)
}

func (l *lockstep) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if who, _ := ctx.Value(steppedKey{}).(string); who == l.order[0] {
		close(l.firstDone)
	}
}

// met reports whether both requests reached the statement.
func (l *lockstep) met() bool {
	select {
	case <-l.both:
		return true
	default:
		return false
	}
}

func (l *lockstep) wait(ch <-chan struct{}, failure string) {
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		l.t.Errorf("lockstep: %s", failure)
	}
}
