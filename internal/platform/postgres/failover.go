package postgres

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Failover follows which PostgreSQL server the pool's connections reach.
// Behind a multi-host DATABASE_URL with target_session_attrs=read-write
// (pg_auto_failover's formation URL), a new connection goes to whichever
// node accepts writes: after a failover, the promoted standby. Every new
// connection asks its server who it is (port and start time); when the
// answer changes (a failover, or a restart of the one server) the
// callbacks given to OnSwitch run, before the connection serves anything:
// what this process derived from the old server (cached slot lists, live
// views, the streams' state) may miss a commit whose answer was lost
// with it, such as a booking committed just before the primary died.
//
// An error that says the server went away or no longer takes writes
// (Unavailable) resets the pool: every connection still open to it is
// closed at once, rather than each failing one more request.
type Failover struct {
	logger *slog.Logger
	pool   atomic.Pointer[pgxpool.Pool]

	mu       sync.Mutex
	server   string // the identity of the server last connected to
	onSwitch []func()
	switches int

	lastReset atomic.Int64 // unix nanoseconds of the last reset
}

// NewFailover follows a pool; pass it to ConnectFollowing.
func NewFailover(logger *slog.Logger) *Failover {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Failover{logger: logger}
}

// OnSwitch registers fn to run each time new connections reach another
// server than before (not at the first connection). It runs on the
// connecting goroutine and must not block.
func (f *Failover) OnSwitch(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onSwitch = append(f.onSwitch, fn)
}

// Server is the identity of the server new connections reach ("" before
// the first). It is the same on every instance connected to that server,
// so data cached under it in a shared store is retired by a switch for
// all of them at once.
func (f *Failover) Server() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.server
}

// Switches is how many times the server changed since the start.
func (f *Failover) Switches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.switches
}

// serverIdentity is asked of every new connection: the port tells the
// nodes of a formation apart, the start time a restart of one.
const serverIdentity = `SELECT current_setting('port') || '@' || pg_postmaster_start_time()::text`

// afterConnect learns who the new connection's server is.
func (f *Failover) afterConnect(ctx context.Context, conn *pgx.Conn) error {
	var id string
	if err := conn.QueryRow(uncounted{ctx}, serverIdentity).Scan(&id); err != nil {
		return err
	}
	f.mu.Lock()
	prev := f.server
	f.server = id
	var fns []func()
	if prev != "" && prev != id {
		f.switches++
		fns = append(fns, f.onSwitch...)
	}
	f.mu.Unlock()
	if len(fns) == 0 {
		return nil
	}
	f.logger.Warn("PostgreSQL server changed (failover or restart); retiring what was derived from the old one",
		"from", prev, "to", id)
	for _, fn := range fns {
		fn()
	}
	// Connections still open to the old server (a demoted primary still
	// answers, read-only) go now.
	f.reset()
	return nil
}

// lost is called for every error of a query: one that says the server is
// gone or read-only resets the pool.
func (f *Failover) lost(err error) {
	if err != nil && serverGone(err) {
		f.reset()
	}
}

// serverGone is the part of Unavailable that says a connection's server
// is gone or no longer the primary; a request's own deadline or
// cancellation says nothing about the server.
func serverGone(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return serverGoneCode(pe.Code)
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED)
}

// reset closes the pool's connections, at most once a second: a burst of
// errors from the same loss resets once.
func (f *Failover) reset() {
	now := time.Now().UnixNano()
	last := f.lastReset.Load()
	if now-last < int64(time.Second) || !f.lastReset.CompareAndSwap(last, now) {
		return
	}
	if p := f.pool.Load(); p != nil {
		// Not on the caller's goroutine: it may be the pool's own
		// (a connection being made).
		go p.Reset()
	}
}

// uncounted hides CountQueries' counter: the identity query is the
// pool's business, not the request's.
type uncounted struct{ context.Context }

func (u uncounted) Value(key any) any {
	if _, ok := key.(queryCountKey); ok {
		return nil
	}
	return u.Context.Value(key)
}

// Unavailable reports whether err means PostgreSQL could not be reached,
// went away mid-request (a restart, a failover, a dropped connection) or
// is no longer the primary (a read-only transaction on a demoted node):
// the request can be retried, so it is a 503, not an internal error.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return serverGoneCode(pe.Code)
	}
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// serverGoneCode reports whether a SQLSTATE says the server went away or
// no longer takes writes: 08 (connection exception); 57P01-03 (admin
// shutdown, crash shutdown, cannot connect now: starting up or shutting
// down); 25006 (a write on a server that became a standby).
func serverGoneCode(code string) bool {
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03" || code == "25006"
}
