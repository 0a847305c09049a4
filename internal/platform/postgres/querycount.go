package postgres

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

type queryCountKey struct{}

// CountQueries returns a context under which every query the pool runs is
// counted (BEGIN and COMMIT included), for the metric of answers given
// without a database round trip.
func CountQueries(ctx context.Context) context.Context {
	return context.WithValue(ctx, queryCountKey{}, new(atomic.Int32))
}

// QueriesIn is how many queries ran under ctx since CountQueries; -1 when
// ctx does not count.
func QueriesIn(ctx context.Context) int {
	if n, ok := ctx.Value(queryCountKey{}).(*atomic.Int32); ok {
		return int(n.Load())
	}
	return -1
}

// queryCounter is the pool's tracer: it counts, and shows the Failover
// (when there is one) every error, so that a lost server is noticed.
type queryCounter struct{ failover *Failover }

func (queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if n, ok := ctx.Value(queryCountKey{}).(*atomic.Int32); ok {
		n.Add(1)
	}
	return ctx
}

func (c queryCounter) TraceQueryEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	if c.failover != nil {
		c.failover.lost(d.Err)
	}
}

// A batch is one round trip, and counts as one query.
func (c queryCounter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return c.TraceQueryStart(ctx, conn, pgx.TraceQueryStartData{})
}

func (queryCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (c queryCounter) TraceBatchEnd(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchEndData) {
	if c.failover != nil {
		c.failover.lost(d.Err)
	}
}
