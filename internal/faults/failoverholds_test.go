package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/testkit"
)

// probe is one hold asked for by the probes, as the patient saw it.
type probe struct {
	HoldID, ClientID string
	Start            time.Time
	SpecialistID     uuid.UUID
	Asked, Answered  time.Time
	Status           int
	RetryAfter       string
	Body, Err        string
}

// probes hold a clinic's slots one after the other, a new slot and client
// each time, and never book: what they were granted is what the test
// looks for after the failover.
type probes struct {
	t      *testing.T
	srv    *server
	clinic testkit.Clinic
	slots  []time.Time
	client *http.Client
	next   atomic.Int64
	stop   atomic.Bool
	wg     sync.WaitGroup

	mu   sync.Mutex
	list []probe
}

// startProbes starts three probing goroutines; finish stops them.
func startProbes(t *testing.T, srv *server, c testkit.Clinic, slots []time.Time) *probes {
	p := &probes{t: t, srv: srv, clinic: c, slots: slots, client: newClient()}
	for range 3 {
		p.wg.Add(1)
		go p.run()
	}
	t.Cleanup(p.finish)
	return p
}

func (p *probes) finish() {
	p.stop.Store(true)
	p.wg.Wait()
}

func (p *probes) run() {
	defer p.wg.Done()
	n := len(p.clinic.Specialists)
	for !p.stop.Load() {
		i := int(p.next.Add(1) - 1)
		if i >= len(p.slots)*n {
			p.t.Errorf("the probes ran out of slots")
			return
		}
		pr := probe{ClientID: "probe-" + uuid.NewString(), Start: p.slots[i/n], SpecialistID: p.clinic.Specialists[i%n].ID, Asked: time.Now()}
		res, body, err := postJSONFull(p.client, p.srv.URL+"/v1/holds", holdBody(p.clinic.Types[0].ID, pr.Start, pr.SpecialistID, pr.ClientID))
		pr.Answered = time.Now()
		if err != nil {
			pr.Err = err.Error()
		} else {
			pr.Status, pr.RetryAfter = res.StatusCode, res.Header.Get("Retry-After")
			var h struct {
				HoldID string `json:"holdId"`
			}
			if pr.Status == http.StatusCreated && json.Unmarshal(body, &h) == nil {
				pr.HoldID = h.HoldID
			} else {
				pr.Body = string(body)
			}
		}
		p.mu.Lock()
		p.list = append(p.list, pr)
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *probes) snapshot() []probe {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]probe(nil), p.list...)
}

// firstGrantAfter is when the first hold asked for after t was granted,
// waiting up to within for it; zero if none was.
func (p *probes) firstGrantAfter(t time.Time, within time.Duration) time.Time {
	deadline := t.Add(within)
	for time.Now().Before(deadline) {
		for _, pr := range p.snapshot() {
			if pr.Asked.After(t) && pr.Status == http.StatusCreated {
				return pr.Answered
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Time{}
}

func holdBody(typeID uuid.UUID, start time.Time, specialistID uuid.UUID, clientID string) string {
	return fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"specialistId":%q,"clientId":%q}`,
		typeID, start.UTC().Format(time.RFC3339), specialistID, clientID)
}

// acrossKill is what checkHoldsAcrossKill leaves: the bookings it made, and
// the holds granted before the kill that are still alive and unbooked.
type acrossKill struct {
	books []booked
	left  []string
}

// checkHoldsAcrossKill looks, after the failover, at every hold the probes
// were granted before the kill. Another patient asks for the same slot: a
// 423 says the hold survived; a 201 says asynchronous replication lost it
// and the slot is held twice over. A patient whose hold was lost then
// books with it, and what they get is recorded (the second holder books
// after them); no slot may be booked twice. A few surviving holds are
// booked, as their patients would.
func checkHoldsAcrossKill(t *testing.T, srv *server, c testkit.Clinic, probes []probe, killed time.Time) acrossKill {
	t.Helper()
	client := newClient()
	var out acrossKill
	granted, lost := 0, 0
	lostBooking := map[int]int{}
	for i, p := range probes {
		if p.Status != http.StatusCreated || !p.Asked.Before(killed) {
			continue
		}
		granted++
		rival := "rival-" + uuid.NewString()
		st, b, err := postJSON(client, srv.URL+"/v1/holds", holdBody(c.Types[0].ID, p.Start, p.SpecialistID, rival))
		switch {
		case err != nil:
			t.Fatalf("holding again the slot of a hold granted before the kill: %v", err)
		case st == http.StatusLocked:
			if len(out.books) < 3 {
				out.books = append(out.books, bookProbe(t, client, srv, c, p.HoldID, p.ClientID, i, http.StatusCreated))
			} else {
				out.left = append(out.left, p.HoldID)
			}
		case st == http.StatusCreated:
			lost++
			var h struct {
				HoldID string `json:"holdId"`
			}
			if err := json.Unmarshal(b, &h); err != nil {
				t.Fatal(err)
			}
			first := bookAs(t, client, srv, c, p.HoldID, p.ClientID, i)
			lostBooking[first.status]++
			if first.status == http.StatusCreated {
				out.books = append(out.books, first.booked)
				bookAs(t, client, srv, c, h.HoldID, rival, -i-1) // must not be 201: checkBookings counts the rows
			} else {
				out.books = append(out.books, bookProbe(t, client, srv, c, h.HoldID, rival, -i-1, http.StatusCreated))
			}
		default:
			t.Errorf("holding again the slot of a hold granted before the kill answered %d: %s", st, b)
		}
	}
	t.Logf("%d holds granted in the %s before the kill: %d survived the failover, %d were lost (and granted again to a second patient); the patients of the lost holds, booking with them, were answered %v",
		granted, scaled(1500*time.Millisecond), granted-lost, lost, lostBooking)
	if granted == 0 {
		t.Errorf("no hold of the probes was granted before the kill")
	}
	for st := range lostBooking {
		if st != http.StatusGone {
			t.Errorf("a patient whose hold was lost in the failover was answered %d at booking; want 410 (the hold is gone: pick the slot again)", st)
		}
	}
	return out
}

// bookingAnswer is the answer to a booking request, and the booking when
// it was 201.
type bookingAnswer struct {
	status int
	booked booked
}

// bookAs books holdID for clientID, patient number i.
func bookAs(t *testing.T, client *http.Client, srv *server, c testkit.Clinic, holdID, clientID string, i int) bookingAnswer {
	t.Helper()
	st, b, err := postJSON(client, srv.URL+"/v1/appointment-types/"+c.Types[0].ID.String()+"/book",
		fmt.Sprintf(`{"holdId":%q,"clientId":%q,"patient":{"name":"Failover Patient","email":"failover%d@example.org"}}`, holdID, clientID, i))
	if err != nil {
		t.Fatalf("booking after the failover: %v", err)
	}
	out := bookingAnswer{status: st}
	if st == http.StatusCreated {
		var a struct {
			Appointment struct {
				ID           uuid.UUID `json:"id"`
				SpecialistID uuid.UUID `json:"specialistId"`
				Start        time.Time `json:"slotStartDate"`
			} `json:"appointment"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		out.booked = booked{ID: a.Appointment.ID, SpecialistID: a.Appointment.SpecialistID, Start: a.Appointment.Start, Instance: srv.name, At: time.Now()}
	}
	return out
}

// bookProbe books and wants the status want (201 gives the booking).
func bookProbe(t *testing.T, client *http.Client, srv *server, c testkit.Clinic, holdID, clientID string, i, want int) booked {
	t.Helper()
	a := bookAs(t, client, srv, c, holdID, clientID, i)
	if a.status != want {
		t.Errorf("booking with a hold held after the failover answered %d, want %d", a.status, want)
	}
	return a.booked
}

// checkNewHoldAnnounced: the stream opened before the kill was told to
// resync (the server's subscription dropped with its node and came back),
// and a hold made now is announced on it. It returns how long after the
// hold was granted that came.
func checkNewHoldAnnounced(t *testing.T, srv *server, c testkit.Clinic, start time.Time, watch *stream) time.Duration {
	t.Helper()
	id := holdOn(t, newClient(), srv, holdBody(c.Types[0].ID, start, c.Specialists[0].ID, "after-failover"))
	granted := time.Now()
	if _, ok := watch.lineWith(fmt.Sprintf(`"type":"hold","holdId":%q`, id), 10*time.Second); !ok {
		t.Errorf("a hold made after the failover was not announced on the stream within 10 s; its last lines: %q", lastN(watch.sent(), 5))
	}
	in := time.Since(granted)
	if _, ok := watch.lineWith(`"type":"resync"`, 0); !ok {
		t.Errorf("the stream was not told to resync: the server's event subscription did not notice its node die")
	}
	return in
}

// checkSurvivorsExpire: the holds granted before the kill and left are
// released by the sweeper (on the new master) and announced expired.
func checkSurvivorsExpire(t *testing.T, watch *stream, left []string) {
	t.Helper()
	deadline := time.Now().Add(failoverHoldTTL + 10*time.Second)
	for _, id := range left {
		line, ok := watch.lineWith(fmt.Sprintf(`"type":"release","holdId":%q`, id), time.Until(deadline))
		if !ok {
			t.Errorf("the hold %s granted before the kill was not announced released within %s", id, failoverHoldTTL+10*time.Second)
			return
		}
		if !strings.Contains(line, `"reason":"expired"`) {
			t.Errorf("the hold %s granted before the kill was released, but not as expired: %s", id, line)
		}
	}
}

// lineWith waits up to d for a line of the stream containing what.
func (s *stream) lineWith(what string, d time.Duration) (string, bool) {
	deadline := time.Now().Add(d)
	for {
		for _, l := range s.sent() {
			if strings.Contains(l, what) {
				return l, true
			}
		}
		if time.Now().After(deadline) {
			return "", false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sent is every line the stream has sent so far.
func (s *stream) sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.all...)
}

// postJSONFull is postJSON with the response's headers.
func postJSONFull(client *http.Client, url, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

// setNoFailover sets whether the replica client talks to may take over
// its master.
func setNoFailover(t *testing.T, replica *redis.Client, on bool) {
	t.Helper()
	v := map[bool]string{true: "yes", false: "no"}[on]
	if err := replica.ConfigSet(ctxTimeout(t, 5*time.Second), "cluster-replica-no-failover", v).Err(); err != nil {
		t.Fatalf("CONFIG SET cluster-replica-no-failover %s on %s: %v", v, replica.Options().Addr, err)
	}
}

// allowFailoverOnceSettled lets the replica take over again once it sees
// its master without the FAIL flag (the verdict of the outage cleared), so
// it starts no election for an outage that is over.
func allowFailoverOnceSettled(t *testing.T, replica *redis.Client, master string) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		nodes, err := replica.ClusterNodes(ctxTimeout(t, 5*time.Second)).Result()
		settled := err == nil
		for _, line := range strings.Split(nodes, "\n") {
			f := strings.Fields(line)
			if len(f) > 2 && strings.HasPrefix(f[1], master+"@") && strings.Contains(f[2], "fail") {
				settled = false
			}
		}
		if settled || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := replica.ConfigSet(ctxTimeout(t, 5*time.Second), "cluster-replica-no-failover", "no").Err(); err != nil {
		t.Errorf("CONFIG SET cluster-replica-no-failover no on %s: %v", replica.Options().Addr, err)
	}
}
