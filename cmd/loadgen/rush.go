package main

// The rush: patients arrive evenly over a short window, each loads the
// booking page of one week, holds the first free time it sees (the next
// one on SLOT_HELD or SLOT_TAKEN, three tries at most) and books it. The
// week has a fixed number of slots, far fewer than patients, so most of
// them lose; every slot must end up booked exactly once.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
)

// rushOptions shape the rush.
type rushOptions struct {
	patients int
	window   time.Duration
	slots    int
	tries    int
}

func addRushFlags(fs *flag.FlagSet, o *rushOptions) {
	fs.IntVar(&o.patients, "rush-patients", 5000, "-mode rush: patients arriving")
	fs.DurationVar(&o.window, "rush-window", 10*time.Second, "-mode rush: over how long they arrive, evenly")
	fs.IntVar(&o.slots, "rush-slots", 200, "-mode rush: bookable slots of the week they all want")
	fs.IntVar(&o.tries, "rush-tries", 3, "-mode rush: holds a patient tries before giving up")
}

// rushSpecialists and rushDays shape the rush clinic: five specialists
// working Monday to Friday, their hours cut so the week has exactly the
// slots asked for.
const (
	rushSpecialists = 5
	rushDays        = 5
)

// rushResult is the rush's outcome.
type rushResult struct {
	patients, slots int
	window          time.Duration
	// Per patient: booked, found no free time on the page, lost every
	// hold tried (or the booking) to another patient, or failed otherwise.
	booked, none, lost, failed int64
	fiveXX                     int64 // answers of 5xx, all requests
	statuses                   map[string]int
	page, hold, book           latencySummary
	rows, duplicates           int64 // confirmed rows; slots with more than one
	left                       int   // bookable slots after the rush
}

// latencySummary is a step's percentiles.
type latencySummary struct {
	n             int
	p50, p99, max time.Duration
}

func summarize(l *latencies) latencySummary {
	slices.Sort(l.d)
	if len(l.d) == 0 {
		return latencySummary{}
	}
	return latencySummary{n: len(l.d), p50: l.pct(50), p99: l.pct(99), max: l.d[len(l.d)-1]}
}

// check is what must hold whatever the timing: each slot booked at most
// once, and one confirmed row per 201.
func (r rushResult) check() error {
	if r.duplicates != 0 || r.rows != r.booked {
		return fmt.Errorf("rush: %d slots booked twice, %d confirmed rows for %d answers of 201", r.duplicates, r.rows, r.booked)
	}
	return nil
}

// rushMode is -mode rush.
func rushMode(ctx context.Context, pool *pgxpool.Pool, o options) error {
	raiseFileLimit()
	_, err := rushChild(ctx, pool, o)
	return err
}

// rushChild runs the rush against a fresh server from -spawn, trusting
// this process as its load balancer, so each patient's own address (in
// X-Forwarded-For) meets the per-address limits, which stay as the server
// sets them. It prints the figures and checks them.
func rushChild(ctx context.Context, pool *pgxpool.Pool, o options) (rushResult, error) {
	base, stop, err := startChild(ctx, o.spawn, loadEnv("TRUSTED_PROXIES=127.0.0.1/32"), "serve")
	if err != nil {
		return rushResult{}, err
	}
	r, err := rushScenario(ctx, pool, base, o.rush)
	stop()
	if err != nil {
		return r, err
	}
	printRush(r)
	return r, r.check()
}

// rush is one rush under way.
type rush struct {
	client                *http.Client
	base, pageURL, typeID string
	page, hold, book      latencies
	tries                 int
	booked, none, lost    atomic.Int64
	failed, fiveXX        atomic.Int64
	mu                    sync.Mutex
	statuses              map[string]int
}

// rushScenario builds the clinic, counts its week's slots through the
// API, lets the patients in and checks PostgreSQL afterwards.
func rushScenario(ctx context.Context, pool *pgxpool.Pool, base string, o rushOptions) (rushResult, error) {
	clinicID, slug, typeID, week, err := setupRushClinic(ctx, pool, o.slots)
	if err != nil {
		return rushResult{}, fmt.Errorf("rush setup: %w", err)
	}
	t := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second}
	defer t.CloseIdleConnections()
	r := &rush{
		client: &http.Client{Timeout: 30 * time.Second, Transport: t},
		base:   base, typeID: typeID.String(), statuses: map[string]int{}, tries: max(o.tries, 1),
		pageURL: fmt.Sprintf("%s/c/%s/book/%s?week=%s", base, slug, typeID, week),
	}
	n, err := r.bookable(ctx, week)
	if err != nil {
		return rushResult{}, err
	}
	if n != o.slots {
		return rushResult{}, fmt.Errorf("rush setup: the week has %d bookable slots, want %d", n, o.slots)
	}
	fmt.Printf("rush: %d patients over %s for %d slots (%d specialists, Monday to Friday of %s); each patient its own client id and X-Forwarded-For address, per-address limits as the server sets them\n",
		o.patients, o.window, o.slots, rushSpecialists, week)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range o.patients {
		if d := time.Until(began.Add(o.window * time.Duration(i) / time.Duration(o.patients))); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.patient(ctx, i)
		}()
	}
	wg.Wait()
	res := rushResult{
		patients: o.patients, slots: o.slots, window: o.window,
		booked: r.booked.Load(), none: r.none.Load(), lost: r.lost.Load(), failed: r.failed.Load(), fiveXX: r.fiveXX.Load(),
		statuses: r.statuses, page: summarize(&r.page), hold: summarize(&r.hold), book: summarize(&r.book),
	}
	fmt.Printf("rush: all patients done %s after the first arrived\n", round(time.Since(began)))
	if res.left, err = r.bookable(ctx, week); err != nil {
		return res, err
	}
	err = pool.QueryRow(ctx, `SELECT count(*), count(*) - count(DISTINCT (specialist_id, slot_start))
		FROM bookings WHERE clinic_id = $1 AND status = 'confirmed'`, clinicID).Scan(&res.rows, &res.duplicates)
	return res, err
}

// patient is the i-th patient's visit: it loads the page and holds the
// first free time on it; on SLOT_HELD or SLOT_TAKEN the next free time it
// saw, and once it has tried all it saw, the page again (a live grid would
// have shown it the change); r.tries holds at most. A hold it gets, it
// books.
func (r *rush) patient(ctx context.Context, i int) {
	from := map[string]string{"X-Forwarded-For": fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)}
	client := uuid.NewString()
	tries := 0
	for {
		st, body := r.do(ctx, &r.page, "page", http.MethodGet, r.pageURL, nil, from)
		if st != http.StatusOK {
			r.failed.Add(1)
			return
		}
		free := freeStarts(body)
		if len(free) == 0 && tries == 0 {
			r.none.Add(1)
			return
		}
		for _, start := range free {
			if tries == r.tries {
				break
			}
			tries++
			st, body = r.do(ctx, &r.hold, "hold", http.MethodPost, r.base+"/v1/holds", map[string]string{
				"appointmentTypeId": r.typeID, "slotStartDate": start, "clientId": client,
			}, from)
			switch st {
			case http.StatusCreated:
				r.bookHeld(ctx, i, client, body, from)
				return
			case http.StatusConflict, http.StatusLocked:
			default:
				r.failed.Add(1)
				return
			}
		}
		if len(free) == 0 || tries == r.tries {
			r.lost.Add(1)
			return
		}
	}
}

// bookHeld books the hold the answer body names.
func (r *rush) bookHeld(ctx context.Context, i int, client string, held []byte, from map[string]string) {
	var h struct {
		HoldID string `json:"holdId"`
	}
	_ = json.Unmarshal(held, &h)
	st, _ := r.do(ctx, &r.book, "book", http.MethodPost, r.base+"/v1/appointment-types/"+r.typeID+"/book", map[string]any{
		"holdId": h.HoldID, "clientId": client,
		"patient": map[string]string{"name": "Rush Patient", "email": fmt.Sprintf("rush%d@example.org", i)},
	}, withHeader(from, "Idempotency-Key", uuid.NewString()))
	switch st {
	case http.StatusCreated:
		r.booked.Add(1)
	case http.StatusConflict, http.StatusGone:
		r.lost.Add(1)
	default:
		r.failed.Add(1)
	}
}

// do sends one request, timing it into l; it returns the status (0: no
// answer) and the body, and counts the status under step.
func (r *rush) do(ctx context.Context, l *latencies, step, method, url string, body any, headers map[string]string) (int, []byte) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	st, raw := 0, []byte(nil)
	if res, err := r.client.Do(req); err == nil {
		raw, err = io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil {
			st = res.StatusCode
		}
	}
	l.add(time.Since(start))
	if st >= 500 {
		r.fiveXX.Add(1)
	}
	key := fmt.Sprintf("%s %d", step, st)
	if st >= 300 {
		key += errorCode(raw)
	}
	r.mu.Lock()
	r.statuses[key]++
	r.mu.Unlock()
	return st, raw
}

var errorCodeField = regexp.MustCompile(`"code"\s*:\s*"([A-Z_]+)"`)

// errorCode is " CODE" for an API error's body, else "".
func errorCode(body []byte) string {
	if m := errorCodeField.FindSubmatch(body); m != nil {
		return " " + string(m[1])
	}
	return ""
}

// bookable counts the week's bookable slots through the API: each start
// once per specialist free then.
func (r *rush) bookable(ctx context.Context, week string) (int, error) {
	monday, _ := time.Parse(time.DateOnly, week)
	url := fmt.Sprintf("%s/v1/appointment-types/%s/timeslots?from=%s&to=%s", r.base, r.typeID, week, monday.AddDate(0, 0, 6).Format(time.DateOnly))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	res, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("timeslots: status %d", res.StatusCode)
	}
	var out struct {
		Timeslots []struct {
			SpecialistIDs []string `json:"specialistIds"`
		} `json:"timeslots"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("timeslots: %w", err)
	}
	n := 0
	for _, s := range out.Timeslots {
		n += len(s.SpecialistIDs)
	}
	return n, nil
}

// freeStarts are the starts of the page's free cells, in page order: what
// the hold form of each would post.
func freeStarts(page []byte) []string {
	var out []string
	for {
		i := bytes.Index(page, []byte(`data-state="free"`))
		if i < 0 {
			return out
		}
		open := bytes.LastIndex(page[:i], []byte("<li"))
		end := bytes.IndexByte(page[i:], '>')
		if open < 0 || end < 0 {
			return out
		}
		tag := page[open : i+end]
		page = page[i+end:]
		const attr = `data-start="`
		if j := bytes.Index(tag, []byte(attr)); j >= 0 {
			v := tag[j+len(attr):]
			if k := bytes.IndexByte(v, '"'); k > 0 {
				out = append(out, string(v[:k]))
			}
		}
	}
}

// setupRushClinic makes a clinic whose type has exactly slots bookable
// slots in the week after next: rushSpecialists specialists, Monday to
// Friday, each specialist-day a run of 30-minute slots from 08:00 (from
// midnight when longer than 16 hours), the slots spread over them evenly.
func setupRushClinic(ctx context.Context, pool *pgxpool.Pool, slots int) (clinicID uuid.UUID, slug string, typeID uuid.UUID, week string, err error) {
	pairs := rushSpecialists * rushDays
	if slots < 1 || slots > pairs*48 {
		return uuid.Nil, "", uuid.Nil, "", fmt.Errorf("%d slots: want 1 to %d", slots, pairs*48)
	}
	q := db.New(pool)
	slug = fmt.Sprintf("rush-%d", time.Now().UnixNano())
	c, err := q.ClinicUpsert(ctx, db.ClinicUpsertParams{Slug: slug, Name: "Rush " + slug, Timezone: "Europe/Berlin"})
	if err != nil {
		return uuid.Nil, "", uuid.Nil, "", err
	}
	at, err := q.AppointmentTypeInsert(ctx, db.AppointmentTypeInsertParams{ClinicID: c.ID, Name: "Rush", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1})
	if err != nil {
		return uuid.Nil, "", uuid.Nil, "", err
	}
	for s := range rushSpecialists {
		sp, err := q.SpecialistInsert(ctx, db.SpecialistInsertParams{ClinicID: c.ID, Name: fmt.Sprintf("Rush %d", s+1), Priority: int32(s), Active: true})
		if err != nil {
			return uuid.Nil, "", uuid.Nil, "", err
		}
		for d := range rushDays {
			k := s*rushDays + d
			n := slots / pairs
			if k < slots%pairs {
				n++
			}
			if n == 0 {
				continue
			}
			from := 8 * 60
			if n > 32 {
				from = 0
			}
			if err := q.WeeklyHoursInsert(ctx, db.WeeklyHoursInsertParams{ClinicID: c.ID, SpecialistID: sp.ID, Weekday: int16(time.Monday) + int16(d), StartMin: int32(from), EndMin: int32(from + 30*n)}); err != nil {
				return uuid.Nil, "", uuid.Nil, "", err
			}
		}
		if err := q.AppointmentTypeSpecialistAdd(ctx, db.AppointmentTypeSpecialistAddParams{ClinicID: c.ID, AppointmentTypeID: at.ID, SpecialistID: sp.ID}); err != nil {
			return uuid.Nil, "", uuid.Nil, "", err
		}
	}
	return c.ID, slug, at.ID, nextWeek(), nil
}

// nextWeek is the Monday (in Berlin) of the week a week from now: all of
// that week is in the future.
func nextWeek() string {
	loc, _ := time.LoadLocation("Europe/Berlin")
	d := time.Now().In(loc).AddDate(0, 0, 7)
	for d.Weekday() != time.Monday {
		d = d.AddDate(0, 0, -1)
	}
	return d.Format(time.DateOnly)
}

// printRush prints the rush's figures beside their targets.
func printRush(r rushResult) {
	fmt.Printf("\nrush: %d patients over %s, %d slots: %d booked, %d found no free time, %d lost every race (409/423), %d failed otherwise; %d answers of 5xx\n",
		r.patients, r.window, r.slots, r.booked, r.none, r.lost, r.failed, r.fiveXX)
	fmt.Printf("%-6s %7s %9s %9s %9s %s\n", "step", "count", "p50", "p99", "max", "target (p99)")
	for _, s := range []struct {
		name   string
		l      latencySummary
		target string
	}{{"page", r.page, "< 300ms"}, {"hold", r.hold, "< 100ms"}, {"book", r.book, ""}} {
		fmt.Printf("%-6s %7d %9s %9s %9s %s\n", s.name, s.l.n, round(s.l.p50), round(s.l.p99), round(s.l.max), s.target)
	}
	var keys []string
	for k := range r.statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, r.statuses[k]))
	}
	fmt.Printf("answers: %s\n", strings.Join(parts, ", "))
	fmt.Printf("check: %d confirmed rows for %d answers of 201, %d slots booked twice, %d slots left bookable\n", r.rows, r.booked, r.duplicates, r.left)
}

// printRushRow is the rush's row of the suite's table.
func printRushRow(r rushResult) {
	fmt.Printf("%-40s %-44s %-30s\n", fmt.Sprintf("rush, %d patients in %s, %d slots", r.patients, r.window, r.slots),
		fmt.Sprintf("%d/%d booked, %d 5xx; p99 page %s hold %s", r.booked, r.slots, r.fiveXX, round(r.page.p99), round(r.hold.p99)),
		fmt.Sprintf("targets: all booked, 0 5xx, page < 300ms, hold < 100ms (%d found none, %d lost)", r.none, r.lost))
}
