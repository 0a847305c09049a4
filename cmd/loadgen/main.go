// Command loadgen drives a running booking server the way patients do —
// timeslots, hold, heartbeat, book — and reports confirmed bookings per
// second and latency percentiles per step. After the run it checks in
// PostgreSQL that no specialist has overlapping confirmed bookings and that
// every 201 it saw is a row.
//
//	go run ./cmd/loadgen -url http://127.0.0.1:8080 -patients 32 -duration 10s
//
// It creates its own clinic (20 specialists working around the clock, a
// 30-minute type without cooldown) so runs do not interfere.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/config"
	"github.com/clinic/booking/internal/db"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type options struct {
	url         string
	databaseURL string
	mode        string
	patients    int
	duration    time.Duration
	specialists int
	streams     string
	changes     int
	bareServe   string
	spawn       string
	attempts    int
	bookings    int
	cpuProfile  string
	// viaProxy: patients reach the server as through a load balancer (see
	// runner.proxy).
	viaProxy bool
	rush     rushOptions
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "server base URL")
	fs.StringVar(&o.databaseURL, "database-url", envOr("DATABASE_URL", config.DefaultDatabaseURL), "PostgreSQL, for setup and the final check")
	fs.IntVar(&o.patients, "patients", 32, "concurrent simulated patients")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long to run")
	fs.IntVar(&o.specialists, "specialists", 20, "specialists in the load clinic")
	fs.StringVar(&o.mode, "mode", "book", "book (patients booking), hot (many patients, one slot), streams (fan-out to live grids), pages (grid page, the type page as linked, timeslots vs a trivial endpoint, against -spawn), waitlist (cancel to offer under load, against -spawn), roundtrips (Redis round trips per booking, against -spawn), floor (the booking flow beside its floor, as in suite, against -spawn), rush (many patients, few slots, against -spawn), abuse (what one person with a script gets, against -spawn with default limits) or suite (everything, with references)")
	fs.IntVar(&o.attempts, "attempts", 1000, "-mode hot: concurrent attempts on the one slot")
	fs.IntVar(&o.bookings, "bookings", 200, "-mode roundtrips: bookings, one after the other")
	fs.StringVar(&o.streams, "streams", "1000,5000,10000", "stream counts for -mode streams")
	fs.IntVar(&o.changes, "changes", 10, "slot changes per stream count")
	fs.StringVar(&o.bareServe, "bare-serve", "", "internal: run the bare SSE broadcaster on this address")
	fs.StringVar(&o.spawn, "spawn", "bin/clinic", "-mode streams: the server binary to start afresh for each count")
	fs.BoolVar(&o.viaProxy, "via-proxy", false, "-mode book: patients come through a load balancer: shared keep-alive connections, each patient's address in X-Forwarded-For (start the server with TRUSTED_PROXIES=127.0.0.1)")
	addRushFlags(fs, &o.rush)
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the load generator's own CPU profile here (it shares the machine with the server)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if o.bareServe != "" {
		return bareServe(o.bareServe)
	}
	pool, err := pgxpool.New(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if o.mode == "streams" {
		return streamsMode(ctx, pool, o)
	}
	switch o.mode {
	case "suite":
		return suite(ctx, pool, o)
	case "abuse":
		return abuseMode(ctx, pool, o)
	case "hot":
		raiseFileLimit()
		_, err = hotScenario(ctx, pool, strings.TrimRight(o.url, "/"), o.attempts)
		return err
	case "waitlist":
		base, stop, err := startChild(ctx, o.spawn, loadEnv(), "serve")
		if err != nil {
			return err
		}
		defer stop()
		w, err := waitlistScenario(ctx, pool, base, waitlistCancels)
		if err == nil {
			fmt.Printf("cancel to offer, %d cancels: p50 %s p99 %s max %s, %d offered; grid %.0f pages/s meanwhile\n",
				w.cancels, round(w.p50), round(w.p99), round(w.worst), w.offered, w.load)
		}
		return err
	case "roundtrips":
		r, err := roundtripsScenario(ctx, pool, o.spawn, o.bookings)
		if err == nil {
			printRoundtrips(r)
		}
		return err
	case "rush":
		return rushMode(ctx, pool, o)
	case "floor":
		return floorMode(ctx, pool, o)
	case "pages":
		base, stop, err := startChild(ctx, o.spawn, loadEnv(), "serve")
		if err != nil {
			return err
		}
		defer stop()
		p, err := pagesScenario(ctx, pool, base)
		if err == nil {
			fmt.Printf("grid page (?week=) %.0f req/s (%.2f of /healthz), type page as linked (no week, no cookie) %.0f req/s (%.2f), clinic page (no cookie) %.0f req/s (%.2f), timeslots %.0f req/s (%.2f), /healthz %.0f req/s\n",
				p.grid, p.grid/p.trivial, p.linked, p.linked/p.trivial, p.clinic, p.clinic/p.trivial, p.timeslots, p.timeslots/p.trivial, p.trivial)
		}
		return err
	case "book":
	default:
		return fmt.Errorf("-mode %q: want book, hot, streams, pages, waitlist, roundtrips, floor, rush, abuse or suite", o.mode)
	}
	_, err = bookScenario(ctx, pool, o)
	return err
}

// bookResult is the patients scenario's outcome.
type bookResult struct {
	clinicID  uuid.UUID
	perSecond float64
	p99       map[string]time.Duration
}

// bookScenario runs simulated patients against o.url and checks the
// database afterwards.
func bookScenario(ctx context.Context, pool *pgxpool.Pool, o options) (bookResult, error) {
	clinicID, typeID, err := setup(ctx, pool, o.specialists)
	if err != nil {
		return bookResult{}, fmt.Errorf("setup: %w", err)
	}
	via := "directly"
	if o.viaProxy {
		via = "through a proxy"
	}
	fmt.Printf("clinic %s, type %s, %d patients for %s against %s, %s\n", clinicID, typeID, o.patients, o.duration, o.url, via)

	r := &runner{
		base:   strings.TrimRight(o.url, "/"),
		typeID: typeID,
		stats:  map[string]*latencies{},
	}
	if o.viaProxy {
		r.proxy = &http.Transport{MaxIdleConnsPerHost: o.patients, MaxConnsPerHost: o.patients}
		defer r.proxy.CloseIdleConnections()
	}
	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	began := time.Now()
	var wg sync.WaitGroup
	for i := range o.patients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.patient(runCtx, rand.New(rand.NewPCG(uint64(i), uint64(began.UnixNano()))))
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	r.report(elapsed)
	res := bookResult{clinicID: clinicID, perSecond: float64(r.confirmed.Load()) / elapsed.Seconds(), p99: map[string]time.Duration{}}
	for _, step := range []string{"timeslots", "hold", "heartbeat", "book"} {
		res.p99[step] = r.stat(step).pct(99)
	}
	return res, verify(ctx, pool, clinicID, r.confirmed.Load())
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// setup makes the load clinic: specialists working every day, all day.
func setup(ctx context.Context, pool *pgxpool.Pool, specialists int) (clinicID, typeID uuid.UUID, err error) {
	q := db.New(pool)
	slug := fmt.Sprintf("loadgen-%d", time.Now().UnixNano())
	c, err := q.ClinicUpsert(ctx, db.ClinicUpsertParams{Slug: slug, Name: "Load clinic " + slug, Timezone: "Europe/Berlin"})
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	at, err := q.AppointmentTypeInsert(ctx, db.AppointmentTypeInsertParams{
		ClinicID: c.ID, Name: "Load test", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60,
		CooldownMin: 0, MaxHoldsPerClient: 1,
	})
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	for i := range specialists {
		sp, err := q.SpecialistInsert(ctx, db.SpecialistInsertParams{ClinicID: c.ID, Name: fmt.Sprintf("Specialist %02d", i+1), Priority: int32(i % 3), Active: true})
		if err != nil {
			return uuid.Nil, uuid.Nil, err
		}
		for wd := range 7 {
			if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(wd), StartMin: 0, EndMin: 1440}); err != nil {
				return uuid.Nil, uuid.Nil, err
			}
		}
		if err := q.AppointmentTypeSpecialistAdd(ctx, db.AppointmentTypeSpecialistAddParams{ClinicID: c.ID, AppointmentTypeID: at.ID, SpecialistID: sp.ID}); err != nil {
			return uuid.Nil, uuid.Nil, err
		}
	}
	return c.ID, at.ID, nil
}

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) pct(p float64) time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	i := int(p / 100 * float64(len(l.d)-1))
	return l.d[i]
}

type runner struct {
	base string
	// proxy, when set, is a load balancer's pool of connections to the
	// server: every patient's requests share it, and each patient's own
	// address travels in X-Forwarded-For. Otherwise each patient connects
	// from an address of its own (patientTransport).
	proxy     *http.Transport
	typeID    uuid.UUID
	mu        sync.Mutex
	stats     map[string]*latencies
	confirmed atomic.Int64
	conflicts atomic.Int64
	errors    atomic.Int64
}

func (r *runner) stat(step string) *latencies {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.stats[step]
	if !ok {
		l = &latencies{}
		r.stats[step] = l
	}
	return l
}

// call does one request and records its latency under step; it returns the
// status and the decoded body.
func (r *runner) call(ctx context.Context, client *http.Client, step, method, path string, body any, headers map[string]string, into any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r.stat(step).add(time.Since(start))
	if into != nil && res.StatusCode < 300 {
		if s, ok := into.(interface{ scan([]byte) error }); ok {
			_ = s.scan(raw) // no encoding/json: it validates the whole answer first
		} else {
			_ = json.Unmarshal(raw, into)
		}
	}
	return res.StatusCode, nil
}

// patient books until the run ends. An attempt under way finishes: cutting
// a request short would leave a booking the server made uncounted.
func (r *runner) patient(run context.Context, rng *rand.Rand) {
	for run.Err() == nil {
		if err := r.attempt(context.Background(), rng); err != nil {
			r.errors.Add(1)
		}
	}
}

// attempt is one patient's visit, from an address of its own (see
// patientTransport).
func (r *runner) attempt(ctx context.Context, rng *rand.Rand) error {
	var client *http.Client
	var from map[string]string
	if r.proxy != nil {
		client = &http.Client{Timeout: 10 * time.Second, Transport: r.proxy}
		from = map[string]string{"X-Forwarded-For": fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), 1+rng.IntN(254))}
	} else {
		client = &http.Client{Timeout: 10 * time.Second, Transport: patientTransport(r.base, 1)}
		defer client.CloseIdleConnections()
	}
	day := time.Now().AddDate(0, 0, 1+rng.IntN(58)).Format("2006-01-02")
	var slots slotStarts
	st, err := r.call(ctx, client, "timeslots", http.MethodGet, "/v1/appointment-types/"+r.typeID.String()+"/timeslots?from="+day+"&to="+day, nil, from, &slots)
	if err != nil || st != 200 {
		return errStatus(err, st)
	}
	if len(slots) == 0 {
		return nil
	}
	start := slots[rng.IntN(len(slots))]
	patient := uuid.NewString()
	var hold struct {
		HoldID string `json:"holdId"`
	}
	st, err = r.call(ctx, client, "hold", http.MethodPost, "/v1/holds", map[string]string{
		"appointmentTypeId": r.typeID.String(), "slotStartDate": start, "clientId": patient,
	}, from, &hold)
	if err != nil {
		return err
	}
	if st == 409 || st == 423 {
		r.conflicts.Add(1)
		return nil
	}
	if st != 201 {
		return errStatus(nil, st)
	}
	st, err = r.call(ctx, client, "heartbeat", http.MethodPatch, "/v1/holds", map[string]string{"holdId": hold.HoldID, "clientId": patient}, from, nil)
	if err != nil || st != 200 {
		return errStatus(err, st)
	}
	st, err = r.call(ctx, client, "book", http.MethodPost, "/v1/appointment-types/"+r.typeID.String()+"/book", map[string]any{
		"holdId": hold.HoldID, "clientId": patient,
		// Every booking is another person's: one e-mail and phone for all
		// would queue them behind one patient's lock.
		"patient": map[string]string{"name": "Load Patient", "email": "load-" + patient + "@example.org",
			"phone": fmt.Sprintf("+49 30 %07d", rng.IntN(10_000_000))},
	}, withHeader(from, "Idempotency-Key", uuid.NewString()), nil)
	if err != nil {
		return err
	}
	switch st {
	case 201:
		r.confirmed.Add(1)
	case 409, 410:
		r.conflicts.Add(1)
	default:
		return errStatus(nil, st)
	}
	return nil
}

// slotStarts are the starts of a timeslots answer. The load generator
// shares the machine with the server, and decoding a day of slots with
// their specialists' ids (about 36 KB) with encoding/json took a third of
// its CPU; the starts are all it needs, so it scans for them.
type slotStarts []string

func (s *slotStarts) scan(b []byte) error {
	const field = `"start":"`
	for {
		i := bytes.Index(b, []byte(field))
		if i < 0 {
			return nil
		}
		b = b[i+len(field):]
		j := bytes.IndexByte(b, '"')
		if j < 0 {
			return errors.New("timeslots: unterminated start")
		}
		*s = append(*s, string(b[:j]))
		b = b[j:]
	}
}

func withHeader(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range h {
		out[hk] = hv
	}
	return out
}

func errStatus(err error, st int) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("status %d", st)
}

func (r *runner) report(elapsed time.Duration) {
	n := r.confirmed.Load()
	fmt.Printf("\nconfirmed %d in %.1fs = %.1f bookings/s; conflicts %d; errors %d\n",
		n, elapsed.Seconds(), float64(n)/elapsed.Seconds(), r.conflicts.Load(), r.errors.Load())
	fmt.Printf("%-10s %8s %9s %9s %9s\n", "step", "count", "p50", "p95", "p99")
	for _, step := range []string{"timeslots", "hold", "heartbeat", "book"} {
		l := r.stat(step)
		slices.Sort(l.d)
		fmt.Printf("%-10s %8d %9s %9s %9s\n", step, len(l.d), round(l.pct(50)), round(l.pct(95)), round(l.pct(99)))
	}
}

func round(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }

// verify checks the database: no overlapping confirmed bookings of one
// specialist, and exactly as many confirmed rows as 201 answers.
func verify(ctx context.Context, pool *pgxpool.Pool, clinicID uuid.UUID, confirmed int64) error {
	var overlaps, rows int64
	err := pool.QueryRow(ctx, `
		SELECT count(*) FROM bookings a JOIN bookings b
		  ON a.specialist_id = b.specialist_id AND a.id < b.id
		 AND tstzrange(a.slot_start, a.slot_end) && tstzrange(b.slot_start, b.slot_end)
		WHERE a.clinic_id = $1 AND a.status = 'confirmed' AND b.status = 'confirmed'`, clinicID).Scan(&overlaps)
	if err != nil {
		return err
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed'`, clinicID).Scan(&rows); err != nil {
		return err
	}
	fmt.Printf("check: %d overlapping confirmed pairs; %d confirmed rows for %d answers of 201\n", overlaps, rows, confirmed)
	if overlaps != 0 || rows != confirmed {
		return errors.New("check FAILED")
	}
	fmt.Println("check: ok")
	return nil
}

// raiseFileLimit lifts the soft open-files limit to the hard one: ten
// thousand streams are ten thousand sockets.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
