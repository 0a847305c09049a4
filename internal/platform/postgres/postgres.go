// Package postgres opens the connection pool, follows the server it
// reaches across a failover (Failover), and applies the embedded
// migrations.
package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/clinic/booking/migrations"
)

// Connect opens a pool with explicit sizes (pgxpool's default of
// max(4, NumCPU) is far too small for a booking burst) and checks it answers.
func Connect(ctx context.Context, url string, maxConns, minConns int32) (*pgxpool.Pool, error) {
	return ConnectFollowing(ctx, url, maxConns, minConns, nil)
}

// ConnectFollowing is Connect with f following the server the pool
// reaches (nil: not followed). The server uses it, so that it notices a
// failover; commands and tests use Connect.
func ConnectFollowing(ctx context.Context, url string, maxConns, minConns int32, f *Failover) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	cfg.MaxConns = maxConns
	cfg.MinConns = minConns
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.HealthCheckPeriod = 15 * time.Second
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	cfg.ConnConfig.Tracer = queryCounter{failover: f} // see CountQueries
	if f != nil {
		cfg.AfterConnect = f.afterConnect
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	if f != nil {
		f.pool.Store(pool)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("reach PostgreSQL: %w", err)
	}
	return pool, nil
}

// NewMigrator builds a goose provider over the embedded migrations. The
// session lock lets several instances start at once: one migrates, the
// others wait and find nothing to do. A waiting instance asks for the lock
// every second (goose's default of five would hold each start of a rolling
// deployment that long) and gives up after ten minutes, the longest a
// migration may run while instances start.
func NewMigrator(pool *pgxpool.Pool, logger *slog.Logger) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 600))
	if err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	opts := []goose.ProviderOption{goose.WithSessionLocker(locker)}
	if logger != nil {
		opts = append(opts, goose.WithSlog(logger))
	}
	p, err := goose.NewProvider(goose.DialectPostgres, stdlib.OpenDBFromPool(pool), migrations.FS, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// Migrate applies every pending migration.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	p, err := NewMigrator(pool, logger)
	if err != nil {
		return err
	}
	defer p.Close()
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	for _, r := range results {
		if logger != nil {
			logger.Info("migration applied", "version", r.Source.Version, "duration", r.Duration)
		}
	}
	_, err = MigrateQueue(ctx, pool, logger)
	return err
}

// MigrateQueue applies the job queue's own migrations (River keeps its
// tables, river_job and its companions, under its own version table) and
// says how many it applied.
func MigrateQueue(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) (int, error) {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet()})
	if err != nil {
		return 0, fmt.Errorf("job queue migrator: %w", err)
	}
	// Under a lock held by a connection of its own (some of the queue's
	// migrations cannot share one transaction): instances starting
	// together apply them once, the others wait and find nothing to do.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("job queue migrations: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", queueMigrationLock); err != nil {
		return 0, fmt.Errorf("job queue migrations lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", queueMigrationLock)
	}()
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return 0, fmt.Errorf("apply job queue migrations: %w", err)
	}
	for _, v := range res.Versions {
		if logger != nil {
			logger.Info("job queue migration applied", "version", v.Version, "name", v.Name, "duration", v.Duration)
		}
	}
	return len(res.Versions), nil
}

// queueMigrationLock is the advisory lock key of the job queue's
// migrations ("rivermig" in ASCII).
const queueMigrationLock int64 = 0x7269766572_6d6967

// ResetQueue rolls back every job queue migration: its tables are gone.
func ResetQueue(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet()})
	if err != nil {
		return fmt.Errorf("job queue migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: -1}); err != nil {
		return fmt.Errorf("roll back job queue migrations: %w", err)
	}
	return nil
}

// quiet is a logger that drops everything: the migrator's own lines
// would repeat what Migrate logs.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// ConnectMigrated opens a pool and applies every pending migration, for
// commands and tests that may run before the first serve.
func ConnectMigrated(ctx context.Context, url string, maxConns, minConns int32) (*pgxpool.Pool, error) {
	pool, err := Connect(ctx, url, maxConns, minConns)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, pool, nil); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}
