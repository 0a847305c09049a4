package liveview

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/testkit"
)

// rig is a store on a running hub, with a clinic and the services that
// read its grid, on the test PostgreSQL and Redis.
type rig struct {
	s      *Store
	grid   *grid.Service
	holds  *holds.Store
	clinic testkit.Clinic
	loc    *time.Location
	mu     sync.Mutex
	now    time.Time
}

func newRig(t testing.TB, maxViews int) *rig {
	t.Helper()
	return newRigOf(t, maxViews, 1)
}

// newRigOf is newRig with a clinic of that many specialists.
func newRigOf(t testing.TB, maxViews, specialists int) *rig {
	t.Helper()
	pool, rdb := testkit.DB(t), testkit.Redis(t)
	log := slog.New(slog.DiscardHandler)
	hs := holds.NewStore(rdb, 30*time.Second, log)
	sl := slots.New(pool, rdb, slots.Options{Holds: hs, Logger: log})
	m := events.NewMetrics(prometheus.NewRegistry())
	hub := events.NewHub(rdb, log, m)
	r := &rig{grid: grid.New(sl, hs), holds: hs, now: time.Now()}
	r.s = New(hub, prometheus.NewRegistry(), Options{MaxViews: maxViews, Now: r.clock})
	m.RedisConnected = r.s.WatchConnected(m.RedisConnected)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go hub.Run(ctx)
	select {
	case <-hub.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("hub not subscribed")
	}
	r.clinic = testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: specialists})
	r.loc, _ = time.LoadLocation(r.clinic.Timezone)
	return r
}

func (r *rig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

// week is the view of the clinic's type over the week n weeks after next.
func (r *rig) week(n int) grid.View {
	monday := availability.DateOf(testkit.NextWeekday(time.Now(), r.loc, time.Monday, 9, 0), r.loc).AddDays(7 * n)
	return grid.View{AppointmentTypeID: r.clinic.Types[0].ID, From: monday, To: monday.AddDays(6)}
}

// keep reads v and keeps it; it must be kept.
func (r *rig) keep(t *testing.T, v grid.View) *View {
	t.Helper()
	tk := r.s.Begin(r.clinic.ID)
	if tk == nil {
		t.Fatal("no ticket with the subscription up")
	}
	sn, err := r.grid.LiveSnapshot(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	kept := r.s.Install(tk, sn, nil, time.Time{})
	if kept == nil {
		t.Fatal("a quiet reading was not kept")
	}
	return kept
}

// waitSeq waits until the clinic's feed handled n events.
func (r *rig) waitSeq(t *testing.T, n uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.s.mu.Lock()
		f := r.s.feeds[r.clinic.ID]
		got := f != nil && f.seq >= n
		r.s.mu.Unlock()
		if got {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the feed did not hear %d events", n)
}

func TestStoreEvictsTheLeastRecentlyReadPastItsCap(t *testing.T) {
	t.Parallel()
	r := newRig(t, 2)
	w0, w1, w2 := r.week(0), r.week(1), r.week(2)
	r.keep(t, w0)
	r.keep(t, w1)
	if r.s.Get(w0) == nil { // w0 is now the most recently read
		t.Fatal("w0 not kept")
	}
	r.keep(t, w2)
	if r.s.Len() != 2 || r.s.Get(w1) != nil || r.s.Get(w0) == nil || r.s.Get(w2) == nil {
		t.Fatalf("past the cap of 2: want w0 and w2 kept, w1 gone; %d views", r.s.Len())
	}
}

func TestStoreAppliesEventsHeardWhileAViewWasRead(t *testing.T) {
	t.Parallel()
	r := newRig(t, 10)
	v := r.week(0)
	tk := r.s.Begin(r.clinic.ID)
	sn, err := r.grid.LiveSnapshot(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	// A hold published after the reading: the kept view must have it.
	p := sn.Positions()[0]
	ev := holds.Event{Type: holds.EventHold, ClientHash: "someone", Hold: holds.Hold{HoldID: "h1", ClinicID: r.clinic.ID,
		AppointmentTypeID: v.AppointmentTypeID, SpecialistID: r.clinic.Specialists[0].ID, Start: p.Start, End: p.End}}
	if err := r.holds.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	r.waitSeq(t, tk.seq+1)
	kept := r.s.Install(tk, sn, nil, time.Time{})
	if kept == nil {
		t.Fatal("a hold heard meanwhile can be applied: the view should be kept")
	}
	got, _ := kept.Snapshot()
	if c := got.Cells("")[0]; c.State != grid.Held || !kept.HeldBy("someone") {
		t.Fatalf("first cell %s, held by someone %v: the hold heard while reading is missing", c.State, kept.HeldBy("someone"))
	}

	// A cancellation heard while reading cannot be applied: not kept.
	tk = r.s.Begin(r.clinic.ID)
	sn, _ = r.grid.LiveSnapshot(context.Background(), r.week(1))
	if err := r.holds.Publish(context.Background(), holds.Event{Type: holds.EventCancel, Hold: holds.Hold{ClinicID: r.clinic.ID}}); err != nil {
		t.Fatal(err)
	}
	r.waitSeq(t, tk.seq+1)
	if r.s.Install(tk, sn, nil, time.Time{}) != nil {
		t.Fatal("a reading overtaken by a cancellation was kept")
	}
	if r.s.Get(v) != nil {
		t.Fatal("the cancellation did not drop the kept view")
	}
}

func TestStoreDropsEverythingWhenTheSubscriptionIsLostAndViewsExpire(t *testing.T) {
	t.Parallel()
	r := newRig(t, 10)
	r.keep(t, r.week(0))
	r.advance(2 * time.Minute)
	if r.s.Get(r.week(0)) != nil {
		t.Fatal("a view kept past its age is still read")
	}
	r.keep(t, r.week(1))
	tk := r.s.Begin(r.clinic.ID)
	sn, _ := r.grid.LiveSnapshot(context.Background(), r.week(2))
	r.s.connected(false)
	if r.s.Len() != 0 || r.s.Begin(r.clinic.ID) != nil {
		t.Fatal("views kept, or readings begun, with the subscription down")
	}
	r.s.connected(true)
	r.s.connected(true)
	if r.s.Install(tk, sn, nil, time.Time{}) != nil {
		t.Fatal("a reading begun before the loss was kept")
	}
	r.keep(t, r.week(2))
}

// After a failover of PostgreSQL every view goes, and so does a reading
// begun before it (it may have read the old primary); new ones are kept.
func TestStoreDropsEverythingOnDropAll(t *testing.T) {
	t.Parallel()
	r := newRig(t, 10)
	r.keep(t, r.week(0))
	tk := r.s.Begin(r.clinic.ID)
	sn, _ := r.grid.LiveSnapshot(context.Background(), r.week(1))
	r.s.DropAll(DropFailover)
	if r.s.Len() != 0 || r.s.Get(r.week(0)) != nil {
		t.Fatal("a view outlived DropAll")
	}
	if r.s.Install(tk, sn, nil, time.Time{}) != nil {
		t.Fatal("a reading begun before DropAll was kept")
	}
	r.keep(t, r.week(1))
}
