package web_test

// The harness every test of this package boots the app with: the whole app
// wired as main wires it, its background work running, on a test server,
// with its services, database and Redis at hand.

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	// The assembly, as program: app is this harness's own type.
	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// evWait is how long a test waits for something that must come: an event,
// the hub's subscription, a server coming up.
const evWait = 5 * time.Second

// app is one instance of the app, as main runs it, with its services.
type app struct {
	URL  string
	Deps web.Deps
	Pool *pgxpool.Pool
	RDB  redis.UniversalClient
	// hc is the client a.do uses (the server's own over TLS).
	hc *http.Client
	// shutdown starts a listening app's graceful shutdown; served waits
	// up to d for ListenAndServe to return and returns its error
	// (returned false when it did not return in time).
	shutdown func()
	served   func(d time.Duration) (returned bool, err error)
	// ready waits until the app answers and its hub is subscribed.
	ready func(t testing.TB)
}

// appConfig is what the options of newApp set.
type appConfig struct {
	opts      program.Options
	pool      *pgxpool.Pool
	rdb       redis.UniversalClient
	redisDown bool
	log       io.Writer
	listen    bool
	http2     bool
	// defaultMetrics leaves /metrics where the server's defaults put it
	// (nowhere public); see startApp.
	defaultMetrics bool
	// mailCapDefault keeps the server's default cap on e-mails to one
	// address (see withDefaultMailCap).
	mailCapDefault bool
	// markRequests gives every request's context the inRequest mark (see
	// markingRequests).
	markRequests bool
}

// appOption shapes the app newApp boots.
type appOption func(*appConfig)

// withOptions gives program.Build o. Unless o sets them, the page hold and sign-in
// limits and the allowance of unverified bookings per address are lifted: the test servers all count from loopback addresses.
func withOptions(o program.Options) appOption { return func(c *appConfig) { c.opts = o } }

// withPool runs the app on pool instead of the shared test database.
func withPool(pool *pgxpool.Pool) appOption { return func(c *appConfig) { c.pool = pool } }

// withRedis runs the app on rdb instead of a client of its own on the
// test Redis (a named client, a Redis of the test's own, another
// instance's client).
func withRedis(rdb redis.UniversalClient) appOption { return func(c *appConfig) { c.rdb = rdb } }

// withRedisDown runs the app on a Redis nobody listens on, without its
// background work (hub, sweeper), which lives on Redis and would only
// retry.
func withRedisDown() appOption { return func(c *appConfig) { c.redisDown = true } }

// withLog sends the server's warnings to w instead of the test's log.
func withLog(w io.Writer) appOption { return func(c *appConfig) { c.log = w } }

// listening serves the app with its own http.Server (ListenAndServe, the
// timeouts of program.Options included) on a free loopback address, not on an
// httptest server.
func listening() appOption { return func(c *appConfig) { c.listen = true } }

// withDefaultMailCap keeps the default cap on the e-mails public requests
// cause to one address. Without it, unless the options set one, the cap
// is lifted: the tests of a process share a database and mail a few
// fixed addresses many times.
func withDefaultMailCap() appOption { return func(c *appConfig) { c.mailCapDefault = true } }

// markingRequests marks every request's context (inRequest), so that a
// tracer or hook counts what requests ask of PostgreSQL and Redis apart
// from the background work's.
func markingRequests() appOption { return func(c *appConfig) { c.markRequests = true } }

// overHTTP2 serves the app over TLS with HTTP/2 enabled.
func overHTTP2() appOption { return func(c *appConfig) { c.http2 = true } }

// defaultMetrics serves /metrics as a server with its defaults does: not
// on the public address.
func defaultMetrics() appOption { return func(c *appConfig) { c.defaultMetrics = true } }

// newApp boots the app for the test; it stops at the end of the test.
func newApp(t testing.TB, opts ...appOption) *app {
	t.Helper()
	a, stop := startApp(t, opts...)
	t.Cleanup(stop)
	a.ready(t)
	return a
}

// startApp boots the app and returns it, not yet ready (see app.ready),
// with the function that stops it.
func startApp(t testing.TB, opts ...appOption) (*app, func()) {
	t.Helper()
	var cfg appConfig
	for _, o := range opts {
		o(&cfg)
	}
	o := cfg.opts
	if o.HoldsPerMinute == 0 {
		o.HoldsPerMinute = 100000
	}
	if o.LoginsPerMinute == 0 {
		o.LoginsPerMinute = 100000
	}
	// Tests read /metrics from the test server (metricsText), as with
	// METRICS_PUBLIC=true, unless they serve it on an address of its own
	// or ask for the default.
	if !cfg.defaultMetrics && o.MetricsAddr == "" {
		o.MetricsPublic = true
	}
	if o.Mail.Cap == (outbox.Cap{}) && !cfg.mailCapDefault {
		o.Mail.Cap = outbox.Cap{PerClinic: 1 << 20}
	}
	if o.BookingsPerAddress == 0 {
		// Every test books from 127.0.0.1; the tests of the allowance set
		// the server's default (3) themselves.
		o.BookingsPerAddress = 100000
	}
	// Every test server comes from loopback addresses: none may spend
	// another's allowance.
	o.LimitScope = uuid.NewString() + ":"
	// New password hashes in these tests are bcrypt's cheapest: the
	// production cost takes seconds a hash under -race.
	o.HashCost = bcrypt.MinCost
	if cfg.pool == nil {
		cfg.pool = testkit.DB(t)
	}
	switch {
	case cfg.redisDown:
		down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
		t.Cleanup(func() { _ = down.Close() })
		cfg.rdb = down
	case cfg.rdb == nil:
		cfg.rdb = testkit.Redis(t) // a client (and pub/sub connection) of its own
	}
	if cfg.log == nil {
		cfg.log = newTestLog(t)
	}
	built := program.Build(cfg.pool, cfg.rdb, slog.New(slog.NewTextHandler(cfg.log, &slog.HandlerOptions{Level: slog.LevelWarn})), o)
	deps := built.Deps
	bg, stopBG := context.WithCancel(context.Background())
	if !cfg.redisDown {
		built.RunBackground(bg)
	}
	a := &app{Deps: deps, Pool: cfg.pool, RDB: cfg.rdb, hc: http.DefaultClient}
	var stop func()
	if cfg.listen {
		stop = a.listen(t)
	} else {
		stop = a.serveTest(cfg.http2, cfg.markRequests)
	}
	a.ready = func(t testing.TB) {
		t.Helper()
		if cfg.listen {
			testkit.WaitFor(t, evWait, "the server to come up", func() bool {
				res, err := http.Get(a.URL + "/healthz")
				if err != nil {
					return false
				}
				res.Body.Close()
				return true
			})
		}
		if !cfg.redisDown {
			waitHubReady(t, deps)
		}
	}
	return a, func() { stop(); stopBG() }
}

// serveTest serves the app on an httptest server.
func (a *app) serveTest(http2, mark bool) (stop func()) {
	h := web.New(a.Deps, "127.0.0.1:0").Handler()
	if mark {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), inRequest{}, true)))
		})
	}
	ts := httptest.NewUnstartedServer(h)
	if http2 {
		ts.EnableHTTP2 = true
		ts.StartTLS()
		a.hc = ts.Client()
	} else {
		ts.Start()
	}
	a.URL = ts.URL
	return func() {
		// Streams (browsers, readers) may still be open: cut them first.
		ts.CloseClientConnections()
		ts.Close()
	}
}

// listen serves the app as the binary does (the http.Server with its
// timeouts, graceful shutdown) on a loopback listener it holds from the
// start, so no other test can take the port meanwhile.
func (a *app) listen(t testing.TB) (stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { err = web.New(a.Deps, addr).Serve(ctx, ln, 5*time.Second); close(done) }()
	a.shutdown = cancel
	a.served = func(d time.Duration) (bool, error) {
		select {
		case <-done:
			return true, err
		case <-time.After(d):
			return false, nil
		}
	}
	a.URL = "http://" + addr
	return func() {
		a.shutdown()
		_, _ = a.served(10 * time.Second)
	}
}

// waitHubReady waits until the hub of deps is subscribed to Redis.
func waitHubReady(t testing.TB, deps web.Deps) {
	t.Helper()
	select {
	case <-deps.Hub.Ready():
	case <-time.After(evWait):
		t.Fatal("the hub did not subscribe to Redis")
	}
}

// freeLoopbackAddr is a loopback address with a port nobody listens on.
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// freshPool is a pool on a new, migrated database of the test's own.
func freshPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := postgres.Connect(ctx, testkit.FreshDB(t), 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(ctx, pool, nil); err != nil {
		t.Fatal(err)
	}
	return pool
}

// testLog writes a server's log lines into the test's log: a failure then
// shows what the server saw. Once the test is over it writes nothing (a
// line logged then would panic).
type testLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func newTestLog(t testing.TB) *testLog {
	l := &testLog{t: t}
	t.Cleanup(func() {
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	})
	return l
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// avoidWindowEdge waits for the next rate-limit minute when less than need
// is left of this one, so a test's attempts fall in one window.
func avoidWindowEdge(need time.Duration) {
	now := time.Now()
	next := now.Truncate(time.Minute).Add(time.Minute)
	if next.Sub(now) < need {
		time.Sleep(next.Sub(now) + 100*time.Millisecond)
	}
}
