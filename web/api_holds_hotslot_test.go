package web_test

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

// A hot slot: many patients try one slot at once. Exactly one books it,
// and the losers are answered by the hold (Redis) and the bitmap without a
// PostgreSQL round trip, so a rush on one slot does not become a rush on
// the database.
func TestHotSlotOneWinnerLosersSpareTheDatabase(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	start := c.Monday(10, 0)
	typeID, sp := c.Types[0].ID, c.Specialists[0].ID
	day := start.In(c.Loc).Format("2006-01-02")
	// The patients have the specialist's day open: its slots are computed.
	if r := a.do(t, "GET", fmt.Sprintf("/v1/appointment-types/%s/timeslots?from=%s&to=%s&specialistId=%s", typeID, day, day, sp), nil); r.Status != 200 {
		t.Fatalf("timeslots: %d %s", r.Status, r.Body)
	}

	const patients = 100
	var (
		ready, wg sync.WaitGroup
		gate      = make(chan struct{})
		mu        sync.Mutex
		statuses  = map[string]int{}
	)
	ready.Add(patients)
	for i := range patients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := fmt.Sprintf("hot-%d-%s", i, uuid.NewString()[:8])
			ready.Done()
			<-gate
			r := a.do(t, "POST", "/v1/holds", map[string]string{
				"appointmentTypeId": typeID.String(), "specialistId": sp.String(),
				"slotStartDate": start.UTC().Format(time.RFC3339), "clientId": client,
			})
			outcome := "hold " + strconv.Itoa(r.Status)
			if r.Status == 201 {
				var h struct {
					HoldID string `json:"holdId"`
				}
				r.Decode(&h)
				holdID := h.HoldID
				b := a.do(t, "POST", "/v1/appointment-types/"+typeID.String()+"/book", map[string]any{
					"holdId": holdID, "clientId": client,
					"patient": map[string]string{"name": "Hot Patient", "email": "hot@example.org"},
				})
				outcome = "book " + strconv.Itoa(b.Status)
			}
			mu.Lock()
			statuses[outcome]++
			mu.Unlock()
		}()
	}
	ready.Wait()
	close(gate)
	wg.Wait()

	// Latecomers, after the booking: the slot is gone.
	for i := range 20 {
		r := a.do(t, "POST", "/v1/holds", map[string]string{
			"appointmentTypeId": typeID.String(), "specialistId": sp.String(),
			"slotStartDate": start.UTC().Format(time.RFC3339), "clientId": fmt.Sprintf("late-%d", i),
		})
		statuses["late hold "+strconv.Itoa(r.Status)]++
	}
	t.Logf("outcomes: %v", statuses)
	if statuses["book 201"] != 1 {
		t.Fatalf("want exactly one booking, got %v", statuses)
	}
	// A loser arriving while the winner holds is told SLOT_HELD (423), one
	// arriving after the booking SLOT_TAKEN (409); one arriving between the
	// winner's commit and its hold being spent can even hold, and is then
	// refused the booking (409).
	losers := statuses["hold 423"] + statuses["hold 409"] + statuses["book 409"] + statuses["late hold 409"]
	if losers != patients-1+20 {
		t.Fatalf("want %d losers told SLOT_HELD or SLOT_TAKEN, got %v", patients-1+20, statuses)
	}
	var rows int
	if err := a.Pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings WHERE specialist_id = $1 AND slot_start = $2 AND status = 'confirmed'`, sp, start).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d confirmed rows (%v), want 1", rows, err)
	}

	noDB := a.metricSum(t, `clinic_outcomes_without_db_total\{outcome="SLOT_(?:HELD|TAKEN)",what="(?:hold|booking)"\}`)
	if testing.Verbose() {
		for _, l := range regexp.MustCompile(`(?m)^clinic_outcomes.*$`).FindAllString(a.metricsText(t), -1) {
			t.Log(l)
		}
	}
	t.Logf("%.0f of %d losers answered without a PostgreSQL round trip", noDB, losers)
	// The one recomputation after the booking's generation bump may ask
	// PostgreSQL; everything else must not.
	if noDB < 0.95*float64(losers) {
		t.Fatalf("only %.0f of %d losers were answered without PostgreSQL; want at least 95%%", noDB, losers)
	}
}
