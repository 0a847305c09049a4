package main

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
)

// suite runs every scenario against fresh server processes and prints one
// table, each figure beside its reference measured in the same run.
func suite(ctx context.Context, pool *pgxpool.Pool, o options) error {
	raiseFileLimit()
	// The load generator's own address is the "load balancer" of the
	// second throughput run; patients of the first come from addresses of
	// their own in 127.0.0.0/8, never 127.0.0.1 (patientTransport).
	base, stop, err := startChild(ctx, o.spawn, loadEnv("TRUSTED_PROXIES=127.0.0.1"), "serve")
	if err != nil {
		return err
	}
	o.url = base
	book, err := bookScenario(ctx, pool, o)
	if err != nil {
		stop()
		return err
	}
	tps, err := pgbenchReference(ctx, o.databaseURL, pool, book)
	if err != nil {
		stop()
		return err
	}
	viaProxy := o
	viaProxy.viaProxy = true
	proxied, err := bookScenario(ctx, pool, viaProxy)
	if err != nil {
		stop()
		return err
	}
	pages, err := pagesScenario(ctx, pool, base)
	stop()
	if err != nil {
		return err
	}
	base, stop, err = startChild(ctx, o.spawn, loadEnv(), "serve")
	if err != nil {
		return err
	}
	hot, err := hotScenario(ctx, pool, base, o.attempts)
	stop()
	if err != nil {
		return err
	}
	rush, err := rushChild(ctx, pool, o)
	if err != nil {
		return err
	}
	base, stop, err = startChild(ctx, o.spawn, loadEnv(), "serve")
	if err != nil {
		return err
	}
	wl, err := waitlistScenario(ctx, pool, base, waitlistCancels)
	stop()
	if err != nil {
		return err
	}
	rt, err := roundtripsScenario(ctx, pool, o.spawn, o.bookings)
	if err != nil {
		return err
	}
	printRoundtrips(rt)
	counts := []int{1000, 5000, 10000}
	streams, err := streamsScenario(ctx, pool, o.spawn, counts, o.changes)
	if err != nil {
		return err
	}
	bare, err := bareScenario(ctx, counts, o.changes)
	if err != nil {
		return err
	}

	fmt.Printf("\n%-40s %-44s %-30s\n", "scenario", "measured", "reference (same run)")
	fmt.Printf("%-40s %-44s %-30s\n", fmt.Sprintf("throughput, %d patients", o.patients),
		fmt.Sprintf("%.1f bookings/s (book p99 %s)", book.perSecond, round(book.p99["book"])),
		fmt.Sprintf("pgbench %.0f tps (%.1f%%)", tps, 100*book.perSecond/tps))
	fmt.Printf("%-40s %-44s %-30s\n", "  the same through a proxy (keep-alive)",
		fmt.Sprintf("%.1f bookings/s (book p99 %s)", proxied.perSecond, round(proxied.p99["book"])),
		fmt.Sprintf("pgbench %.0f tps (%.1f%%)", tps, 100*proxied.perSecond/tps))
	fmt.Printf("%-40s %-44s %-30s\n", fmt.Sprintf("hot slot, %d attempts", hot.attempts),
		fmt.Sprintf("%d booked, %.1f%% of losers without PG", hot.confirmed, 100*hot.noDB/float64(max(hot.losers, 1))),
		fmt.Sprintf("attempt p50 %s p99 %s", round(hot.p50), round(hot.p99)))
	fmt.Printf("%-40s %-44s %-30s\n", fmt.Sprintf("waitlist: cancel to offer, %d cancels", wl.cancels),
		fmt.Sprintf("p50 %s p99 %s max %s (%d offered)", round(wl.p50), round(wl.p99), round(wl.worst), wl.offered),
		fmt.Sprintf("under grid load: %.0f pages/s", wl.load))
	fmt.Printf("%-40s %-44s %-30s\n", fmt.Sprintf("Redis per booking, %d one by one", rt.bookings),
		fmt.Sprintf("%.1f commands sent (%.1f scripts)", rt.perBooking(), float64(rt.all.scripts())/float64(max(rt.bookings, 1))),
		fmt.Sprintf("%.1f executed with scripts' calls", float64(rt.all.total())/float64(max(rt.bookings, 1))))
	fmt.Printf("%-40s %-44s %-30s\n", "  sent per step", rt.perStep(), "target: at most 8 in all")
	printRushRow(rush)
	printFloorRow(book, proxied, pages.trivial, tps)
	fmt.Printf("%-40s %-44s %-30s\n", fmt.Sprintf("grid page, a watched week, %d conns", pagesConns), fmt.Sprintf("%.0f req/s", pages.grid), fmt.Sprintf("/healthz %.0f req/s (%.2f)", pages.trivial, pages.grid/pages.trivial))
	fmt.Printf("%-40s %-44s %-30s\n", "type page as linked, no week/cookie", fmt.Sprintf("%.0f req/s", pages.linked), fmt.Sprintf("/healthz %.0f req/s (%.2f)", pages.trivial, pages.linked/pages.trivial))
	fmt.Printf("%-40s %-44s %-30s\n", "clinic page, no cookie", fmt.Sprintf("%.0f req/s", pages.clinic), fmt.Sprintf("/healthz %.0f req/s (%.2f)", pages.trivial, pages.clinic/pages.trivial))
	fmt.Printf("%-40s %-44s %-30s\n", "timeslots (cached week)", fmt.Sprintf("%.0f req/s", pages.timeslots), fmt.Sprintf("/healthz %.0f req/s (%.2f)", pages.trivial, pages.timeslots/pages.trivial))
	for i, s := range streams {
		b := bare[i]
		fmt.Printf("%-40s %-44s %-30s\n", fmt.Sprintf("fan-out, %d streams", s.streams),
			fmt.Sprintf("%.1fKB/stream, p50 %s p99 %s all %s", s.bytesPer/1024, round(s.p50), round(s.p99), round(s.all)),
			fmt.Sprintf("bare %.1fKB, %s/%s/%s", b.bytesPer/1024, round(b.p50), round(b.p99), round(b.all)))
	}
	return nil
}

// printFloorRow sets the booking flow beside its floor on this machine: a
// booking's four requests at the trivial endpoint's rate, plus one insert
// at pgbench's.
func printFloorRow(book, proxied bookResult, healthz, tps float64) {
	floor := 1 / (4/healthz + 1/tps)
	fmt.Printf("%-40s %-44s %-30s\n", "booking flow vs its floor",
		fmt.Sprintf("%.1f bookings/s: %.2f of floor (proxied %.2f)", book.perSecond, book.perSecond/floor, proxied.perSecond/floor),
		fmt.Sprintf("floor 1/(4/healthz + 1/pgbench) = %.0f/s; target 0.20", floor))
}

// pgbenchReference inserts into the same bookings table with pgbench: the
// database's own rate on this machine.
func pgbenchReference(ctx context.Context, databaseURL string, pool *pgxpool.Pool, book bookResult) (float64, error) {
	q := db.New(pool)
	sps, err := q.SpecialistListByClinic(ctx, book.clinicID)
	if err != nil || len(sps) == 0 {
		return 0, fmt.Errorf("pgbench setup: %v", err)
	}
	types, err := q.AppointmentTypeListByClinic(ctx, book.clinicID)
	if err != nil || len(types) == 0 {
		return 0, fmt.Errorf("pgbench setup: %v", err)
	}
	var ids []string
	for _, sp := range sps {
		ids = append(ids, "'"+sp.ID.String()+"'::uuid")
	}
	script := fmt.Sprintf(`\set slot random(1, 50000000)
\set sp random(1, %d)
INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, patient_name, patient_email, client_id)
VALUES ('%s', '%s', (ARRAY[%s])[:sp], timestamptz '2030-01-01 00:00Z' + (:slot * interval '30 minutes'), timestamptz '2030-01-01 00:30Z' + (:slot * interval '30 minutes'), 'Bench', 'b@example.org', 'pgbench')
ON CONFLICT (specialist_id, slot_start, clinic_id) WHERE status = 'confirmed' DO NOTHING;
`, len(ids), book.clinicID, types[0].ID, strings.Join(ids, ","))
	f, err := os.CreateTemp("", "pgbench-*.sql")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(script); err != nil {
		return 0, err
	}
	f.Close()
	out, err := exec.CommandContext(ctx, "pgbench", "-n", "-f", f.Name(), "-c", "8", "-j", "2", "-T", "10", databaseURL).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %v: %s", err, out)
	}
	m := regexp.MustCompile(`tps = ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps: %s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// pagesResult is requests per second of the week's grid page, the type
// page as the clinic page links it (no week, no cookie: a patient's first
// request), the clinic page (no cookie: where that patient comes from),
// the cached week of timeslots, and a trivial endpoint of the same server.
type pagesResult struct{ grid, linked, clinic, timeslots, trivial float64 }

// pagesConns is how many connections the pages scenario loads each with.
const pagesConns = 64

// pagesScenario loads each with pagesConns connections for 8 s, while a
// live grid watches the week, as a week patients book in is watched.
func pagesScenario(ctx context.Context, pool *pgxpool.Pool, base string) (pagesResult, error) {
	slug, typeID, week, err := setupStreamClinic(ctx, pool)
	if err != nil {
		return pagesResult{}, err
	}
	page := fmt.Sprintf("%s/c/%s/book/%s?week=%s", base, slug, typeID, week)
	unwatch, err := watchWeek(ctx, fmt.Sprintf("%s/c/%s/book/%s/live?week=%s", base, slug, typeID, week))
	if err != nil {
		return pagesResult{}, err
	}
	defer unwatch()
	var r pagesResult
	t, _ := time.Parse("2006-01-02", week)
	url := fmt.Sprintf("%s/v1/appointment-types/%s/timeslots?from=%s&to=%s", base, typeID, week, t.AddDate(0, 0, 6).Format("2006-01-02"))
	if r.timeslots, err = hammer(ctx, url, pagesConns, 8*time.Second); err != nil {
		return r, err
	}
	if r.grid, err = hammer(ctx, page, pagesConns, 8*time.Second); err != nil {
		return r, err
	}
	linked := fmt.Sprintf("%s/c/%s/book/%s", base, slug, typeID)
	unwatchLinked, err := watchLinked(ctx, base, linked)
	if err != nil {
		return r, err
	}
	defer unwatchLinked()
	if r.linked, err = hammer(ctx, linked, pagesConns, 8*time.Second); err != nil {
		return r, err
	}
	if r.clinic, err = hammer(ctx, fmt.Sprintf("%s/c/%s", base, slug), pagesConns, 8*time.Second); err != nil {
		return r, err
	}
	r.trivial, err = hammer(ctx, base+"/healthz", pagesConns, 8*time.Second)
	return r, err
}

// sseConnect is the stream address a booking page's grid connects to.
var sseConnect = regexp.MustCompile(`sse-connect="([^"]+)"`)

// stateParam is the state a stream address carries.
var stateParam = regexp.MustCompile(`&state=[^&]*`)

// watchLinked opens the page as a browser does and watches the week it
// shows by its own stream (its default week, today's at the clinic).
func watchLinked(ctx context.Context, base, page string) (stop func(), err error) {
	res, err := http.Get(page)
	if err != nil {
		return nil, fmt.Errorf("the linked page: %w", err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the linked page: status %d, %v", res.StatusCode, err)
	}
	m := sseConnect.FindSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("the linked page has no live grid")
	}
	// Without the state the page showed, the stream sends the week at
	// once, which watchWeek waits for.
	stream := stateParam.ReplaceAllString(html.UnescapeString(string(m[1])), "")
	return watchWeek(ctx, base+stream)
}

// watchWeek opens a live grid's stream and reads it until stop; it
// returns once the stream's first event has come.
func watchWeek(ctx context.Context, url string) (stop func(), err error) {
	wctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(wctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch the week: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		cancel()
		return nil, fmt.Errorf("watch the week: status %d", res.StatusCode)
	}
	br := bufio.NewReader(res.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			res.Body.Close()
			cancel()
			return nil, fmt.Errorf("watch the week: %w", err)
		}
		if strings.HasPrefix(line, "event:") {
			break
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, br)
	}()
	return func() { cancel(); res.Body.Close(); <-done }, nil
}

// hammer is a small wrk: conns loops of GET for d; requests per second.
func hammer(ctx context.Context, url string, conns int, d time.Duration) (float64, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}}
	var n, bad atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				res, err := client.Get(url)
				if err != nil {
					bad.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					bad.Add(1)
					continue
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		return 0, fmt.Errorf("%s: %d failed requests", url, bad.Load())
	}
	return float64(n.Load()) / d.Seconds(), nil
}
