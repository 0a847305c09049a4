package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
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
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
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

// With Redis stopped mid-run nothing booked is lost or doubled: holds
// answer 503 with a clear message, timeslots come from PostgreSQL, staff
// bookings go straight to the database gate; when Redis is back, streams
// resync and holds work again.
func TestRedisStoppedAndStartedAgain(t *testing.T) {
	t.Parallel()
	red := startFaultRedis(t, 0)
	rdb := redis.NewClient(&redis.Options{Addr: red.addr(), MaxRetries: 1, DialTimeout: 300 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	pool := testkit.DB(t)
	deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)), web.Options{HoldsPerMinute: 10000})
	deps.RunBackground(t.Context())
	ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
	t.Cleanup(ts.Close)

	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	loc, _ := time.LoadLocation(c.Timezone)
	monday := testkit.NextWeekday(time.Now(), loc, time.Monday, 9, 0)
	typeID := c.Types[0].ID
	holdBody := func(start time.Time, client string) string {
		return fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":%q}`, typeID, start.UTC().Format(time.RFC3339), client)
	}
	confirmed := 0

	// Up: a normal booking.
	if st, b := instPost(t, ts.URL+"/v1/holds", holdBody(monday, "before"), nil); st != 201 {
		t.Fatalf("hold with Redis up: %d %s", st, b)
	} else {
		holdID := strings.Split(strings.Split(string(b), `"holdId":"`)[1], `"`)[0]
		if st, b := instPost(t, ts.URL+"/v1/appointment-types/"+typeID.String()+"/book",
			fmt.Sprintf(`{"holdId":%q,"clientId":"before","patient":{"name":"Before","email":"b@example.org"}}`, holdID), nil); st != 201 {
			t.Fatalf("book with Redis up: %d %s", st, b)
		}
		confirmed++
	}

	// A hold stream open across the outage.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/holds/stream?appointmentTypeId="+typeID.String()+"&clientId=watcher", nil)
	sres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sres.Body.Close()
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(sres.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitLine := func(what string, d time.Duration) {
		t.Helper()
		deadline := time.After(d)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the stream ended before %s", what)
				}
				if strings.Contains(l, what) {
					return
				}
			case <-deadline:
				t.Fatalf("no %s on the stream within %s", what, d)
			}
		}
	}
	waitLine(`"type":"connected"`, 5*time.Second)

	red.stop()

	t.Run("HoldsAnswer503WithAClearMessage", func(t *testing.T) {
		st, b := instPost(t, ts.URL+"/v1/holds", holdBody(monday.Add(time.Hour), "during"), nil)
		if st != http.StatusServiceUnavailable || !strings.Contains(string(b), "UNAVAILABLE") || !strings.Contains(string(b), "briefly unavailable") {
			t.Fatalf("want 503 UNAVAILABLE, got %d %s", st, b)
		}
	})
	t.Run("TimeslotsComeFromPostgreSQL", func(t *testing.T) {
		res, err := http.Get(fmt.Sprintf("%s/v1/appointment-types/%s/timeslots?from=%s&to=%s", ts.URL, typeID, monday.Format("2006-01-02"), monday.Format("2006-01-02")))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("timeslots with Redis down: %d", res.StatusCode)
		}
	})
	t.Run("StaffBookingsKeepWorking", func(t *testing.T) {
		u := staff.User{ClinicID: c.ID, Email: "desk@example.org", Role: staff.RoleStaff}
		_, err := deps.StaffBookings.BookForPatient(t.Context(), u, typeID, c.Specialists[1].ID, monday.Add(2*time.Hour),
			booking.Patient{Name: "Phone", Email: "p@example.org"})
		if err != nil {
			t.Fatalf("staff booking with Redis down: %v", err)
		}
		confirmed++
	})
	t.Run("ReadinessNamesRedis", func(t *testing.T) {
		res, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "redis") {
			t.Fatalf("readyz: %d %s", res.StatusCode, b)
		}
	})

	// Back up on the same port: the stream is told to resync, holds work.
	startFaultRedis(t, red.port)
	waitLine(`"type":"resync"`, 10*time.Second)
	var st int
	var b []byte
	for i := 0; i < 50; i++ {
		if st, b = instPost(t, ts.URL+"/v1/holds", holdBody(monday.Add(3*time.Hour), "after"), nil); st == 201 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st != 201 {
		t.Fatalf("hold after Redis came back: %d %s", st, b)
	}

	// Nothing lost or doubled.
	var rows, overlaps int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed'`, c.ID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings a JOIN bookings b ON a.specialist_id = b.specialist_id AND a.id < b.id
		AND tstzrange(a.slot_start, a.slot_end) && tstzrange(b.slot_start, b.slot_end)
		WHERE a.clinic_id = $1 AND a.status = 'confirmed' AND b.status = 'confirmed'`, c.ID).Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	if rows != confirmed || overlaps != 0 {
		t.Fatalf("%d confirmed rows for %d confirmations, %d overlaps", rows, confirmed, overlaps)
	}
}
