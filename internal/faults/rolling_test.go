package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

// A rolling restart under load: two instances behind a round robin, as
// behind a proxy; patients read the times, hold and book (each booking
// with an Idempotency-Key), and a booking page's stream stays open. Each
// instance in turn gets SIGTERM, drains, and a new process starts on its
// port. No request a server accepted may fail (no 5xx, no reset, no hang):
// only connections refused by a stopped instance, or reset in the kernel's
// queue as its listener closed, are sent to the other instance, and they
// are counted apart. No booking is lost or made twice, and the stream
// connects again and starts with the page's state each time.
//
// It runs in `make test-upgrade` (ROLLING_RESTART=1); FAULTS_LONG=1
// stretches its phases.
func TestRollingRestartUnderLoad(t *testing.T) {
	if os.Getenv("ROLLING_RESTART") != "1" {
		t.Skip("set ROLLING_RESTART=1 (make test-upgrade) to restart two instances in turn under load")
	}
	url := testkit.FreshDB(t)
	migrate(t, url)
	pool := openPool(t, url)
	c := faultClinic(t, pool)
	typeID := c.Types[0].ID
	all := slotStarts(t, c, 28)
	inFlight, slots := all[:4], all[4:] // two requests in flight at each SIGTERM
	env := func(port int) map[string]string {
		return map[string]string{
			"ADDR":                     fmt.Sprintf("127.0.0.1:%d", port),
			"DATABASE_URL":             url,
			"REDIS_URL":                testRedisURL(),
			"MIGRATE_ON_START":         "true", // as a new release starts: nothing pending, under the lock
			"SHUTDOWN_TIMEOUT_SECONDS": "10",
			"DB_MAX_CONNS":             "10",
		}
	}
	ports := []int{testkit.FreePort(t), testkit.FreePort(t)}
	servers := []*server{startServer(t, "a1", env(ports[0])), startServer(t, "b1", env(ports[1]))}
	started := append([]*server(nil), servers...)
	rr := newRoundRobin(servers[0].URL, servers[1].URL)

	w := watch(rr, fmt.Sprintf("/c/%s/book/%s/live?week=%s", c.Slug, typeID, slots[0].Format("2006-01-02")))
	l := startRollingLoad(t, rr, patients(4), typeID, slots)
	phase := scaled(2 * time.Second)
	time.Sleep(phase)
	var steps []string
	for i, name := range []string{"a2", "b2"} {
		next, step := restartInPlace(t, rr, servers[i], name, env(ports[i]), typeID, inFlight[2*i:2*i+2])
		servers[i] = next
		started = append(started, next)
		steps = append(steps, step)
		time.Sleep(phase)
	}
	l.finish()
	seen := w.finish()

	refused, resetAt, failures := rr.tally()
	t.Log(l.summary())
	t.Logf("restarts: %s", strings.Join(steps, "; "))
	t.Logf("sent to the other instance: %d refused, %d reset as a listener closed; %d accepted requests failed",
		refused, resetAt, len(failures))
	t.Logf("page stream: %d connections, %d told to end, longest from a connect to its first event %s, longest without a stream's state %s",
		seen.connects, seen.ends, seen.maxResync.Round(time.Millisecond), seen.maxGap.Round(time.Millisecond))

	for i, f := range failures {
		if i < 10 {
			t.Errorf("an accepted request failed: %s", f)
		}
	}
	l.check(t)
	if seen.ends < 1 || seen.connects < seen.ends+1 || seen.noSnapshot > 0 || len(seen.problems) > 0 {
		t.Errorf("the page stream: %d connections, %d ends, %d without a first event, problems %q; want it ended at least once, each end followed by a connection that starts with the grid",
			seen.connects, seen.ends, seen.noSnapshot, seen.problems)
	}
	checkServerErrors(t, nil, started...)
	checkBookings(t, pool, c.ID, l.booked(), 0)
}

// restartInPlace is one step of a rolling restart: SIGTERM to old, and
// when its listener is closed, a new process on the same address, ready;
// old must have drained (two holds of slow that are in flight at the
// signal, finished once the new process is ready, are answered 201) and
// exited 0. It returns the new server and what the step took.
func restartInPlace(t *testing.T, rr *roundRobin, old *server, name string, env map[string]string, typeID uuid.UUID, slow []time.Time) (*server, string) {
	t.Helper()
	inflight := startHalfSentHolds(t, old.URL, typeID, len(slow))
	inflight.client = "in-flight-at-" + old.name
	time.Sleep(300 * time.Millisecond) // the server has read their headers and runs the handlers
	rr.stopping(old.URL)
	sigAt := time.Now()
	if err := old.signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(old.URL, "http://")
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		if time.Since(sigAt) > 5*time.Second {
			t.Fatalf("%s still listens 5 s after SIGTERM", old.name)
		}
		time.Sleep(5 * time.Millisecond)
	}
	closed := time.Since(sigAt)
	next := startServer(t, name, env)
	ready := time.Since(sigAt)
	inflight.finish(slow)
	inflight.wg.Wait()
	for _, a := range inflight.answers {
		if a.err != nil || a.status != http.StatusCreated {
			t.Errorf("a hold in flight at %s's SIGTERM: %d %s %v, want 201", old.name, a.status, a.body, a.err)
		}
	}
	err, exited := old.waitExit(12 * time.Second)
	if !exited {
		t.Fatalf("%s still running 12 s after SIGTERM", old.name)
	}
	if err != nil {
		t.Errorf("%s exited with %v after SIGTERM, want status 0", old.name, err)
	}
	return next, fmt.Sprintf("%s→%s: listener closed after %s, %s ready after %s, %s exited after %s",
		old.name, name, closed.Round(time.Millisecond), name, ready.Round(time.Millisecond), old.name, time.Since(sigAt).Round(time.Millisecond))
}

// rollingLoad is n patients reading the times, holding and booking
// through a round robin.
type rollingLoad struct {
	rr     *roundRobin
	typeID uuid.UUID
	slots  []time.Time
	stop   atomic.Bool
	wg     sync.WaitGroup

	mu       sync.Mutex
	statuses map[string]map[int]int // op → status → count
	odd      []string               // answers no patient should get
	books    map[uuid.UUID]booked
	replays  int // bookings answered from their key's stored answer
}

func startRollingLoad(t *testing.T, rr *roundRobin, n int, typeID uuid.UUID, slots []time.Time) *rollingLoad {
	l := &rollingLoad{rr: rr, typeID: typeID, slots: slots, statuses: map[string]map[int]int{}, books: map[uuid.UUID]booked{}}
	for p := range n {
		l.wg.Go(func() { l.patient(p) })
	}
	t.Cleanup(l.finish)
	return l
}

func (l *rollingLoad) finish() {
	l.stop.Store(true)
	l.wg.Wait()
}

func (l *rollingLoad) patient(p int) {
	rng := rand.New(rand.NewPCG(uint64(p), uint64(time.Now().UnixNano())))
	for !l.stop.Load() {
		start := l.slots[rng.IntN(len(l.slots))]
		day := start.Format("2006-01-02")
		st, _, _ := l.rr.do(request(http.MethodGet, "/v1/appointment-types/"+l.typeID.String()+"/timeslots?from="+day+"&to="+day, "", nil))
		l.note("read", st, nil, http.StatusOK)
		client := "rolling-" + uuid.NewString()
		st, body, _ := l.rr.do(request(http.MethodPost, "/v1/holds", fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":%q}`,
			l.typeID, start.UTC().Format(time.RFC3339), client), nil))
		l.note("hold", st, body, http.StatusCreated, http.StatusConflict, http.StatusLocked, http.StatusTooManyRequests)
		var h struct {
			HoldID string `json:"holdId"`
		}
		if st != http.StatusCreated || json.Unmarshal(body, &h) != nil {
			continue
		}
		key := map[string]string{"Idempotency-Key": uuid.NewString()}
		st, body, hdr := l.rr.do(request(http.MethodPost, "/v1/appointment-types/"+l.typeID.String()+"/book",
			fmt.Sprintf(`{"holdId":%q,"clientId":%q,"patient":{"name":"Rolling Patient","email":"r%d-%d@example.org"}}`, h.HoldID, client, p, rng.IntN(1e9)), key))
		l.note("book", st, body, http.StatusCreated, http.StatusConflict, http.StatusGone, http.StatusTooManyRequests)
		if st == http.StatusCreated {
			l.booking(body, hdr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// request makes a request for an instance's base URL.
func request(method, path, body string, hdr map[string]string) func(string) (*http.Request, error) {
	return func(base string) (*http.Request, error) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		return req, nil
	}
}

// note counts an answer; one outside want is kept to be reported.
func (l *rollingLoad) note(op string, status int, body []byte, want ...int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.statuses[op] == nil {
		l.statuses[op] = map[int]int{}
	}
	l.statuses[op][status]++
	for _, w := range want {
		if status == w {
			return
		}
	}
	if status != 0 && len(l.odd) < 20 { // status 0 is in the round robin's failures
		l.odd = append(l.odd, fmt.Sprintf("%s answered %d: %.200s", op, status, body))
	}
}

func (l *rollingLoad) booking(body []byte, hdr http.Header) {
	var a struct {
		Appointment struct {
			ID           uuid.UUID `json:"id"`
			SpecialistID uuid.UUID `json:"specialistId"`
			Start        time.Time `json:"slotStartDate"`
		} `json:"appointment"`
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := json.Unmarshal(body, &a); err != nil || a.Appointment.ID == uuid.Nil {
		l.odd = append(l.odd, fmt.Sprintf("a booking answer without an id: %.200s", body))
		return
	}
	if hdr.Get("Idempotent-Replayed") == "true" {
		l.replays++
	}
	l.books[a.Appointment.ID] = booked{ID: a.Appointment.ID, SpecialistID: a.Appointment.SpecialistID, Start: a.Appointment.Start, At: time.Now()}
}

func (l *rollingLoad) booked() []booked {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]booked, 0, len(l.books))
	for _, b := range l.books {
		out = append(out, b)
	}
	return out
}

// check fails the test for every answer outside the patients' normal ones.
func (l *rollingLoad) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range l.odd {
		t.Error(o)
	}
}

func (l *rollingLoad) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	total := 0
	for _, op := range []string{"read", "hold", "book"} {
		var codes []int
		for st, n := range l.statuses[op] {
			codes = append(codes, st)
			total += n
		}
		sort.Ints(codes)
		var s []string
		for _, st := range codes {
			s = append(s, fmt.Sprintf("%d×%d", st, l.statuses[op][st]))
		}
		parts = append(parts, op+" ["+strings.Join(s, " ")+"]")
	}
	return fmt.Sprintf("%d requests: %s; %d bookings, %d of them answered again from their Idempotency-Key",
		total, strings.Join(parts, ", "), len(l.books), l.replays)
}
