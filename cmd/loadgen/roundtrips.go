package main

// Redis round trips per booking, as Redis itself counts them.
//
// How they are counted. INFO commandstats counts calls per command, but a
// script's own redis.call()s are counted under their own names as well as
// the EVALSHA that ran them: its sum is commands executed, not commands
// sent. Redis 7.0 keeps no count of requests per client, and its count of
// socket reads (total_reads_processed) counts a large request several
// times. So the script-inner calls are counted separately, from the slow
// log set to log every command for the run: Redis logs a script's calls
// there too, under its Lua client, whose address is "?:0". Commands sent =
// commandstats' calls minus those; the command and slow log settings are
// put back afterwards. A pipeline of k commands is k commands sent here
// (one network round trip; Redis cannot tell), and so is a MULTI/EXEC
// block with its MULTI and EXEC. This was checked against Redis 7.0: an
// EVAL making two calls is three calls in commandstats and two slow log
// entries from "?:0" (see TestRedisMeterCountsScriptsOnce).
//
// The measuring commands themselves (INFO, SLOWLOG) are left out. On a
// cluster every master is read and summed. The server's own background
// work (the sweeper) is measured over an idle second first and printed
// beside the figures; run against a Redis nobody else uses (make bench's
// is).

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/platform/redisx"
)

// luaClient is the address the slow log gives a script's own calls.
const luaClient = "?:0"

// slowlogLen is how many entries the slow log keeps while measuring: more
// than any one step sends.
const slowlogLen = 100000

// redisMeter measures what Redis does between start and stop, over every
// master.
type redisMeter struct {
	rdb   redis.UniversalClient
	saved map[string][2]string // per node: slowlog-log-slower-than, slowlog-max-len
	mu    sync.Mutex
}

// forEachNode runs fn on the one server or on every master.
func forEachNode(ctx context.Context, rdb redis.UniversalClient, fn func(context.Context, *redis.Client) error) error {
	switch r := rdb.(type) {
	case *redis.ClusterClient:
		return r.ForEachMaster(ctx, fn)
	case *redis.Client:
		return fn(ctx, r)
	default:
		return fmt.Errorf("redis client %T", rdb)
	}
}

// newRedisMeter makes every master log every command in its slow log;
// close puts the settings back.
func newRedisMeter(ctx context.Context, rdb redis.UniversalClient) (*redisMeter, error) {
	m := &redisMeter{rdb: rdb, saved: map[string][2]string{}}
	err := forEachNode(ctx, rdb, func(ctx context.Context, n *redis.Client) error {
		cur, err := n.ConfigGet(ctx, "slowlog-*").Result()
		if err != nil {
			return fmt.Errorf("CONFIG GET: %w", err)
		}
		m.mu.Lock()
		m.saved[n.Options().Addr] = [2]string{cur["slowlog-log-slower-than"], cur["slowlog-max-len"]}
		m.mu.Unlock()
		if err := n.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
			return err
		}
		return n.ConfigSet(ctx, "slowlog-max-len", strconv.Itoa(slowlogLen)).Err()
	})
	if err != nil {
		m.close(ctx)
		return nil, err
	}
	return m, nil
}

func (m *redisMeter) close(ctx context.Context) {
	_ = forEachNode(ctx, m.rdb, func(ctx context.Context, n *redis.Client) error {
		m.mu.Lock()
		v, ok := m.saved[n.Options().Addr]
		m.mu.Unlock()
		if ok {
			_ = n.ConfigSet(ctx, "slowlog-log-slower-than", v[0]).Err()
			_ = n.ConfigSet(ctx, "slowlog-max-len", v[1]).Err()
		}
		_ = n.SlowLogReset(ctx).Err()
		return nil
	})
}

// redisWork is what Redis did between start and stop.
type redisWork struct {
	calls map[string]int64 // per command, script-inner calls included
	inner int64            // calls made inside scripts
}

// start reads commandstats, then empties the slow logs.
func (m *redisMeter) start(ctx context.Context) (map[string]int64, error) {
	calls, err := m.commandstats(ctx)
	if err != nil {
		return nil, err
	}
	return calls, forEachNode(ctx, m.rdb, func(ctx context.Context, n *redis.Client) error {
		return n.SlowLogReset(ctx).Err()
	})
}

// stop counts the script-inner calls the slow logs saw since start, and
// the calls commandstats counted.
func (m *redisMeter) stop(ctx context.Context, before map[string]int64) (redisWork, error) {
	var w redisWork
	err := forEachNode(ctx, m.rdb, func(ctx context.Context, n *redis.Client) error {
		entries, err := n.SlowLogGet(ctx, -1).Result()
		if err != nil {
			return fmt.Errorf("SLOWLOG GET: %w", err)
		}
		if len(entries) >= slowlogLen {
			return fmt.Errorf("slow log of %s full: the count would be short", n.Options().Addr)
		}
		var inner int64
		for _, e := range entries {
			if e.ClientAddr == luaClient {
				inner++
			}
		}
		m.mu.Lock()
		w.inner += inner
		m.mu.Unlock()
		return nil
	})
	if err != nil {
		return w, err
	}
	after, err := m.commandstats(ctx)
	w.calls = map[string]int64{}
	for name, n := range after {
		if d := n - before[name]; d > 0 && !measuring(name) {
			w.calls[name] = d
		}
	}
	return w, err
}

// measuring: the meter's own commands.
func measuring(name string) bool {
	return name == "info" || strings.HasPrefix(name, "slowlog")
}

// commandstats is INFO commandstats's calls per command, summed over the
// masters.
func (m *redisMeter) commandstats(ctx context.Context) (map[string]int64, error) {
	calls := map[string]int64{}
	err := forEachNode(ctx, m.rdb, func(ctx context.Context, n *redis.Client) error {
		info, err := n.Info(ctx, "commandstats").Result()
		if err != nil {
			return fmt.Errorf("INFO: %w", err)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		return addCommandstats(calls, info)
	})
	return calls, err
}

// addCommandstats sums one node's "cmdstat_<name>:calls=<n>,..." lines.
func addCommandstats(calls map[string]int64, info string) error {
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_")
		if !ok {
			continue
		}
		name, fields, _ := strings.Cut(rest, ":")
		v, _, _ := strings.Cut(strings.TrimPrefix(fields, "calls="), ",")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("INFO %q: %w", line, err)
		}
		calls[name] += n
	}
	return nil
}

func (w *redisWork) addAll(o redisWork) {
	if w.calls == nil {
		w.calls = map[string]int64{}
	}
	for name, n := range o.calls {
		w.calls[name] += n
	}
	w.inner += o.inner
}

// total is every command executed, script-inner calls included.
func (w redisWork) total() int64 {
	var n int64
	for _, v := range w.calls {
		n += v
	}
	return n
}

// sent is the commands clients sent: all but the script-inner calls.
func (w redisWork) sent() int64 { return w.total() - w.inner }

// scripts is the script calls among them.
func (w redisWork) scripts() int64 {
	return w.calls["evalsha"] + w.calls["eval"] + w.calls["evalsha_ro"] + w.calls["eval_ro"] + w.calls["fcall"]
}

// roundtripSteps are a booking's requests, in order.
var roundtripSteps = []string{"timeslots", "hold", "heartbeat", "book"}

// roundtripResult is Redis's work per booking, overall and per step.
type roundtripResult struct {
	bookings int
	all      redisWork
	steps    map[string]redisWork
	idle     redisWork // the server alone, over idleFor
	idleFor  time.Duration
	elapsed  time.Duration
}

// perBooking is the commands one booking sends.
func (r roundtripResult) perBooking() float64 {
	return float64(r.all.sent()) / float64(max(r.bookings, 1))
}

// perStep is the commands one booking sends in each step, in order:
// "timeslots 1.0, hold 2.0, ...".
func (r roundtripResult) perStep() string {
	parts := make([]string, len(roundtripSteps))
	for i, step := range roundtripSteps {
		w := r.steps[step]
		parts[i] = fmt.Sprintf("%s %.1f", step, float64(w.sent())/float64(max(r.bookings, 1)))
	}
	return strings.Join(parts, ", ")
}

// roundtripsScenario starts a server and books n times, one booking after
// the other, reading Redis's counters around every request.
func roundtripsScenario(ctx context.Context, pool *pgxpool.Pool, spawn string, n int) (roundtripResult, error) {
	rdb, err := redisx.Open(envOr("REDIS_URL", config.DefaultRedisURL), 2)
	if err != nil {
		return roundtripResult{}, err
	}
	defer rdb.Close()
	meter, err := newRedisMeter(ctx, rdb)
	if err != nil {
		return roundtripResult{}, err
	}
	defer meter.close(context.WithoutCancel(ctx))
	base, stop, err := startChild(ctx, spawn, loadEnv(), "serve")
	if err != nil {
		return roundtripResult{}, err
	}
	defer stop()
	_, typeID, err := setup(ctx, pool, 20)
	if err != nil {
		return roundtripResult{}, fmt.Errorf("setup: %w", err)
	}
	// A cooldown, as real types have: a booking starts one.
	if _, err := pool.Exec(ctx, `UPDATE appointment_types SET cooldown_min = 10 WHERE id = $1`, typeID); err != nil {
		return roundtripResult{}, err
	}
	f := &flow{base: base, typeID: typeID, meter: meter, rng: rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))}
	// Scripts loaded, connections dialled, caches filled: not counted.
	for range 5 {
		if _, err := f.book(ctx); err != nil {
			return roundtripResult{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	res := roundtripResult{steps: map[string]redisWork{}, idleFor: time.Second}
	if res.idle, err = f.idle(ctx, res.idleFor); err != nil {
		return res, err
	}
	began := time.Now()
	for res.bookings < n {
		steps, err := f.book(ctx)
		if err != nil {
			return res, err
		}
		for step, w := range steps {
			s := res.steps[step]
			s.addAll(w)
			res.steps[step] = s
			res.all.addAll(w)
		}
		res.bookings++
	}
	res.elapsed = time.Since(began)
	return res, nil
}

// flow is one patient after the other booking through one server.
type flow struct {
	base   string
	typeID uuid.UUID
	meter  *redisMeter
	rng    *rand.Rand
}

// idle is Redis's work while the server is left alone for d.
func (f *flow) idle(ctx context.Context, d time.Duration) (redisWork, error) {
	before, err := f.meter.start(ctx)
	if err != nil {
		return redisWork{}, err
	}
	time.Sleep(d)
	return f.meter.stop(ctx, before)
}

// book is one patient's booking — a week's timeslots, hold, heartbeat,
// book — from an address of its own, with Redis's work per step.
func (f *flow) book(ctx context.Context) (map[string]redisWork, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: patientTransport(f.base, 1)}
	defer client.CloseIdleConnections()
	r := &runner{base: f.base, typeID: f.typeID, stats: map[string]*latencies{}}
	out := map[string]redisWork{}
	measured := func(step string, do func() (int, error), want int) error {
		before, err := f.meter.start(ctx)
		if err != nil {
			return err
		}
		st, err := do()
		if err != nil || st != want {
			return fmt.Errorf("%s: %w", step, errStatus(err, st))
		}
		out[step], err = f.meter.stop(ctx, before)
		return err
	}
	from := time.Now().AddDate(0, 0, 1+f.rng.IntN(50))
	var slots slotStarts
	week := "/v1/appointment-types/" + f.typeID.String() + "/timeslots?from=" + from.Format("2006-01-02") + "&to=" + from.AddDate(0, 0, 6).Format("2006-01-02")
	if err := measured("timeslots", func() (int, error) {
		return r.call(ctx, client, "timeslots", http.MethodGet, week, nil, nil, &slots)
	}, 200); err != nil {
		return nil, err
	}
	if len(slots) == 0 {
		return nil, fmt.Errorf("no slots in the week of %s", from.Format("2006-01-02"))
	}
	patient := uuid.NewString()
	var hold struct {
		HoldID string `json:"holdId"`
	}
	if err := measured("hold", func() (int, error) {
		return r.call(ctx, client, "hold", http.MethodPost, "/v1/holds", map[string]string{
			"appointmentTypeId": f.typeID.String(), "slotStartDate": slots[f.rng.IntN(len(slots))], "clientId": patient,
		}, nil, &hold)
	}, 201); err != nil {
		return nil, err
	}
	if err := measured("heartbeat", func() (int, error) {
		return r.call(ctx, client, "heartbeat", http.MethodPatch, "/v1/holds", map[string]string{"holdId": hold.HoldID, "clientId": patient}, nil, nil)
	}, 200); err != nil {
		return nil, err
	}
	err := measured("book", func() (int, error) {
		return r.call(ctx, client, "book", http.MethodPost, "/v1/appointment-types/"+f.typeID.String()+"/book", map[string]any{
			"holdId": hold.HoldID, "clientId": patient,
			// An address of its own: the type's cooldown follows the patient.
			"patient": map[string]string{"name": "Load Patient", "email": "load-" + patient + "@example.org"},
		}, map[string]string{"Idempotency-Key": uuid.NewString()}, nil)
	}, 201)
	return out, err
}

// printRoundtrips prints the commands a booking sends, per step, and the
// commands executed.
func printRoundtrips(r roundtripResult) {
	per := func(n int64) float64 { return float64(n) / float64(max(r.bookings, 1)) }
	idlePer := float64(r.idle.sent()) / r.idleFor.Seconds() * r.elapsed.Seconds() / float64(max(r.bookings, 1))
	fmt.Printf("\nRedis per booking, %d bookings one after the other (timeslots of a week, hold, heartbeat, book):\n", r.bookings)
	fmt.Printf("  %.1f commands sent (script-inner calls not counted; a script call is one, a pipeline of k is k)\n", r.perBooking())
	fmt.Printf("  %.1f of them script calls; %.1f commands executed with the scripts' own calls\n", per(r.all.scripts()), per(r.all.total()))
	fmt.Printf("  the server alone meanwhile: %.2f commands per booking's time (%d in %s idle)\n", idlePer, r.idle.sent(), r.idleFor)
	fmt.Printf("%-10s %8s %9s %10s\n", "step", "sent", "scripts", "executed")
	for _, step := range roundtripSteps {
		w := r.steps[step]
		fmt.Printf("%-10s %8.1f %9.1f %10.1f\n", step, per(w.sent()), per(w.scripts()), per(w.total()))
	}
	type named struct {
		name string
		n    int64
	}
	var cmds []named
	for name, n := range r.all.calls {
		cmds = append(cmds, named{name, n})
	}
	slices.SortFunc(cmds, func(a, b named) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name)) })
	fmt.Println("commands per booking, top 10 (script-inner calls under their own names):")
	for _, c := range cmds[:min(10, len(cmds))] {
		fmt.Printf("  %-22s %6.2f\n", c.name, per(c.n))
	}
}
