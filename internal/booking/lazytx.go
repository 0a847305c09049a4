package booking

// A transaction begun with its first statement: `begin` travels in one
// round trip with what the transaction sends first, instead of in one of
// its own.

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// lazyTx is a pgx.Tx on one connection that sends its `begin` with its
// first statement, in one batch: a batch runs as one implicit
// transaction, which a `begin` in it turns into the explicit one that
// the statements after it, and every later round trip, run in. A
// transaction that sends nothing is never begun: its Commit and its
// Rollback send nothing either.
//
// What it does not do: pseudo-nested transactions (Begin) and large
// objects, which nothing on a booking's path uses.
type lazyTx struct {
	conn   *pgx.Conn
	begun  bool
	closed bool
	// later, when set, may take a statement given to Exec once the
	// transaction has begun and queue it to be sent with a later round
	// trip of the transaction (true): Exec then returns at once, without
	// a result. A statement it takes must be one nothing reads back and
	// whose error may fail the transaction later instead.
	later func(sql string, args []any) bool
}

func newLazyTx(conn *pgx.Conn) *lazyTx { return &lazyTx{conn: conn} }

var errLazyNested = errors.New("booking: a lazily begun transaction has no savepoints")

// opening is the batch that begins the transaction with the statement
// sql, or nil when it has begun (the statement is then sent by itself).
func (t *lazyTx) opening(sql string, args []any) *pgx.Batch {
	if t.begun {
		return nil
	}
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue(sql, args...)
	return b
}

// start sends b, which begins the transaction, and reads its `begin`.
func (t *lazyTx) start(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	br := t.conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return failedResults{err}
	}
	t.begun = true
	return br
}

func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	b := t.opening(sql, args)
	if b == nil {
		if t.later != nil && t.later(sql, args) {
			return pgconn.CommandTag{}, nil
		}
		return t.conn.Exec(ctx, sql, args...)
	}
	br := t.start(ctx, b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	b := t.opening(sql, args)
	if b == nil {
		return t.conn.Query(ctx, sql, args...)
	}
	br := t.start(ctx, b)
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := t.Query(ctx, sql, args...)
	return lazyRow{rows: rows, err: err}
}

// SendBatch sends b, with `begin` before its statements when it is the
// transaction's first round trip.
func (t *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.closed {
		return failedResults{pgx.ErrTxClosed}
	}
	if t.begun {
		return t.conn.SendBatch(ctx, b)
	}
	opening := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+1)}
	opening.Queue("begin")
	opening.QueuedQueries = append(opening.QueuedQueries, b.QueuedQueries...)
	return t.start(ctx, opening)
}

func (t *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if t.closed {
		return 0, pgx.ErrTxClosed
	}
	if !t.begun {
		if _, err := t.conn.Exec(ctx, "begin"); err != nil {
			return 0, err
		}
		t.begun = true
	}
	return t.conn.CopyFrom(ctx, table, columns, src)
}

func (t *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.conn.Prepare(ctx, name, sql)
}

func (t *lazyTx) Begin(context.Context) (pgx.Tx, error) { return nil, errLazyNested }

func (t *lazyTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *lazyTx) Conn() *pgx.Conn { return t.conn }

// Commit commits as pgx's own transactions do; one never begun has
// nothing to commit.
func (t *lazyTx) Commit(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	if !t.begun {
		return nil
	}
	tag, err := t.conn.Exec(ctx, "commit")
	if err != nil {
		if t.conn.PgConn().TxStatus() != 'I' {
			_ = t.conn.Close(ctx)
		}
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Rollback rolls back as pgx's own transactions do; a connection whose
// rollback failed is closed, its state unknown.
func (t *lazyTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	if !t.begun {
		return nil
	}
	if _, err := t.conn.Exec(ctx, "rollback"); err != nil {
		_ = t.conn.Close(ctx)
		return err
	}
	return nil
}

// committed marks the transaction ended by a COMMIT its last batch sent.
func (t *lazyTx) committed() { t.closed = true }

// batchRows are the rows of a batch's last statement: closing them reads
// the end of the batch.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *batchRows) Close() {
	if r.br == nil {
		return
	}
	r.Rows.Close()
	r.err = r.br.Close()
	r.br = nil
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

// lazyRow is one row of a query, as pgx's QueryRow reads it.
type lazyRow struct {
	rows pgx.Rows
	err  error
}

func (r lazyRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// failedResults are the results of a batch that could not be sent.
type failedResults struct{ err error }

func (f failedResults) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedResults) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedResults) QueryRow() pgx.Row                { return lazyRow{err: f.err} }
func (f failedResults) Close() error                     { return f.err }
func (f failedResults) Tx() pgx.Tx                       { return nil }
