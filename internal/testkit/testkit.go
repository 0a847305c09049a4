// Package testkit gives tests real PostgreSQL and Redis: a database per test
// binary (or a fresh one on request), migrated, and row factories. Tests
// isolate themselves by creating their own clinic, so they can run in
// parallel against one database. It also holds the helpers every package's
// tests share, once: a settable Clock, the Together/Race barrier, WaitFor
// and Drained (job queues with nothing left to run), counters of queries
// (Queries) and Redis commands (Commands), AuditCount, AuditRows and
// CountAction, staff accounts (StaffUser), WantCode, Zone, FreePort, a
// mail server (SMTP), and a way to cut a Redis subscription
// (CutSubscription).
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/platform/redisx"
)

// DefaultTestDatabaseURL and DefaultTestRedisURL match what `make services` starts.
const (
	DefaultTestDatabaseURL = "postgres://postgres@127.0.0.1:54320/clinic_test?sslmode=disable"
	DefaultTestRedisURL    = "redis://127.0.0.1:63790/1"
)

// Queries counts the queries a pool runs (see CountedPool): a pgx tracer.
// With Only set, it counts only the queries whose context Only accepts
// (those of requests, say, and not of background work).
type Queries struct {
	atomic.Int64
	Only func(context.Context) bool
}

func (c *Queries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if c.Only == nil || c.Only(ctx) {
		c.Add(1)
	}
	return ctx
}
func (c *Queries) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A batch is one round trip, and counts as one query.
func (c *Queries) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return c.TraceQueryStart(ctx, nil, pgx.TraceQueryStartData{})
}
func (c *Queries) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *Queries) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// Commands counts the commands a Redis client sends, each command of a
// pipeline or transaction as one: a hook (client.AddHook). With Only set,
// it counts only the commands whose context Only accepts.
type Commands struct {
	atomic.Int64
	Only func(context.Context) bool
}

func (c *Commands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *Commands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c.Only == nil || c.Only(ctx) {
			c.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *Commands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if c.Only == nil || c.Only(ctx) {
			c.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

// CountedPool is a pool on pool's database whose queries are counted: a
// claim of "one round trip" becomes a test.
func CountedPool(t testing.TB, pool *pgxpool.Pool) (*pgxpool.Pool, *Queries) {
	t.Helper()
	cfg := pool.Config()
	n := &Queries{}
	cfg.ConnConfig.Tracer = n
	counted, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(counted.Close)
	return counted, n
}

func baseURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultTestDatabaseURL
}

var (
	shared     *pgxpool.Pool
	sharedErr  error
	sharedOnce sync.Once
)

// DB is a migrated database shared by the tests of one test binary.
func DB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	sharedOnce.Do(func() {
		// One database per test process: two runs of the same package at
		// once must not drop each other's database.
		prefix := "clinic_test_" + sanitize(filepath.Base(os.Args[0])) + "_"
		dropStale(prefix)
		name := prefix + strconv.Itoa(os.Getpid())
		var url string
		url, sharedErr = createDatabase(name)
		if sharedErr != nil {
			return
		}
		shared, sharedErr = openMigrated(url, 60)
	})
	if sharedErr != nil {
		t.Fatalf("test database: %v (is PostgreSQL running? `make services`)", sharedErr)
	}
	return shared
}

// FreshDB is a new, empty (unmigrated) database of the test's own, dropped
// at the end of the test. It returns the URL.
func FreshDB(t testing.TB) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "clinic_fresh_" + hex.EncodeToString(b)
	url, err := createDatabase(name)
	if err != nil {
		t.Fatalf("fresh database: %v", err)
	}
	t.Cleanup(func() { _ = dropDatabase(name) })
	return url
}

// dropStale removes the databases earlier test processes left behind.
func dropStale(prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, baseURL())
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1)", prefix)
	if err != nil {
		return
	}
	names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, n := range names {
		pid, err := strconv.Atoi(strings.TrimPrefix(n, prefix))
		if err != nil {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			continue // still running
		}
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)")
	}
}

func openMigrated(url string, maxConns int32) (*pgxpool.Pool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return postgres.ConnectMigrated(ctx, url, maxConns, 0)
}

// createDatabase drops and recreates a database next to the base one and
// returns its URL.
func createDatabase(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, baseURL())
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", err
	}
	u, err := url.Parse(baseURL())
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func dropDatabase(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, baseURL())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

var nonWord = regexp.MustCompile(`[^a-z0-9_]+`)

func sanitize(s string) string {
	s = nonWord.ReplaceAllString(strings.ToLower(strings.TrimSuffix(s, ".test")), "_")
	if len(s) > 30 {
		s = s[:30]
	}
	return s
}

// Redis is a client on the test Redis database.
func Redis(t testing.TB) redis.UniversalClient {
	t.Helper()
	u := os.Getenv("TEST_REDIS_URL")
	if u == "" {
		u = DefaultTestRedisURL
	}
	c, err := redisx.Open(u, 100)
	if err != nil {
		t.Fatalf("TEST_REDIS_URL: %v", err)
	}
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("test redis: %v (is Redis running? `make services`)", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// RedisIsCluster says whether the test Redis is a Redis Cluster.
func RedisIsCluster() bool {
	u := os.Getenv("TEST_REDIS_URL")
	return u != "" && redisx.IsCluster(u)
}

// Clinic is a clinic made for one test, with its specialists and types.
type Clinic struct {
	db.Clinic
	Specialists []db.Specialist
	Types       []db.AppointmentType
}

// ClinicOptions shape a test clinic. Zero values give a Europe/Berlin clinic
// with two specialists (priorities 20 and 10) and one 30-minute type both
// perform, working Monday to Friday 09:00-17:00.
type ClinicOptions struct {
	Timezone    string
	Specialists int
	Types       []db.AppointmentTypeInsertParams // ClinicID is filled in
}

// NewClinic creates a clinic of the test's own.
func NewClinic(t testing.TB, pool *pgxpool.Pool, o ClinicOptions) Clinic {
	t.Helper()
	ctx := context.Background()
	if o.Timezone == "" {
		o.Timezone = "Europe/Berlin"
	}
	if o.Specialists == 0 {
		o.Specialists = 2
	}
	if len(o.Types) == 0 {
		o.Types = []db.AppointmentTypeInsertParams{{
			Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1,
		}}
	}
	q := db.New(pool)
	slug := "t-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	c, err := q.ClinicUpsert(ctx, db.ClinicUpsertParams{Slug: slug, Name: "Test clinic " + slug, Timezone: o.Timezone})
	if err != nil {
		t.Fatalf("create clinic: %v", err)
	}
	out := Clinic{Clinic: c}
	for i := range o.Specialists {
		sp, err := q.SpecialistInsert(ctx, db.SpecialistInsertParams{
			ClinicID: c.ID, Name: fmt.Sprintf("Specialist %d", i+1), Priority: int32(10 * (o.Specialists - i)), Active: true,
		})
		if err != nil {
			t.Fatalf("create specialist: %v", err)
		}
		for wd := time.Monday; wd <= time.Friday; wd++ {
			if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{
				ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(wd), StartMin: 9 * 60, EndMin: 17 * 60,
			}); err != nil {
				t.Fatalf("weekly hours: %v", err)
			}
		}
		out.Specialists = append(out.Specialists, sp)
	}
	for _, tp := range o.Types {
		tp.ClinicID = c.ID
		if tp.SlotStepMin == 0 {
			tp.SlotStepMin = tp.DurationMin
		}
		if tp.MaxAdvanceDays == 0 {
			tp.MaxAdvanceDays = 60
		}
		if tp.MaxHoldsPerClient == 0 {
			tp.MaxHoldsPerClient = 1
		}
		at, err := q.AppointmentTypeInsert(ctx, tp)
		if err != nil {
			t.Fatalf("create appointment type: %v", err)
		}
		for _, sp := range out.Specialists {
			if err := q.AppointmentTypeSpecialistAdd(ctx, db.AppointmentTypeSpecialistAddParams{
				ClinicID: c.ID, AppointmentTypeID: at.ID, SpecialistID: sp.ID,
			}); err != nil {
				t.Fatalf("link type: %v", err)
			}
		}
		out.Types = append(out.Types, at)
	}
	return out
}

// NextWeekday is the next date (at least tomorrow) that falls on wd, at the
// given local wall-clock time in loc.
func NextWeekday(now time.Time, loc *time.Location, wd time.Weekday, hour, min int) time.Time {
	d := now.In(loc).AddDate(0, 0, 1)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, 1)
	}
	return time.Date(d.Year(), d.Month(), d.Day(), hour, min, 0, 0, loc)
}

// ClusterSlot is Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash
// tag, or of the whole key without one, modulo 16384. Tests use it to check
// that the keys a script touches share a slot.
func ClusterSlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for _, b := range []byte(key) {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

// Together runs fn(0..n-1) on n goroutines released at once by closing a
// channel (a barrier) once all of them are started, and waits for all of
// them: the shape of every "exactly one wins" test.
func Together(n int, fn func(i int)) {
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	ready.Add(n)
	for i := range n {
		done.Go(func() {
			ready.Done()
			<-start
			fn(i)
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// Race is Together for attempts that fail: it returns their errors, in
// the order of i.
func Race(n int, attempt func(i int) error) []error {
	errs := make([]error, n)
	Together(n, func(i int) { errs[i] = attempt(i) })
	return errs
}
