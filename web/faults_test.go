package web_test

// Tests of the app with its Redis stopped and started again mid-run.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// faultRedis is a redis-server of the test's own, so it can be stopped and
// started without disturbing other tests.
type faultRedis struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func startFaultRedis(t *testing.T, port int) *faultRedis {
	t.Helper()
	if port == 0 {
		port = testkit.FreePort(t)
	}
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	r := &faultRedis{t: t, port: port, cmd: cmd}
	t.Cleanup(r.stop)
	c := redis.NewClient(&redis.Options{Addr: r.addr()})
	defer c.Close()
	for i := 0; ; i++ {
		if c.Ping(context.Background()).Err() == nil {
			return r
		}
		if i > 100 {
			t.Fatal("redis-server did not come up")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *faultRedis) addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

func (r *faultRedis) stop() {
	if r.cmd.Process != nil && r.cmd.ProcessState == nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

// faultLoad is patients holding and booking in a loop until stop: it
// collects every status and the id of every booking answered 201.
type faultLoad struct {
	cancel   context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	booked   []string
	statuses map[int]int
}

func startFaultLoad(t *testing.T, base string, typeID uuid.UUID, from time.Time, loc *time.Location) *faultLoad {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	l := &faultLoad{cancel: cancel, done: make(chan struct{}), statuses: map[int]int{}}
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(path, body string) (int, []byte) {
		res, err := client.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			return 0, nil
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				// The patients take turns through the slots of four weeks
				// (weekdays, 09:00-17:00), then start over (all taken by then).
				k := (i*4 + p) % (28 * 16)
				day := from.AddDate(0, 0, k/16)
				start := time.Date(day.Year(), day.Month(), day.Day(), 9, 0, 0, 0, loc).Add(time.Duration(k%16) * 30 * time.Minute)
				if wd := start.Weekday(); wd == time.Saturday || wd == time.Sunday {
					continue
				}
				time.Sleep(10 * time.Millisecond)
				client := fmt.Sprintf("load-%d-%d", p, i)
				st, b := post("/v1/holds", fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":%q}`,
					typeID, start.UTC().Format(time.RFC3339), client))
				if st == 201 {
					var h struct {
						HoldID string `json:"holdId"`
					}
					_ = json.Unmarshal(b, &h)
					st, b = post("/v1/appointment-types/"+typeID.String()+"/book",
						fmt.Sprintf(`{"holdId":%q,"clientId":%q,"patient":{"name":"Load","email":"l@example.org"}}`, h.HoldID, client))
				}
				l.mu.Lock()
				l.statuses[st]++
				if st == 201 {
					var a struct {
						Appointment struct {
							ID string `json:"id"`
						} `json:"appointment"`
					}
					if json.Unmarshal(b, &a) == nil && a.Appointment.ID != "" {
						l.booked = append(l.booked, a.Appointment.ID)
					}
				}
				l.mu.Unlock()
				if st == 503 {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	go func() { wg.Wait(); close(l.done) }()
	t.Cleanup(func() { cancel(); <-l.done })
	return l
}

// stop ends the load and returns what it saw.
func (l *faultLoad) stop() ([]string, map[int]int) {
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.booked, l.statuses
}

// With Redis stopped mid-run nothing booked is lost or doubled: holds
// answer 503 with a clear message, timeslots come from PostgreSQL, staff
// bookings go straight to the database gate; when Redis is back, streams
// resync and holds work again.
func TestRedisStoppedAndStartedAgain(t *testing.T) {
	t.Parallel()
	red := startFaultRedis(t, 0)
	rdb := redis.NewClient(&redis.Options{Addr: red.addr(), MaxRetries: 1, DialTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	a := newApp(t, withRedis(rdb), withOptions(program.Options{HoldsPerMinute: 10000}))
	c := a.clinic(t, testkit.ClinicOptions{})
	monday := c.Monday(9, 0)
	typeID := c.Types[0].ID
	confirmed := 0

	// Patients keep booking through the whole run, across the outage.
	load := startFaultLoad(t, a.URL, typeID, monday.AddDate(0, 0, 7), c.Loc)

	// Up: a normal booking.
	a.bookFor(t, typeID, a.hold(t, typeID, monday, "before"), "before", map[string]string{"name": "Before", "email": "b@example.org"})
	confirmed++

	// A hold stream open across the outage.
	watch := watchLines(t, a.URL+holdStreamPath(typeID, "watcher", ""))
	watch.wait(`"type":"connected"`, 5*time.Second)

	red.stop()
	confirmed += redisDown(t, a, c, monday)

	// Back up on the same port: the stream is told to resync, holds work.
	startFaultRedis(t, red.port)
	watch.wait(`"type":"resync"`, 10*time.Second)
	var r *response
	for i := 0; i < 50; i++ {
		if r = a.postHold(t, typeID, uuid.Nil, monday.Add(3*time.Hour), "after"); r.Status == 201 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.Status != 201 {
		t.Fatalf("hold after Redis came back: %d %s", r.Status, r.Body)
	}

	// Nothing lost or doubled: the load's bookings are all there too.
	booked, statuses := load.stop()
	t.Logf("load across the outage: %v", statuses)
	for st := range statuses {
		switch st {
		case 201, 409, 410, 423, 429, 503:
		default:
			t.Errorf("the load got status %d (%d times); want only 201, 409, 410, 423, 429 or 503", st, statuses[st])
		}
	}
	if statuses[503] == 0 {
		t.Error("the load never saw Redis down (no 503)")
	}
	for _, id := range booked {
		var status string
		if err := a.Pool.QueryRow(t.Context(), `SELECT status FROM bookings WHERE id = $1`, id).Scan(&status); err != nil || status != "confirmed" {
			t.Errorf("booking %s answered 201 is %q in the database (%v)", id, status, err)
		}
	}
	confirmed += len(booked)
	if rows, overlaps := a.confirmedRows(t, c.ID); rows != int64(confirmed) || overlaps != 0 {
		t.Fatalf("%d confirmed rows for %d confirmations, %d overlaps", rows, confirmed, overlaps)
	}
}

// redisDown checks what works with Redis down and returns how many
// bookings it made.
func redisDown(t *testing.T, a *app, c clinic, monday time.Time) (confirmed int) {
	typeID := c.Types[0].ID
	t.Run("HoldsAnswer503WithAClearMessage", func(t *testing.T) {
		r := a.postHold(t, typeID, uuid.Nil, monday.Add(time.Hour), "during")
		if r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Body, "UNAVAILABLE") || !strings.Contains(r.Body, "briefly unavailable") {
			t.Fatalf("want 503 UNAVAILABLE, got %d %s", r.Status, r.Body)
		}
	})
	t.Run("TimeslotsComeFromPostgreSQL", func(t *testing.T) {
		day := monday.Format("2006-01-02")
		if r := a.do(t, "GET", "/v1/appointment-types/"+typeID.String()+"/timeslots?from="+day+"&to="+day, nil); r.Status != 200 {
			t.Fatalf("timeslots with Redis down: %d", r.Status)
		}
	})
	t.Run("StaffBookingsKeepWorking", func(t *testing.T) {
		u := staff.User{ClinicID: c.ID, Email: "desk@example.org", Role: staff.RoleStaff}
		_, err := a.Deps.StaffBookings.BookForPatient(t.Context(), u, typeID, c.Specialists[1].ID, monday.Add(2*time.Hour),
			booking.Patient{Name: "Phone", Email: "p@example.org"})
		if err != nil {
			t.Fatalf("staff booking with Redis down: %v", err)
		}
		confirmed++
	})
	t.Run("ReadinessNamesRedis", func(t *testing.T) {
		if r := a.do(t, "GET", "/readyz", nil); r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Body, "redis") {
			t.Fatalf("readyz: %d %s", r.Status, r.Body)
		}
	})
	return confirmed
}

// lineWatch reads a stream's lines in the background; the load makes
// events too, so it never stalls the stream.
type lineWatch struct {
	t     *testing.T
	lines chan string
	last  []string
}

func watchLines(t *testing.T, u string) *lineWatch {
	t.Helper()
	res, cancel := getStream(t, nil, u)
	t.Cleanup(cancel)
	w := &lineWatch{t: t, lines: make(chan string, 1<<16)}
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	return w
}

// wait reads lines until one contains what, failing after d.
func (w *lineWatch) wait(what string, d time.Duration) {
	w.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				w.t.Fatalf("the stream ended before %s; its last lines: %q", what, w.last)
			}
			if w.last = append(w.last, l); len(w.last) > 6 {
				w.last = w.last[1:]
			}
			if strings.Contains(l, what) {
				return
			}
		case <-deadline:
			w.t.Fatalf("no %s on the stream within %s", what, d)
		}
	}
}
