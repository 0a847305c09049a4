package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// instStart boots n server instances sharing one PostgreSQL and one Redis,
// each with its own hub, sweeper and pools, as n processes behind a load
// balancer would.
func instStart(t *testing.T, n int, o web.Options) []*httptest.Server {
	t.Helper()
	pool := testkit.DB(t)
	out := make([]*httptest.Server, n)
	for i := range out {
		rdb := testkit.Redis(t) // a client (and pub/sub connection) of its own
		deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)), scoped(o))
		deps.RunBackground(t.Context())
		ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
		t.Cleanup(ts.Close)
		out[i] = ts
	}
	return out
}

func instPost(t *testing.T, url, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// Patients on three instances at once: nobody double-books, a hold made on
// one instance is respected by the others, and a hold on one streams to a
// page open on another.
func TestThreeInstancesActAsOne(t *testing.T) {
	t.Parallel()
	servers := instStart(t, 3, web.Options{HoldsPerMinute: 10000})
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 2})
	loc, _ := time.LoadLocation(c.Timezone)
	monday := testkit.NextWeekday(time.Now(), loc, time.Monday, 9, 0)
	typeID := c.Types[0].ID
	week := monday.Format("2006-01-02")

	// A page open on instance C, filtered to specialist 1, so one hold
	// changes its cell.
	sp := c.Specialists[0].ID
	liveURL := fmt.Sprintf("%s/c/%s/book/%s/live?week=%s&specialist=%s", servers[2].URL, c.Slug, typeID, week, sp)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, liveURL, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && strings.Contains(line, "data-state="):
				if i := strings.Index(line, `data-state="`); i >= 0 {
					st := line[i+len(`data-state="`):]
					events <- name + "=" + st[:strings.Index(st, `"`)]
				}
			}
		}
	}()
	cell := fmt.Sprintf("slot-%s-%d", sp.String()[:8], monday.Add(30*time.Minute).Unix())

	t.Run("HoldOnAIsRespectedOnBAndStreamsToC", func(t *testing.T) {
		body := func(client string) string {
			return fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"specialistId":%q,"clientId":%q}`,
				typeID, monday.Add(30*time.Minute).UTC().Format(time.RFC3339), sp, client)
		}
		if st, b := instPost(t, servers[0].URL+"/v1/holds", body("inst-a"), nil); st != 201 {
			t.Fatalf("hold on A: %d %s", st, b)
		}
		if st, b := instPost(t, servers[1].URL+"/v1/holds", body("inst-b"), nil); st != http.StatusLocked {
			t.Fatalf("same slot on B: want 423, got %d %s", st, b)
		}
		deadline := time.After(5 * time.Second)
		for {
			select {
			case e := <-events:
				if e == cell+"=held" {
					return
				}
			case <-deadline:
				t.Fatalf("the page on C never saw %s turn held", cell)
			}
		}
	})

	t.Run("NoDoubleBookingUnderLoadAcrossInstances", func(t *testing.T) {
		// 60 patients, each on a random instance per request, race for 8 slots.
		var starts []time.Time
		for i := range 8 {
			starts = append(starts, monday.AddDate(0, 0, 1).Add(time.Duration(i)*30*time.Minute))
		}
		var confirmed atomic.Int64
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for p := range 60 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(p), 7))
				<-gate
				client := uuid.NewString()
				start := starts[rng.IntN(len(starts))]
				st, b := instPost(t, servers[rng.IntN(3)].URL+"/v1/holds", fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":%q}`,
					typeID, start.UTC().Format(time.RFC3339), client), nil)
				if st != 201 {
					if st != http.StatusLocked && st != http.StatusConflict {
						t.Errorf("hold: %d %s", st, b)
					}
					return
				}
				var h struct{ HoldID string }
				_ = json.Unmarshal(b, &h)
				st, b = instPost(t, servers[rng.IntN(3)].URL+"/v1/appointment-types/"+typeID.String()+"/book",
					fmt.Sprintf(`{"holdId":%q,"clientId":%q,"patient":{"name":"P %d","email":"p%d@example.org"}}`, h.HoldID, client, p, p), nil)
				switch st {
				case 201:
					confirmed.Add(1)
				case http.StatusConflict, http.StatusGone:
				default:
					t.Errorf("book: %d %s", st, b)
				}
			}()
		}
		close(gate)
		wg.Wait()
		var overlaps, rows int64
		err := pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings a JOIN bookings b
			ON a.specialist_id = b.specialist_id AND a.id < b.id
			AND tstzrange(a.slot_start, a.slot_end) && tstzrange(b.slot_start, b.slot_end)
			WHERE a.clinic_id = $1 AND a.status = 'confirmed' AND b.status = 'confirmed'`, c.ID).Scan(&overlaps)
		if err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed'`, c.ID).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		t.Logf("60 patients on 3 instances: %d confirmed, %d rows, %d overlaps", confirmed.Load(), rows, overlaps)
		// 8 slots, 2 specialists: at most 16 bookings, every one answered 201 is a row.
		if overlaps != 0 || rows != confirmed.Load() || rows > 16 || rows == 0 {
			t.Fatalf("overlaps %d, rows %d, confirmed %d", overlaps, rows, confirmed.Load())
		}
	})
}

// Three instances sweep the same Redis: an expired hold is announced once.
func TestThreeInstancesReleaseAnExpiredHoldOnce(t *testing.T) {
	t.Parallel()
	servers := instStart(t, 3, web.Options{HoldTTL: time.Second})
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	loc, _ := time.LoadLocation(c.Timezone)
	start := testkit.NextWeekday(time.Now(), loc, time.Tuesday, 11, 0)
	sub := testkit.Redis(t).Subscribe(t.Context(), holds.Channel(c.Types[0].ID))
	defer sub.Close()
	if _, err := sub.Receive(t.Context()); err != nil {
		t.Fatal(err)
	}
	st, b := instPost(t, servers[1].URL+"/v1/holds", fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":"expiring"}`,
		c.Types[0].ID, start.UTC().Format(time.RFC3339)), nil)
	if st != 201 {
		t.Fatalf("hold: %d %s", st, b)
	}
	expired := 0
	deadline := time.After(4 * time.Second)
	for {
		select {
		case m := <-sub.Channel():
			var ev holds.Event
			_ = json.Unmarshal([]byte(m.Payload), &ev)
			if ev.Type == holds.EventRelease && ev.Reason == holds.ReasonExpired {
				expired++
			}
		case <-deadline:
			if expired != 1 {
				t.Fatalf("want exactly one expired release from three sweepers, got %d", expired)
			}
			return
		}
	}
}
