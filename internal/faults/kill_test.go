package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// Three server processes share one database and one Redis; one of them is
// SIGKILLed under load. Every booking it (or any other) answered 201 is in
// the database with its audit row; the holds it made and nobody booked
// expire on time, are announced as expired by the survivors' sweepers, and
// their slots can be held again; the survivors keep booking; nobody is
// double-booked.
func TestKilledInstanceLosesNothing(t *testing.T) {
	t.Parallel()
	url := testkit.FreshDB(t)
	migrate(t, url)
	pool := openPool(t, url)
	c := faultClinic(t, pool)
	typeID := c.Types[0].ID
	const holdTTL = 5 * time.Second
	env := map[string]string{
		"DATABASE_URL":     url,
		"REDIS_URL":        testRedisURL(),
		"HOLD_TTL_SECONDS": fmt.Sprint(int(holdTTL / time.Second)),
		"DB_MAX_CONNS":     "10", // the database server is shared with every other test
	}
	servers := []*server{startServer(t, "instance-a", env), startServer(t, "instance-b", env), startServer(t, "instance-c", env)}
	victim, survivors := servers[2], servers[:2]

	// The first day's slots are kept out of the load for the holds that are
	// left behind on the victim.
	all := slotStarts(t, c, 56)
	abandoned, loadSlots := all[:3], all[48:]
	if !loadSlots[0].After(abandoned[len(abandoned)-1].Add(12 * time.Hour)) {
		t.Fatalf("slot layout: the load's slots start %s, too close to the abandoned ones", loadSlots[0])
	}

	l := startLoad(t, patients(6), typeID, loadSlots, targetsOf(servers))
	time.Sleep(scaled(2 * time.Second))

	// Patients who hold on the victim and walk away; the type's events are
	// watched from now on.
	events := testkit.Redis(t).Subscribe(t.Context(), holds.Channel(typeID))
	t.Cleanup(func() { _ = events.Close() })
	if _, err := events.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}
	client := newClient()
	sp := c.Specialists[0].ID
	holdBody := func(start time.Time, clientID string) string {
		return fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"specialistId":%q,"clientId":%q}`,
			typeID, start.UTC().Format(time.RFC3339), sp, clientID)
	}
	left := map[string]time.Time{} // hold id -> its slot
	for i, start := range abandoned {
		left[holdOn(t, client, victim, holdBody(start, fmt.Sprintf("walks-away-%d", i)))] = start
	}
	heldAt := time.Now()
	// While they live, the survivors respect them.
	if st, b, err := postJSON(client, survivors[0].URL+"/v1/holds", holdBody(abandoned[0], "too-early")); err != nil || st != http.StatusLocked {
		t.Fatalf("a slot held on the victim, asked on %s: want 423, got %d %s %v", survivors[0].name, st, b, err)
	}

	l.setTargets(targetsOf(survivors)) // the balancer notices at once
	killAt := time.Now()
	victim.kill()

	// The survivors' sweepers release the victim's holds when they expire.
	expired := awaitExpiries(t, events, left, holdTTL+10*time.Second)
	for id, at := range expired {
		if at.Before(heldAt.Add(holdTTL - 500*time.Millisecond)) {
			t.Errorf("hold %s released %s after it was made, before its TTL of %s", id, at.Sub(heldAt), holdTTL)
		}
	}
	// And their slots can be held again.
	for i, start := range abandoned {
		if st, b, err := postJSON(client, survivors[i%2].URL+"/v1/holds", holdBody(start, fmt.Sprintf("next-patient-%d", i))); err != nil || st != http.StatusCreated {
			t.Errorf("the slot %s after its hold expired, asked on %s: want 201, got %d %s %v", start, survivors[i%2].name, st, b, err)
		}
	}

	time.Sleep(scaled(1 * time.Second))
	l.finish()
	calls, books := l.snapshot()
	t.Log(summary("TestKilledInstanceLosesNothing", calls, books))

	byVictim, afterKill := 0, 0
	for _, b := range books {
		if b.Instance == victim.name && b.At.Before(killAt) {
			byVictim++
		}
		if b.HoldStarted.After(killAt) {
			afterKill++
		}
	}
	t.Logf("%d bookings answered by the victim before it was killed, %d made after; the holds it left expired %s after they were made",
		byVictim, afterKill, maxTime(expired).Sub(heldAt).Round(time.Millisecond))
	if byVictim == 0 {
		t.Errorf("the victim answered no booking before it was killed: the test proves nothing")
	}
	if afterKill == 0 {
		t.Errorf("no booking succeeded on the survivors after the kill")
	}
	checkSurvivors(t, victim, survivors, killAt, calls)
	checkBookings(t, pool, c.ID, books, unknownBookOutcomes(calls))
}

func maxTime(m map[string]time.Time) time.Time {
	var out time.Time
	for _, v := range m {
		if v.After(out) {
			out = v
		}
	}
	return out
}

// holdOn holds a slot on the server (body is the request) and returns the
// hold's id.
func holdOn(t *testing.T, client *http.Client, on *server, body string) string {
	t.Helper()
	st, b, err := postJSON(client, on.URL+"/v1/holds", body)
	if err != nil || st != http.StatusCreated {
		t.Fatalf("hold on %s: %d %s %v", on.name, st, b, err)
	}
	var h struct {
		HoldID string `json:"holdId"`
	}
	if err := json.Unmarshal(b, &h); err != nil || h.HoldID == "" {
		t.Fatalf("hold on %s answered %s (%v), want a hold id", on.name, b, err)
	}
	return h.HoldID
}

// awaitExpiries waits, up to within, for the release events (reason
// expired) of the holds in left, and returns when each came.
func awaitExpiries(t *testing.T, events *redis.PubSub, left map[string]time.Time, within time.Duration) map[string]time.Time {
	t.Helper()
	expired := map[string]time.Time{}
	deadline := time.After(within)
	for len(expired) < len(left) {
		select {
		case m := <-events.Channel():
			var ev holds.Event
			if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
				t.Fatalf("undecodable event %s: %v", m.Payload, err)
			}
			if _, ours := left[ev.HoldID]; ours && ev.Type == holds.EventRelease {
				if ev.Reason != holds.ReasonExpired {
					t.Errorf("hold %s released with reason %q, want %q", ev.HoldID, ev.Reason, holds.ReasonExpired)
				}
				expired[ev.HoldID] = time.Now()
			}
		case <-deadline:
			t.Fatalf("%d of the killed instance's %d holds were announced expired within %s of their TTL", len(expired), len(left), 10*time.Second)
		}
	}
	return expired
}

// checkSurvivors: the survivors are alive and logged no server error, and
// every call had a normal answer, but for those in flight on the victim
// when it was killed.
func checkSurvivors(t *testing.T, victim *server, survivors []*server, killAt time.Time, calls []call) {
	t.Helper()
	for _, s := range survivors {
		if !s.alive() {
			t.Errorf("%s exited (%v)", s.name, s.waitErr)
		}
	}
	for _, c := range calls {
		switch {
		case c.Status == 0 && c.Instance == victim.name && !c.End.Before(killAt):
			// In flight on the victim when it died.
		case c.Status == 0:
			t.Errorf("%s on %s got no answer at %s: %s", c.Op, c.Instance, c.End.Format("15:04:05.000"), c.Err)
		case !normal(c.Status):
			t.Errorf("%s on %s answered %d: %s", c.Op, c.Instance, c.Status, c.Body)
		}
	}
	checkServerErrors(t, nil, survivors...)
}

// targetsOf are the servers as the load's targets.
func targetsOf(ss []*server) []target {
	var out []target
	for _, s := range ss {
		out = append(out, target{s.name, s.URL})
	}
	return out
}
