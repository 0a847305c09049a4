package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// patientTransport is one simulated patient's connections. Against a
// loopback server each patient comes from an address of its own in
// 127.0.0.0/8, as patients come from addresses of their own: the server's
// per-address rate limits then limit each patient, not the whole run.
func patientTransport(base string, conns int) *http.Transport {
	t := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	if u, err := url.Parse(base); err == nil {
		if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() && ip.To4() != nil {
			local := net.IPv4(127, byte(1+rand.IntN(250)), byte(rand.IntN(256)), byte(1+rand.IntN(250)))
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: local}, Timeout: 5 * time.Second}
			t.DialContext = d.DialContext
		}
	}
	return t
}

// hotResult is the hot-slot scenario's outcome.
type hotResult struct {
	attempts, confirmed, losers int
	noDB                        float64 // losers answered without a PostgreSQL round trip
	p50, p99                    time.Duration
}

// hotScenario: n patients, released together, each trying to hold and book
// the same slot of the same specialist. Exactly one may book; the losers
// should be answered by the hold and the bitmap, without PostgreSQL,
// which the server counts on /metrics.
func hotScenario(ctx context.Context, pool *pgxpool.Pool, base string, n int) (hotResult, error) {
	_, typeID, week, err := setupStreamClinic(ctx, pool)
	if err != nil {
		return hotResult{}, fmt.Errorf("setup: %w", err)
	}
	var spID uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT specialist_id FROM appointment_type_specialists WHERE appointment_type_id = $1`, typeID).Scan(&spID); err != nil {
		return hotResult{}, err
	}
	loc, _ := time.LoadLocation("Europe/Berlin")
	day, _ := time.ParseInLocation("2006-01-02", week, loc)
	start := day.Add(10 * time.Hour)
	// The patients have the day open: its slots are computed once.
	warm := &http.Client{Timeout: 10 * time.Second}
	res, err := warm.Get(fmt.Sprintf("%s/v1/appointment-types/%s/timeslots?from=%s&to=%s&specialistId=%s", base, typeID, week, week, spID))
	if err != nil {
		return hotResult{}, err
	}
	res.Body.Close()
	before, err := scrapeNoDB(base)
	if err != nil {
		return hotResult{}, err
	}

	var (
		ready, wg sync.WaitGroup
		gate      = make(chan struct{})
		mu        sync.Mutex
		lat       []time.Duration
		outcomes  = map[string]int{}
		confirmed atomic.Int64
	)
	ready.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := hotPatient{client: &http.Client{Timeout: 30 * time.Second, Transport: patientTransport(base, 2)},
				base: base, id: fmt.Sprintf("hot-%d-%s", i, uuid.NewString()[:8])}
			defer p.client.CloseIdleConnections()
			ready.Done()
			<-gate
			began := time.Now()
			outcome := p.holdAndBook(typeID, spID, start)
			if outcome == "book 201" {
				confirmed.Add(1)
			}
			d := time.Since(began)
			mu.Lock()
			lat = append(lat, d)
			outcomes[outcome]++
			mu.Unlock()
		}()
	}
	ready.Wait()
	close(gate)
	wg.Wait()

	after, err := scrapeNoDB(base)
	if err != nil {
		return hotResult{}, err
	}
	slices.Sort(lat)
	r := hotResult{attempts: n, confirmed: int(confirmed.Load()), noDB: after - before,
		p50: lat[len(lat)/2], p99: lat[int(0.99*float64(len(lat)-1))]}
	r.losers = outcomes["hold 423"] + outcomes["hold 409"] + outcomes["book 409"]
	fmt.Printf("hot slot: %d attempts: %v\n", n, outcomes)
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE specialist_id = $1 AND slot_start = $2 AND status = 'confirmed'`, spID, start).Scan(&rows); err != nil {
		return r, err
	}
	fmt.Printf("hot slot: %d confirmed answers, %d confirmed rows; %d losers, %.0f answered without PostgreSQL (%.1f%%); attempt p50 %s p99 %s\n",
		r.confirmed, rows, r.losers, r.noDB, 100*r.noDB/float64(max(r.losers, 1)), round(r.p50), round(r.p99))
	if r.confirmed != 1 || rows != 1 {
		return r, fmt.Errorf("hot slot: %d confirmations and %d rows, want exactly one", r.confirmed, rows)
	}
	if r.losers != n-1 {
		return r, fmt.Errorf("hot slot: %d of %d losers were told SLOT_HELD or SLOT_TAKEN: %v", r.losers, n-1, outcomes)
	}
	return r, nil
}

var noDBLine = regexp.MustCompile(`(?m)^clinic_outcomes_without_db_total\{outcome="SLOT_(?:HELD|TAKEN)",what="(?:hold|booking)"\} ([0-9.e+]+)$`)

// scrapeNoDB reads the server's count of losers answered without PostgreSQL.
func scrapeNoDB(base string) (float64, error) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s/metrics: %d (a server started by hand needs METRICS_PUBLIC=true)", base, res.StatusCode)
	}
	var buf strings.Builder
	if _, err := bufio.NewReader(res.Body).WriteTo(&buf); err != nil {
		return 0, err
	}
	var sum float64
	for _, m := range noDBLine.FindAllStringSubmatch(buf.String(), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum, nil
}

// hotPatient is one patient of the hot slot, with a client of its own.
type hotPatient struct {
	client   *http.Client
	base, id string
}

// holdAndBook holds the slot and, if that worked, books it; the outcome
// is the step it got to and its status ("hold 423", "book 201").
func (p hotPatient) holdAndBook(typeID, spID uuid.UUID, start time.Time) string {
	st, body := p.post("/v1/holds", map[string]string{
		"appointmentTypeId": typeID.String(), "specialistId": spID.String(),
		"slotStartDate": start.UTC().Format(time.RFC3339), "clientId": p.id,
	})
	if st != 201 {
		return "hold " + strconv.Itoa(st)
	}
	var h struct {
		HoldID string `json:"holdId"`
	}
	_ = json.Unmarshal(body, &h)
	st, _ = p.post("/v1/appointment-types/"+typeID.String()+"/book", map[string]any{
		"holdId": h.HoldID, "clientId": p.id,
		"patient": map[string]string{"name": "Hot Patient", "email": "hot@example.org"},
	})
	return "book " + strconv.Itoa(st)
}

// post sends body as JSON and returns the status (0: no answer) and the
// answer's body.
func (p hotPatient) post(path string, body any) (int, []byte) {
	b, _ := json.Marshal(body)
	res, err := p.client.Post(p.base+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var buf strings.Builder
	_, _ = bufio.NewReader(res.Body).WriteTo(&buf)
	return res.StatusCode, []byte(buf.String())
}
