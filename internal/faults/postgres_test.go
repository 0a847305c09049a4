package faults

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// PostgreSQL stops (fast: sessions terminated, open transactions rolled
// back) and starts again under load. While it is away requests that need
// it answer 503 promptly, never 500 and never hang; once it is back the same
// server process books again; every booking answered 201 is in the
// database with its audit row, and nobody is double-booked.
func TestPostgresRestartedMidRun(t *testing.T) {
	t.Parallel()
	pg := startPGCluster(t)
	migrate(t, pg.URL())
	setup := openPool(t, pg.URL())
	c := faultClinic(t, setup)
	setup.Close() // its connections die with the restart; the checks open another
	srv := startServer(t, "server", map[string]string{
		"DATABASE_URL": pg.URL(),
		"REDIS_URL":    testRedisURL(),
		"DB_MAX_CONNS": "20",
	})

	l := startLoad(t, patients(6), c.Types[0].ID, slotStarts(t, c, 56), []target{{srv.name, srv.URL}})
	time.Sleep(scaled(2 * time.Second))
	if _, books := l.snapshot(); len(books) == 0 {
		t.Fatalf("no booking before the fault:\n%s", srv.logs.Tail(20))
	}

	stopAsked := time.Now()
	if err := pg.stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	outage := 1500 * time.Millisecond
	if long {
		outage = 5 * time.Second
	}
	time.Sleep(outage)
	startAsked := time.Now()
	if err := pg.start(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()

	// Recovery: a booking whose hold was asked for after PostgreSQL was back,
	// from the same server process.
	recovered := firstBookingHeldAfter(l, up, 15*time.Second)
	time.Sleep(scaled(2 * time.Second))
	l.finish()
	calls, books := l.snapshot()
	t.Log(summary("TestPostgresRestartedMidRun", calls, books))
	t.Logf("PostgreSQL stop took %s, down for %s, start took %s; first booking after the restart %s after it was up",
		stopped.Sub(stopAsked).Round(time.Millisecond), startAsked.Sub(stopped).Round(time.Millisecond),
		up.Sub(startAsked).Round(time.Millisecond), recovered.Sub(up).Round(time.Millisecond))
	if recovered.IsZero() {
		t.Errorf("no booking succeeded within 15 s of PostgreSQL being back")
	}
	if !srv.alive() {
		t.Errorf("the server process exited (%v); it must ride out the outage", srv.waitErr)
	}

	checkOutageCalls(t, calls, stopAsked, stopped, startAsked)
	// The server's own account of every 500: the error that leaked. The
	// e-mail queue says, as the 503s do, that PostgreSQL was away.
	checkServerErrors(t, func(line string) bool {
		return strings.Contains(line, `"status":503`) || strings.Contains(line, `"component":"queue"`)
	}, srv)

	checkBookings(t, openPool(t, pg.URL()), c.ID, books, unknownBookOutcomes(calls))
}

// firstBookingHeldAfter waits up to within for a booking whose hold was
// asked for after t, and returns when it was booked (zero: none came).
func firstBookingHeldAfter(l *load, t time.Time, within time.Duration) time.Time {
	for deadline := t.Add(within); time.Now().Before(deadline); {
		_, books := l.snapshot()
		for _, b := range books {
			if b.HoldStarted.After(t) {
				return b.At
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}
}

// checkOutageCalls: every call of the load was answered, none with a 500
// but a handful, a 503 always with the UNAVAILABLE code; no booking was
// made while PostgreSQL was down (from stopped until its start was asked),
// and some request in that time was answered 503.
func checkOutageCalls(t *testing.T, calls []call, stopAsked, stopped, startAsked time.Time) {
	t.Helper()
	n500, nOutage, outage503, slowest := 0, 0, 0, time.Duration(0)
	for _, c := range calls {
		slowest = max(slowest, c.End.Sub(c.Start))
		switch {
		case c.Status == 0 && isTimeout(c.Err):
			t.Errorf("%s hung: no answer within %s (asked %s)", c.Op, requestTimeout, c.Start.Format("15:04:05.000"))
		case c.Status == 0:
			t.Errorf("%s got no answer: %s", c.Op, c.Err)
		case c.Status == http.StatusInternalServerError:
			if n500++; n500 <= 5 {
				t.Errorf("%s answered 500 at %s (%s after the stop was asked): %s", c.Op, c.End.Format("15:04:05.000"), c.End.Sub(stopAsked).Round(time.Millisecond), c.Body)
			}
		case c.Status == http.StatusServiceUnavailable:
			if !strings.Contains(c.Body, `"UNAVAILABLE"`) {
				t.Errorf("%s answered 503 without the UNAVAILABLE code: %s", c.Op, c.Body)
			}
		case !normal(c.Status):
			t.Errorf("%s answered %d: %s", c.Op, c.Status, c.Body)
		}
		// Asked and answered while PostgreSQL was down: no booking can be
		// made (a hold can: holds live in Redis, and the day's slots may be
		// cached there too).
		if c.Start.After(stopped) && c.End.Before(startAsked) {
			nOutage++
			if c.Status == http.StatusServiceUnavailable {
				outage503++
			} else if c.Op == "book" && c.Status == http.StatusCreated {
				t.Errorf("a booking was answered 201 while PostgreSQL was down (asked %s)", c.Start.Format("15:04:05.000"))
			}
		}
	}
	if n500 > 5 {
		t.Errorf("… %d answers of 500 in all", n500)
	}
	if outage503 == 0 {
		t.Errorf("no request was answered 503 while PostgreSQL was down (%d asked in that time): the fault did not happen", nOutage)
	}
	t.Logf("%d requests asked and answered during the outage, %d of them 503; slowest request %s", nOutage, outage503, slowest.Round(time.Millisecond))
}
