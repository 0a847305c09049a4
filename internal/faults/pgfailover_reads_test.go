package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/testkit"
)

// browsing is patients reading the days' free slots while others book:
// it fills the slot caches (Redis and each instance's memory) with lists
// read from the primary of the moment.
type browsing struct {
	t      *testing.T
	client *http.Client
	typeID uuid.UUID
	days   []string
	stop   atomic.Bool
	wg     sync.WaitGroup

	mu     sync.Mutex
	status map[int]int
}

// startBrowsing starts n readers of days (local dates) on targets.
func startBrowsing(t *testing.T, n int, typeID uuid.UUID, days []string, targets []target) *browsing {
	b := &browsing{t: t, client: newClient(), typeID: typeID, days: days, status: map[int]int{}}
	for i := range n {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for j := i; !b.stop.Load(); j++ {
				to := targets[j%len(targets)]
				st, _ := b.get(to, days[j%len(days)])
				b.mu.Lock()
				b.status[st]++
				b.mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	t.Cleanup(b.finish)
	return b
}

func (b *browsing) finish() {
	b.stop.Store(true)
	b.wg.Wait()
}

// get is the free slots of day on to: the status, and the slots when 200.
func (b *browsing) get(to target, day string) (int, []timeslot) {
	res, err := b.client.Get(fmt.Sprintf("%s/v1/appointment-types/%s/timeslots?from=%s&to=%s", to.url, b.typeID, day, day))
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, nil
	}
	var body struct {
		Timeslots []timeslot `json:"timeslots"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		b.t.Errorf("timeslots answer: %v: %s", err, raw)
	}
	return res.StatusCode, body.Timeslots
}

// timeslot is one free start of the timeslots API.
type timeslot struct {
	Start         time.Time   `json:"start"`
	SpecialistIDs []uuid.UUID `json:"specialistIds"`
}

// checkNoneShownFree: no confirmed booking on the new primary is offered
// as free by either instance, the one whose answer was lost with the old
// primary included. Reads never answered 500.
func checkNoneShownFree(t *testing.T, pool *pgxpool.Pool, c testkit.Clinic, b *browsing, targets []target) {
	t.Helper()
	b.finish()
	if n := b.status[http.StatusInternalServerError]; n > 0 {
		t.Errorf("%d reads of the free slots answered 500", n)
	}
	rows, err := pool.Query(ctxTimeout(t, 10*time.Second),
		`SELECT specialist_id, slot_start FROM bookings WHERE clinic_id = $1 AND status = 'confirmed'`, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	booked := map[time.Time][]uuid.UUID{}
	for rows.Next() {
		var sp uuid.UUID
		var start time.Time
		if err := rows.Scan(&sp, &start); err != nil {
			t.Fatal(err)
		}
		booked[start.UTC()] = append(booked[start.UTC()], sp)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, to := range targets {
		for _, day := range b.days {
			st, slots := b.get(to, day)
			if st != http.StatusOK {
				t.Errorf("free slots of %s on %s: %d", day, to.name, st)
				continue
			}
			for _, s := range slots {
				for _, sp := range booked[s.Start.UTC()] {
					if slices.Contains(s.SpecialistIDs, sp) {
						if shown++; shown <= 5 {
							t.Errorf("%s offers %s with specialist %s, who is booked then", to.name, s.Start.Format(time.RFC3339), sp)
						}
					}
				}
			}
		}
	}
	if shown > 5 {
		t.Errorf("… %d booked slots offered as free in all", shown)
	}
	t.Logf("reads of the free slots during the run: %v", b.status)
}

// localDays are the distinct local dates of starts.
func localDays(t *testing.T, c testkit.Clinic, starts []time.Time) []string {
	t.Helper()
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range starts {
		if d := s.In(loc).Format(time.DateOnly); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
