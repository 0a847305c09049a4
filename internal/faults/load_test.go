package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// requestTimeout bounds every request of the load: a request that takes
// longer is a hang, and a failure.
const requestTimeout = 10 * time.Second

// newClient is the load's HTTP client: every request has requestTimeout,
// and every request comes from its own loopback address (127.x.y.z, a new
// connection each time). Patients are many people, not one: the per-IP
// rate limits of the API (shared in Redis by every instance and every test
// on it) would otherwise turn most of the load into 429s.
func newClient() *http.Client {
	return &http.Client{Timeout: requestTimeout, Transport: patientTransport()}
}

// patientTransport makes every connection from its own loopback address.
func patientTransport() *http.Transport {
	return &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: randomLoopback()}}
			return d.DialContext(ctx, network, addr)
		},
	}
}

// randomLoopback is an address in 127.0.0.0/8 other than 127.0.0.1.
func randomLoopback() net.IP {
	return net.IPv4(127, byte(1+rand.IntN(254)), byte(rand.IntN(256)), byte(1+rand.IntN(254)))
}

// faultClinic is a clinic for a load: six specialists and a 10-minute
// type, so a run does not run out of slots.
func faultClinic(t *testing.T, pool *pgxpool.Pool) testkit.Clinic {
	return testkit.NewClinic(t, pool, testkit.ClinicOptions{
		Specialists: 6,
		Types: []db.AppointmentTypeInsertParams{{
			Name: "Check-up", DurationMin: 10, SlotStepMin: 10, MaxAdvanceDays: 60, MaxHoldsPerClient: 1,
		}},
	})
}

// slotStarts are the starts of every slot of a 10-minute type on the
// weekdays from the day after tomorrow for days days, 09:00 to 16:50 in
// the clinic's zone, in order.
func slotStarts(t *testing.T, c testkit.Clinic, days int) []time.Time {
	t.Helper()
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	d := time.Now().In(loc).AddDate(0, 0, 2)
	for i := 0; i < days; i++ {
		day := d.AddDate(0, 0, i)
		if day.Weekday() == time.Saturday || day.Weekday() == time.Sunday {
			continue
		}
		for m := 9 * 60; m < 17*60; m += 10 {
			out = append(out, time.Date(day.Year(), day.Month(), day.Day(), m/60, m%60, 0, 0, loc))
		}
	}
	return out
}

// call is one request of the load, as the patient saw it.
type call struct {
	Op       string // "hold" or "book"
	Instance string
	Start    time.Time
	End      time.Time
	Status   int    // 0: no answer
	Err      string // the transport error, when there was no answer
	Body     string // kept for statuses the scenario did not expect
	// RetryAfter is the answer's Retry-After header ("" when none).
	RetryAfter string
}

// booked is a booking answered 201.
type booked struct {
	ID           uuid.UUID
	SpecialistID uuid.UUID
	Start        time.Time
	Instance     string
	HoldStarted  time.Time // when its hold was asked for
	At           time.Time // when the 201 came
}

// target is where a request goes.
type target struct {
	name, url string
}

// load is N patients each doing POST hold → POST book on random slots,
// against a set of instances that may change while it runs.
type load struct {
	t       *testing.T
	client  *http.Client
	typeID  uuid.UUID
	slots   []time.Time
	targets atomic.Pointer[[]target]
	think   time.Duration
	stop    atomic.Bool
	wg      sync.WaitGroup

	mu    sync.Mutex
	calls []call
	books []booked
}

// startLoad starts n patients on the targets; finish (or the end of the
// test) stops them.
func startLoad(t *testing.T, n int, typeID uuid.UUID, slots []time.Time, targets []target) *load {
	l := &load{t: t, client: newClient(), typeID: typeID, slots: slots, think: 10 * time.Millisecond}
	l.setTargets(targets)
	for p := range n {
		l.wg.Add(1)
		go l.patient(p)
	}
	t.Cleanup(l.finish)
	return l
}

func (l *load) setTargets(ts []target) { l.targets.Store(&ts) }

func (l *load) pick(rng *rand.Rand) target {
	ts := *l.targets.Load()
	return ts[rng.IntN(len(ts))]
}

// finish stops the patients and waits for their last requests.
func (l *load) finish() {
	l.stop.Store(true)
	l.wg.Wait()
}

func (l *load) patient(p int) {
	defer l.wg.Done()
	rng := rand.New(rand.NewPCG(uint64(p), uint64(time.Now().UnixNano())))
	for !l.stop.Load() {
		client := "fault-" + uuid.NewString()
		start := l.slots[rng.IntN(len(l.slots))]
		holdStarted := time.Now()
		st, body := l.post(l.pick(rng), "hold", "/v1/holds", fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":%q}`,
			l.typeID, start.UTC().Format(time.RFC3339), client))
		if st == http.StatusCreated {
			var h struct {
				HoldID string `json:"holdId"`
			}
			if err := json.Unmarshal(body, &h); err != nil || h.HoldID == "" {
				l.t.Errorf("hold answer without a hold id: %s", body)
				return
			}
			in := l.pick(rng)
			st, body = l.post(in, "book", "/v1/appointment-types/"+l.typeID.String()+"/book",
				fmt.Sprintf(`{"holdId":%q,"clientId":%q,"patient":{"name":"Load Patient","email":"p%d@example.org"}}`, h.HoldID, client, p))
			if st == http.StatusCreated {
				var a struct {
					Appointment struct {
						ID           uuid.UUID `json:"id"`
						SpecialistID uuid.UUID `json:"specialistId"`
						Start        time.Time `json:"slotStartDate"`
					} `json:"appointment"`
				}
				if err := json.Unmarshal(body, &a); err != nil || a.Appointment.ID == uuid.Nil {
					l.t.Errorf("booking answer without an id: %s", body)
				} else {
					l.mu.Lock()
					l.books = append(l.books, booked{ID: a.Appointment.ID, SpecialistID: a.Appointment.SpecialistID,
						Start: a.Appointment.Start, Instance: in.name, HoldStarted: holdStarted, At: time.Now()})
					l.mu.Unlock()
				}
			}
		}
		time.Sleep(l.think)
	}
}

func (l *load) post(to target, op, path, body string) (int, []byte) {
	c := call{Op: op, Instance: to.name, Start: time.Now()}
	req, err := http.NewRequest(http.MethodPost, to.url+path, strings.NewReader(body))
	var res *http.Response
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		res, err = l.client.Do(req)
	}
	var b []byte
	if err == nil {
		b, err = io.ReadAll(res.Body)
		res.Body.Close()
		c.Status = res.StatusCode
		c.RetryAfter = res.Header.Get("Retry-After")
	}
	c.End = time.Now()
	if err != nil {
		c.Status = 0
		c.Err = err.Error()
	}
	if c.Status != http.StatusCreated {
		c.Body = string(b)
		if len(c.Body) > 300 {
			c.Body = c.Body[:300]
		}
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	if err != nil {
		return 0, nil
	}
	return c.Status, b
}

func (l *load) snapshot() ([]call, []booked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]call(nil), l.calls...), append([]booked(nil), l.books...)
}

// normal statuses of the patient's path under any conditions: created, the
// slot taken (409) or held (423) by someone else, the hold gone (410), or a
// rate limit (429; see newClient: rare, but the limits are not the test's).
func normal(st int) bool {
	switch st {
	case http.StatusCreated, http.StatusConflict, http.StatusLocked, http.StatusGone, http.StatusTooManyRequests:
		return true
	}
	return false
}

// summary is the one line a scenario logs.
func summary(name string, calls []call, books []booked) string {
	other := map[string]int{}
	n201, n503 := 0, 0
	for _, c := range calls {
		switch {
		case c.Status == http.StatusCreated:
			n201++
		case c.Status == http.StatusServiceUnavailable:
			n503++
		case c.Status == 0:
			other["no-answer"]++
		default:
			other[fmt.Sprint(c.Status)]++
		}
	}
	keys := make([]string, 0, len(other))
	for k := range other {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var o []string
	for _, k := range keys {
		o = append(o, fmt.Sprintf("%s×%d", k, other[k]))
	}
	return fmt.Sprintf("%s: %d requests, %d 201s (%d bookings), %d 503s, other: [%s]",
		name, len(calls), n201, len(books), n503, strings.Join(o, " "))
}

// checkBookings asserts every booking answered 201 is a confirmed row with
// what the answer said, and its audit row; that no specialist is booked
// twice at once; and that the clinic has no more confirmed rows than the
// 201s plus the booking requests whose outcome the patient could not know.
func checkBookings(t *testing.T, pool *pgxpool.Pool, clinicID uuid.UUID, books []booked, unknownOutcomes int) {
	t.Helper()
	ctx := ctxTimeout(t, 30*time.Second)
	ids := make([]uuid.UUID, len(books))
	texts := make([]string, len(books))
	want := map[uuid.UUID]booked{}
	for i, b := range books {
		ids[i], texts[i] = b.ID, b.ID.String()
		want[b.ID] = b
	}
	rows, err := pool.Query(ctx, `SELECT id, specialist_id, slot_start, status FROM bookings WHERE id = ANY($1)`, ids)
	if err != nil {
		t.Fatal(err)
	}
	found := map[uuid.UUID]bool{}
	for rows.Next() {
		var id, sp uuid.UUID
		var start time.Time
		var status string
		if err := rows.Scan(&id, &sp, &start, &status); err != nil {
			t.Fatal(err)
		}
		found[id] = true
		b := want[id]
		if status != "confirmed" || sp != b.SpecialistID || !start.Equal(b.Start) {
			t.Errorf("booking %s answered 201 by %s is %s, %s at %s in the database; the answer said confirmed, %s at %s",
				id, b.Instance, status, sp, start, b.SpecialistID, b.Start)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, b := range books {
		if !found[b.ID] {
			t.Errorf("booking %s answered 201 by %s at %s is not in the database", b.ID, b.Instance, b.At.Format("15:04:05.000"))
		}
	}

	audited := map[string]bool{}
	arows, err := pool.Query(ctx, `SELECT entity_id FROM audit_log WHERE clinic_id = $1 AND entity = 'booking' AND action = 'booking.create' AND entity_id = ANY($2)`, clinicID, texts)
	if err != nil {
		t.Fatal(err)
	}
	for arows.Next() {
		var id string
		if err := arows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		audited[id] = true
	}
	if err := arows.Err(); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, id := range texts {
		if !audited[id] {
			if missing++; missing <= 5 {
				t.Errorf("booking %s has no booking.create audit row", id)
			}
		}
	}
	if missing > 5 {
		t.Errorf("… %d bookings without an audit row in all", missing)
	}

	var overlaps, confirmed int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM bookings a JOIN bookings b
		ON a.specialist_id = b.specialist_id AND a.id < b.id
		AND tstzrange(a.slot_start, a.slot_end) && tstzrange(b.slot_start, b.slot_end)
		WHERE a.clinic_id = $1 AND a.status = 'confirmed' AND b.status = 'confirmed'`, clinicID).Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	if overlaps != 0 {
		t.Errorf("%d pairs of overlapping confirmed bookings", overlaps)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed'`, clinicID).Scan(&confirmed); err != nil {
		t.Fatal(err)
	}
	if extra := confirmed - len(books); extra < 0 || extra > unknownOutcomes {
		t.Errorf("%d confirmed rows for %d bookings answered 201 and %d booking requests with an unknown outcome", confirmed, len(books), unknownOutcomes)
	}
}

// unknownBookOutcomes counts the booking requests whose outcome the patient
// cannot know: no answer, or a 503 (the commit may have happened).
func unknownBookOutcomes(calls []call) int {
	n := 0
	for _, c := range calls {
		if c.Op == "book" && (c.Status == 0 || c.Status == http.StatusServiceUnavailable) {
			n++
		}
	}
	return n
}

// openPool opens a small pool on url for the test's own queries.
func openPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// postJSON is one request outside the load.
func postJSON(client *http.Client, url, body string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// isTimeout says whether a transport error was the client's timeout.
func isTimeout(msg string) bool {
	return strings.Contains(msg, "Client.Timeout") || strings.Contains(msg, context.DeadlineExceeded.Error())
}
