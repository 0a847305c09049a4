package web_test

// How many commands a patient's booking sends to Redis, step by step, as
// Redis itself logs them, and how many round trips it makes to
// PostgreSQL.

import (
	"context"
	"net/http"
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

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
)

// pgTrips records the round trips requests (contexts marked inRequest)
// make to PostgreSQL, one entry each: a statement, a statement's
// preparation, or a batch (its statements' first lines joined by " ; ").
// The background work's (the job queue, the hub) is left out.
type pgTrips struct {
	mu   sync.Mutex
	sent []string
}

func (p *pgTrips) add(ctx context.Context, sql string) {
	if ctx.Value(inRequest{}) == nil {
		return
	}
	p.mu.Lock()
	p.sent = append(p.sent, sql)
	p.mu.Unlock()
}

// firstLine is a statement's first line that says something: sqlc's name
// comment when there is one.
func firstLine(sql string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(sql), "\n")
	return strings.TrimSpace(line)
}

func (p *pgTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	p.add(ctx, firstLine(d.SQL))
	return ctx
}
func (p *pgTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (p *pgTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var lines []string
	for _, q := range d.Batch.QueuedQueries {
		lines = append(lines, firstLine(q.SQL))
	}
	p.add(ctx, "batch("+strings.Join(lines, " ; ")+")")
	return ctx
}
func (p *pgTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (p *pgTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (p *pgTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	p.add(ctx, "prepare("+firstLine(d.SQL)+")")
	return ctx
}
func (p *pgTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// count runs do and returns the round trips made meanwhile.
func (p *pgTrips) count(do func()) []string {
	p.mu.Lock()
	p.sent = nil
	p.mu.Unlock()
	do()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent
}

// trips are the round trips of sent that any connection makes: a
// statement's preparation, made once in a connection's life, is left out.
func trips(sent []string) []string {
	var out []string
	for _, s := range sent {
		if !strings.HasPrefix(s, "prepare(") {
			out = append(out, s)
		}
	}
	return out
}

// tracedPool is a pool on the test database whose requests' round trips
// rec records.
func tracedPool(t *testing.T, rec *pgTrips) *pgxpool.Pool {
	t.Helper()
	cfg := testkit.DB(t).Config()
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// redisTrips counts the round trips requests (contexts marked
// inRequest) make to Redis: a command, or a pipeline of any length.
type redisTrips struct{ n atomic.Int64 }

func (r *redisTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *redisTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(inRequest{}) != nil {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (r *redisTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(inRequest{}) != nil {
			r.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// count runs do and returns the round trips made meanwhile.
func (r *redisTrips) count(do func()) int64 {
	before := r.n.Load()
	do()
	return r.n.Load() - before
}

// redisSteps counts the commands clients send to a Redis of the test's
// own, from its slow log set to log everything: a script's own calls
// (logged from "?:0") do not count, a pipeline of k commands counts k.
// Commands no booking sends are left out: the slow log's own, connection
// set-up, and the hold sweeper's, which runs every second whatever the
// patients do.
type redisSteps struct {
	t   *testing.T
	rdb *redis.Client
}

func newRedisSteps(t *testing.T, rdb *redis.Client) *redisSteps {
	t.Helper()
	ctx := t.Context()
	for k, v := range map[string]string{"slowlog-log-slower-than": "0", "slowlog-max-len": "100000"} {
		if err := rdb.ConfigSet(ctx, k, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return &redisSteps{t: t, rdb: rdb}
}

// count runs do and returns the commands sent meanwhile, by name.
func (m *redisSteps) count(do func()) []string {
	m.t.Helper()
	ctx := m.t.Context()
	if err := m.rdb.SlowLogReset(ctx).Err(); err != nil {
		m.t.Fatal(err)
	}
	do()
	entries, err := m.rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		m.t.Fatal(err)
	}
	var sent []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.ClientAddr == "?:0" || len(e.Args) == 0 || background(e.Args) {
			continue
		}
		sent = append(sent, named(e.Args))
	}
	return sent
}

// named is a command's name, and for a script the first word of its first
// key (hold, ratelimit, timeslots, ...), which tells the scripts apart.
func named(args []string) string {
	name := strings.ToLower(args[0])
	if (name == "eval" || name == "evalsha") && len(args) > 3 && args[2] != "0" {
		word, _, _ := strings.Cut(args[3], ":")
		return name + "(" + word + ")"
	}
	return name
}

// background: commands of the measuring, of new connections, of the
// sweeper.
func background(args []string) bool {
	switch strings.ToLower(args[0]) {
	case "slowlog", "config", "info", "hello", "select", "client", "ping", "zrangebyscore":
		return true
	case "smembers", "srem", "sadd":
		return len(args) > 1 && args[1] == "holds:clinics"
	}
	return false
}

// A booking through the API (a week's timeslots, hold, heartbeat, book)
// sends at most these commands to Redis, each step on its own, and its
// book step makes at most so many round trips to PostgreSQL. The week is
// one no request has read before (its lists are computed and stored); the
// hold and the booking go by what the week's read left in memory. The
// API's limit of holds per address is on, as on a server: the hold and the
// heartbeat count their limits in their own scripts.
func TestRedisCommandsPerBookingStep(t *testing.T) {
	rdb := testkit.PrivateRedis(t)
	rt := &redisTrips{}
	rdb.AddHook(rt)
	pg := &pgTrips{}
	a := newApp(t, withRedis(rdb), withPool(tracedPool(t, pg)), markingRequests(), withOptions(program.Options{APIHoldsPerMinute: 100000}))
	c := a.patientClinic(t)
	typ := c.Type0()
	m := newRedisSteps(t, rdb)
	book := func(daysAhead int) map[string][]string {
		from := time.Now().In(c.Loc).AddDate(0, 0, daysAhead).Format("2006-01-02")
		to := time.Now().In(c.Loc).AddDate(0, 0, daysAhead+6).Format("2006-01-02")
		client := clientID()
		steps := map[string][]string{}
		var slots struct {
			Timeslots []struct {
				Start string `json:"start"`
			} `json:"timeslots"`
		}
		steps["timeslots"] = m.count(func() {
			r := a.do(t, "GET", "/v1/appointment-types/"+typ.ID.String()+"/timeslots?from="+from+"&to="+to, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("timeslots: %d %s", r.Status, r.Body)
			}
			r.Decode(&slots)
		})
		if len(slots.Timeslots) == 0 {
			t.Fatalf("no timeslots from %s to %s", from, to)
		}
		start, err := time.Parse(time.RFC3339, slots.Timeslots[len(slots.Timeslots)/2].Start)
		if err != nil {
			t.Fatal(err)
		}
		var h holdView
		steps["hold"] = m.count(func() { h = a.hold(t, typ.ID, start, client) })
		// A heartbeat within the claim's millisecond finds its hold a full
		// TTL from its end, changes nothing, and is announced apart.
		time.Sleep(2 * time.Millisecond)
		steps["heartbeat"] = m.count(func() {
			if r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": client}); r.Status != http.StatusOK {
				t.Fatalf("heartbeat: %d %s", r.Status, r.Body)
			}
		})
		// The job queue tells its workers of new jobs at most once every
		// 100 ms (River's FetchCooldown): after a quiet moment the booking
		// sends that notice too, and it must travel with the batch.
		time.Sleep(150 * time.Millisecond)
		steps["book"] = m.count(func() {
			steps["book/pg"] = pg.count(func() {
				redisTrips := rt.count(func() {
					r := a.do(t, "POST", bookPath(typ.ID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientFor(client)},
						"Idempotency-Key", uuid.NewString())
					if r.Status != http.StatusCreated {
						t.Fatalf("book: %d %s", r.Status, r.Body)
					}
				})
				steps["book/redis trips"] = []string{strconv.FormatInt(redisTrips, 10)}
			})
		})
		return steps
	}
	// Scripts loaded, connections dialled: not counted.
	book(1)
	steps := book(15)
	sent := steps["book/pg"]
	for _, s := range sent {
		t.Logf("book, PostgreSQL: %s", s)
	}
	const mostPG = 2
	if n := len(trips(sent)); n > mostPG {
		t.Errorf("book made %d round trips to PostgreSQL, want at most %d", n, mostPG)
	} else {
		t.Logf("book: %d round trips to PostgreSQL", n)
	}
	// The pin, then the slots' script and the spent hold's in one
	// pipeline.
	const mostRedisTrips = 2
	if n, _ := strconv.Atoi(steps["book/redis trips"][0]); n > mostRedisTrips {
		t.Errorf("book made %d round trips to Redis, want at most %d", n, mostRedisTrips)
	} else {
		t.Logf("book: %d round trips to Redis", n)
	}
	most := map[string]int{"timeslots": 2, "hold": 1, "heartbeat": 1, "book": 3}
	total := 0
	for _, step := range []string{"timeslots", "hold", "heartbeat", "book"} {
		sent := steps[step]
		total += len(sent)
		t.Logf("%s: %d commands: %s", step, len(sent), strings.Join(sent, " "))
		if len(sent) > most[step] {
			t.Errorf("%s sent %d commands to Redis, want at most %d: %s", step, len(sent), most[step], strings.Join(sent, " "))
		}
	}
	t.Logf("%d commands in all", total)
}
