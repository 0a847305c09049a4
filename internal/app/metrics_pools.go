package app

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/holds"
)

// registerPoolMetrics exposes the health of the PostgreSQL and Redis pools
// and the hold sweeper's work, read when /metrics is scraped.
func registerPoolMetrics(reg prometheus.Registerer, pool *pgxpool.Pool, rdb redis.UniversalClient, store *holds.Store) {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	if pool != nil {
		pg := func(f func(*pgxpool.Stat) float64) func() float64 { return func() float64 { return f(pool.Stat()) } }
		reg.MustRegister(
			gauge("clinic_pg_pool_connections", "PostgreSQL connections open (idle and in use).", pg(func(s *pgxpool.Stat) float64 { return float64(s.TotalConns()) })),
			gauge("clinic_pg_pool_connections_in_use", "PostgreSQL connections in use.", pg(func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) })),
			gauge("clinic_pg_pool_connections_max", "The pool's connection limit (DB_MAX_CONNS).", pg(func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) })),
			counter("clinic_pg_pool_acquires_total", "Connections taken from the pool.", pg(func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) })),
			counter("clinic_pg_pool_acquire_waits_total", "Acquires that had to wait for a connection: the pool is too small or PostgreSQL too slow.", pg(func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) })),
			counter("clinic_pg_pool_acquire_wait_seconds_total", "Time spent acquiring connections.", pg(func(s *pgxpool.Stat) float64 { return s.AcquireDuration().Seconds() })),
			counter("clinic_pg_pool_acquires_cancelled_total", "Acquires given up (the request ended first).", pg(func(s *pgxpool.Stat) float64 { return float64(s.CanceledAcquireCount()) })),
			counter("clinic_pg_pool_new_connections_total", "Connections opened (a rising rate after a PostgreSQL restart is the pool recovering).", pg(func(s *pgxpool.Stat) float64 { return float64(s.NewConnsCount()) })),
		)
	}
	if rdb != nil {
		rs := func(f func(*redis.PoolStats) float64) func() float64 {
			return func() float64 { return f(rdb.PoolStats()) }
		}
		reg.MustRegister(
			gauge("clinic_redis_pool_connections", "Redis connections open.", rs(func(s *redis.PoolStats) float64 { return float64(s.TotalConns) })),
			gauge("clinic_redis_pool_connections_idle", "Redis connections idle.", rs(func(s *redis.PoolStats) float64 { return float64(s.IdleConns) })),
			counter("clinic_redis_pool_hits_total", "Commands that found an idle connection.", rs(func(s *redis.PoolStats) float64 { return float64(s.Hits) })),
			counter("clinic_redis_pool_misses_total", "Commands that had to open a connection.", rs(func(s *redis.PoolStats) float64 { return float64(s.Misses) })),
			counter("clinic_redis_pool_timeouts_total", "Commands that gave up waiting for a connection: the pool is too small (REDIS_POOL_SIZE) or Redis too slow.", rs(func(s *redis.PoolStats) float64 { return float64(s.Timeouts) })),
		)
	}
	if store != nil {
		sw := func(f func(holds.SweepStats) float64) func() float64 {
			return func() float64 { return f(store.SweepStats()) }
		}
		reg.MustRegister(
			counter("clinic_sweeper_runs_total", "Hold expiry sweeps this instance ran (one a second).", sw(func(s holds.SweepStats) float64 { return float64(s.Sweeps) })),
			counter("clinic_sweeper_released_total", "Expired holds this instance released and announced.", sw(func(s holds.SweepStats) float64 { return float64(s.Released) })),
			counter("clinic_sweeper_errors_total", "Sweeps that failed (Redis unreachable): holds are then released late.", sw(func(s holds.SweepStats) float64 { return float64(s.Errors) })),
			gauge("clinic_sweeper_last_duration_seconds", "How long the last sweep took.", sw(func(s holds.SweepStats) float64 { return s.Last.Seconds() })),
		)
	}
}
