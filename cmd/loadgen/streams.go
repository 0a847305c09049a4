package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
)

// The stream scenario: open N live HTML streams of one booking grid, make
// slot changes through the API, and time how long until every stream has
// each change; beside it, the same against a bare Go SSE broadcaster, the
// floor any SSE server on this machine can reach.

type streamResult struct {
	name      string
	streams   int
	bytesPer  float64 // server memory per stream
	p50, p99  time.Duration
	all       time.Duration // until the last stream had it (worst change)
	delivered int
	expected  int
}

// streamsScenario measures the clinic server: for each count a fresh
// server process (from -spawn), so each memory figure is its own.
func streamsScenario(ctx context.Context, pool *pgxpool.Pool, spawn string, counts []int, changes int) ([]streamResult, error) {
	slug, typeID, week, err := setupStreamClinic(ctx, pool)
	if err != nil {
		return nil, err
	}
	var out []streamResult
	for _, n := range counts {
		// Every stream comes from this one loopback address.
		base, stop, err := startChild(ctx, spawn, loadEnv("STREAMS_PER_ADDRESS="+strconv.Itoa(1<<20)), "serve")
		if err != nil {
			return out, err
		}
		url := fmt.Sprintf("%s/c/%s/book/%s/live?week=%s", base, slug, typeID, week)
		res, err := runStreams(ctx, "clinic server", n, url, func() (int64, error) { return metricRSS(base) },
			func(i int) (string, func() (func(), error)) { return changeSlot(ctx, base, typeID, week, i) }, changes)
		stop()
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// loadEnv is env with what the load scenarios need raised: they book many
// times from a few loopback addresses, so the allowance of unverified
// bookings per address is lifted, and they read the server's /metrics on
// its one port (METRICS_PUBLIC). The abuse scenario keeps the defaults.
func loadEnv(env ...string) []string {
	return append([]string{"BOOKINGS_PER_ADDRESS=1000000", "METRICS_PUBLIC=true"}, env...)
}

// startChild runs a server binary on a free loopback port, with env added
// to its environment, and waits until it answers /healthz.
// args may use the placeholder "{addr}".
func startChild(ctx context.Context, bin string, env []string, args ...string) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{addr}", addr)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "ADDR="+addr, "LOG_LEVEL=warn"), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }
	base := "http://" + addr
	for i := 0; i < 200; i++ {
		if r, err := http.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			return base, stop, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("%s did not come up on %s", bin, addr)
}

// setupStreamClinic: one specialist working every day, so one hold turns
// a pooled cell "held" for everyone watching.
func setupStreamClinic(ctx context.Context, pool *pgxpool.Pool) (string, uuid.UUID, string, error) {
	q := db.New(pool)
	slug := fmt.Sprintf("streams-%d", time.Now().UnixNano())
	c, err := q.ClinicUpsert(ctx, db.ClinicUpsertParams{Slug: slug, Name: "Stream bench", Timezone: "Europe/Berlin"})
	if err != nil {
		return "", uuid.Nil, "", err
	}
	at, err := q.AppointmentTypeInsert(ctx, db.AppointmentTypeInsertParams{ClinicID: c.ID, Name: "Bench", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, CooldownMin: 0, MaxHoldsPerClient: 1})
	if err != nil {
		return "", uuid.Nil, "", err
	}
	sp, err := q.SpecialistInsert(ctx, db.SpecialistInsertParams{ClinicID: c.ID, Name: "Only One", Priority: 1, Active: true})
	if err != nil {
		return "", uuid.Nil, "", err
	}
	for wd := range 7 {
		if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(wd), StartMin: 8 * 60, EndMin: 18 * 60}); err != nil {
			return "", uuid.Nil, "", err
		}
	}
	if err := q.AppointmentTypeSpecialistAdd(ctx, db.AppointmentTypeSpecialistAddParams{ClinicID: c.ID, AppointmentTypeID: at.ID, SpecialistID: sp.ID}); err != nil {
		return "", uuid.Nil, "", err
	}
	loc, _ := time.LoadLocation("Europe/Berlin")
	d := time.Now().In(loc).AddDate(0, 0, 7)
	for d.Weekday() != time.Monday {
		d = d.AddDate(0, 0, -1)
	}
	return slug, at.ID, d.Format("2006-01-02"), nil
}

// changeSlot holds the i-th slot of the week and returns the event name
// the streams will see, and how to undo it.
func changeSlot(ctx context.Context, base string, typeID uuid.UUID, week string, i int) (string, func() (func(), error)) {
	t, _ := time.Parse("2006-01-02", week)
	loc, _ := time.LoadLocation("Europe/Berlin")
	day := time.Date(t.Year(), t.Month(), t.Day()+i%7, 8, 0, 0, 0, loc)
	start := day.Add(time.Duration(i/7%20) * 30 * time.Minute)
	return fmt.Sprintf("slot-any-%d", start.Unix()), func() (func(), error) { return holdSlot(ctx, base, typeID, start) }
}

// holdSlot holds start from a loopback address of its own (see
// patientTransport): a time released earlier by this generator is barred
// to the address that released it, as it would be to a patient.
func holdSlot(ctx context.Context, base string, typeID uuid.UUID, start time.Time) (func(), error) {
	client := uuid.NewString()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: patientTransport(base, 1)}
	body := fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":%q}`, typeID, start.UTC().Format(time.RFC3339), client)
	res, err := hc.Post(base+"/v1/holds", "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 {
		return nil, fmt.Errorf("hold: %d %s", res.StatusCode, raw)
	}
	m := regexp.MustCompile(`"holdId":"([^"]+)"`).FindSubmatch(raw)
	undo := func() {
		if m == nil {
			return
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, base+"/v1/holds/"+string(m[1])+"?clientId="+client, nil)
		if r, err := hc.Do(req); err == nil {
			r.Body.Close()
		}
	}
	return undo, nil
}

// runStreams opens n streams, waits until each has its initial state, then
// makes changes one at a time and times their arrival everywhere.
// change(i) names the event the i-th change will cause and returns the
// function that makes it (and gives back its undo).
func runStreams(ctx context.Context, name string, n int, url string, rss func() (int64, error), change func(i int) (string, func() (func(), error)), changes int) (streamResult, error) {
	res := streamResult{name: name, streams: n}
	time.Sleep(500 * time.Millisecond)
	before, err := rss()
	if err != nil {
		return res, err
	}
	w := &streamWatch{}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{
		MaxConnsPerHost: 0, MaxIdleConnsPerHost: n, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}}
	sem := make(chan struct{}, 64) // connect in waves, not all at once
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(sctx, http.MethodGet, url, nil)
			resp, err := client.Do(req)
			<-sem
			if err != nil {
				return
			}
			defer resp.Body.Close()
			w.read(resp.Body)
		}()
	}
	deadline := time.Now().Add(120 * time.Second)
	for w.ready.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if w.ready.Load() < int64(n) {
		return res, fmt.Errorf("%s: only %d of %d streams opened", name, w.ready.Load(), n)
	}
	time.Sleep(time.Second) // let the initial state drain
	after, err := rss()
	if err != nil {
		return res, err
	}
	res.bytesPer = float64(after-before) / float64(n)

	var worst time.Duration
	for i := range changes {
		w.reset()
		ev, do := change(i)
		w.expect(ev)
		undoFn, err := do()
		if err != nil {
			return res, err
		}
		wait := time.Now().Add(30 * time.Second)
		for w.got.Load() < int64(n) && time.Now().Before(wait) {
			time.Sleep(2 * time.Millisecond)
		}
		d := w.arrived()
		res.delivered += len(d)
		res.expected += n
		if len(d) > 0 {
			slices.Sort(d)
			worst = max(worst, d[len(d)-1])
			res.p50 += d[len(d)/2]
			res.p99 += d[int(float64(len(d)-1)*0.99)]
		}
		undoFn()
		time.Sleep(300 * time.Millisecond) // the undo's events pass
	}
	res.p50 /= time.Duration(changes)
	res.p99 /= time.Duration(changes)
	res.all = worst
	cancel()
	wg.Wait()
	return res, nil
}

// streamWatch times one awaited event across many streams: how long after
// it was sent each stream saw it.
type streamWatch struct {
	mu       sync.Mutex
	current  watch
	arrivals []time.Duration
	got      atomic.Int64 // streams that saw the awaited event
	ready    atomic.Int64 // streams that saw their first event
}

// watch is the event awaited and when its change was made.
type watch struct {
	event string
	sent  time.Time
}

// read reads one stream to its end, counting it ready at its first event
// and timing each arrival of the awaited one.
func (w *streamWatch) read(body io.Reader) {
	br := bufio.NewReaderSize(body, 16<<10)
	counted := false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
		if !counted && len(line) > 6 && string(line[:6]) == "event:" {
			counted = true
			w.ready.Add(1)
		}
		if len(line) > 7 && string(line[:7]) == "event: " {
			now := time.Now()
			ev := strings.TrimSpace(string(line[7:]))
			w.mu.Lock()
			if ev == w.current.event && !w.current.sent.IsZero() {
				w.arrivals = append(w.arrivals, now.Sub(w.current.sent))
				w.got.Add(1)
			}
			w.mu.Unlock()
		}
	}
}

// reset forgets the arrivals and awaits nothing.
func (w *streamWatch) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.arrivals = w.arrivals[:0]
	w.got.Store(0)
	w.current = watch{}
}

// expect awaits ev, sent now.
func (w *streamWatch) expect(ev string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.current = watch{event: ev, sent: time.Now()}
}

// arrived is how long after it was sent each stream so far saw the event.
func (w *streamWatch) arrived() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.arrivals)
}

// metricRSS reads the server's resident memory from /metrics.
func metricRSS(base string) (int64, error) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "process_resident_memory_bytes ") {
			f, err := strconv.ParseFloat(strings.Fields(sc.Text())[1], 64)
			return int64(f), err
		}
	}
	return 0, fmt.Errorf("no process_resident_memory_bytes on /metrics")
}

// bareScenario runs the same measurement against a bare broadcaster, a
// fresh child process per count.
func bareScenario(ctx context.Context, counts []int, changes int) ([]streamResult, error) {
	var out []streamResult
	for _, n := range counts {
		base, stop, err := startChild(ctx, os.Args[0], nil, "-bare-serve", "{addr}")
		if err != nil {
			return out, err
		}
		rss := func() (int64, error) {
			r, err := http.Get(base + "/rss")
			if err != nil {
				return 0, err
			}
			defer r.Body.Close()
			b, _ := io.ReadAll(r.Body)
			return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
		res, err := runStreams(ctx, "bare broadcaster", n, base+"/sse", rss, func(i int) (string, func() (func(), error)) {
			ev := fmt.Sprintf("slot-%d", i)
			return ev, func() (func(), error) {
				r, err := http.Post(base+"/emit?event="+ev, "text/plain", nil)
				if err != nil {
					return nil, err
				}
				r.Body.Close()
				return func() {}, nil
			}
		}, changes)
		stop()
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// bareServe is the reference: a minimal SSE broadcaster, one goroutine and
// a small buffered channel per client, sending a cell-sized payload.
func bareServe(addr string) error {
	var mu sync.Mutex
	clients := map[chan []byte]struct{}{}
	payload := strings.Repeat("x", 480)
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		ch := make(chan []byte, 16)
		mu.Lock()
		clients[ch] = struct{}{}
		mu.Unlock()
		defer func() { mu.Lock(); delete(clients, ch); mu.Unlock() }()
		fmt.Fprintf(w, "event: hello\ndata: %s\n\n", payload)
		_ = rc.Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case b := <-ch:
				if _, err := w.Write(b); err != nil {
					return
				}
				_ = rc.Flush()
			}
		}
	})
	mux.HandleFunc("/emit", func(w http.ResponseWriter, r *http.Request) {
		msg := []byte("event: " + r.URL.Query().Get("event") + "\ndata: " + payload + "\n\n")
		mu.Lock()
		for ch := range clients {
			select {
			case ch <- msg:
			default:
			}
		}
		mu.Unlock()
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/rss", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, selfRSS())
	})
	return http.ListenAndServe(addr, mux)
}

// selfRSS is this process's resident memory in bytes.
func selfRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func printStreams(rows []streamResult) {
	fmt.Printf("\n%-18s %8s %12s %10s %10s %10s %12s\n", "fan-out", "streams", "mem/stream", "p50", "p99", "all", "delivered")
	for _, r := range rows {
		fmt.Printf("%-18s %8d %10.1fKB %10s %10s %10s %6d/%-6d\n", r.name, r.streams, r.bytesPer/1024, round(r.p50), round(r.p99), round(r.all), r.delivered, r.expected)
	}
}

// streamsMode measures fan-out to live grids at each count of -streams,
// against fresh servers, and the bare broadcaster as the reference.
func streamsMode(ctx context.Context, pool *pgxpool.Pool, o options) error {
	var counts []int
	for _, f := range strings.Split(o.streams, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("-streams: %q is not a count", f)
		}
		counts = append(counts, n)
	}
	raiseFileLimit()
	rows, err := streamsScenario(ctx, pool, o.spawn, counts, o.changes)
	if err != nil {
		printStreams(rows)
		return err
	}
	bare, err := bareScenario(ctx, counts, o.changes)
	rows = append(rows, bare...)
	printStreams(rows)
	return err
}
