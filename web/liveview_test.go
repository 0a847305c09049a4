package web_test

// The live views of watched grids: what a read answered from one costs
// (nothing at PostgreSQL or Redis), and that it follows every change.

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// inRequest marks the context of a request the test counts.
type inRequest struct{}

// requestCounts counts what requests (not background work) ask of
// PostgreSQL (queries and batches) and of Redis (commands, each command
// of a pipeline).
type requestCounts struct {
	pg    testkit.Queries
	redis testkit.Commands
}

func newRequestCounts() *requestCounts {
	inReq := func(ctx context.Context) bool { return ctx.Value(inRequest{}) != nil }
	n := &requestCounts{}
	n.pg.Only, n.redis.Only = inReq, inReq
	return n
}

// both is the two counts at once.
func (n *requestCounts) both() int64 { return n.pg.Load() + n.redis.Load() }

// countingApp boots the app as newApp does, on a pool and a Redis client
// of its own that count what its requests ask of them.
func countingApp(t *testing.T) (*app, *requestCounts) {
	t.Helper()
	n := newRequestCounts()
	cfg := testkit.DB(t).Config()
	cfg.ConnConfig.Tracer = &n.pg
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opt := *testkit.Redis(t).(*redis.Client).Options()
	rdb := redis.NewClient(&opt)
	rdb.AddHook(&n.redis)
	t.Cleanup(func() { _ = rdb.Close() })
	built := program.Build(pool, rdb, slog.New(slog.NewTextHandler(newTestLog(t), &slog.HandlerOptions{Level: slog.LevelWarn})),
		program.Options{HoldsPerMinute: 100000, LoginsPerMinute: 100000, BookingsPerAddress: 100000, LimitScope: uuid.NewString() + ":", HashCost: bcrypt.MinCost, MetricsPublic: true})
	deps := built.Deps
	bg, stop := context.WithCancel(context.Background())
	built.RunBackground(bg)
	h := web.New(deps, "127.0.0.1:0").Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), inRequest{}, true)))
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); stop() })
	waitHubReady(t, deps)
	return &app{URL: ts.URL, Deps: deps, Pool: pool, RDB: rdb, hc: http.DefaultClient}, n
}

// liveHits is how many reads of kind a live view answered.
func liveHits(t testing.TB, a *app, kind string) float64 {
	return a.metricSum(t, `clinic_liveview_reads_total\{kind="`+kind+`",result="hit"\}`)
}

// A week watched on instance A is answered from memory, yet shows at once
// what instance B does: a hold, a booking, a release.
func TestLiveViewFollowsHoldsAndBookingsOfAnotherInstance(t *testing.T) {
	t.Parallel()
	a, n := countingApp(t)
	b := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	typ, sp := c.Type0(), c.Specialists[0].ID
	monday := c.Monday(10, 0)
	page := c.BookURL(typ, monday, sp)
	week := c.Week(monday)
	slotsURL := "/v1/appointment-types/" + typ.ID.String() + "/timeslots?from=" + week + "&to=" + c.Week(monday.AddDate(0, 0, 6)) + "&specialistId=" + sp.String()
	stateAt := func(start time.Time) string {
		return cellState(a.do(t, "GET", page, nil).Want(http.StatusOK).Doc(), grid.CellID(sp, start))
	}
	cold := n.both()
	if st := stateAt(monday); st != "free" {
		t.Fatalf("cell before any hold: %q", st)
	}
	if n.both() == cold {
		t.Fatal("the first read of the week was counted as costing nothing: the counters count nothing")
	}
	hits, before := liveHits(t, a, "page"), n.both()
	if st := stateAt(monday); st != "free" {
		t.Fatalf("cell read again: %q", st)
	}
	a.do(t, "GET", slotsURL, nil).Want(http.StatusOK)
	if got := n.both() - before; got != 0 {
		t.Fatalf("a watched week's page and timeslots cost %d queries and Redis commands, want 0", got)
	}
	if liveHits(t, a, "page") != hits+1 || liveHits(t, a, "timeslots") < 1 {
		t.Fatal("the second read was not answered by the live view")
	}

	// B holds 10:00: A shows it held as soon as it heard it, and never
	// free again.
	h := b.holdOf(t, typ.ID, sp, monday, "patient-b")
	testkit.WaitFor(t, evWait, "A to show B's hold", func() bool { return stateAt(monday) == "held" })
	for range 10 {
		if st := stateAt(monday); st != "held" {
			t.Fatalf("held cell later read as %q", st)
		}
		if strings.Contains(a.do(t, "GET", slotsURL, nil).Body, `"start":"`+monday.UTC().Format(time.RFC3339)+`"`) {
			t.Fatal("the timeslots of the watched week list a held slot")
		}
	}

	// B books 10:30: taken on A, still from the view.
	at := monday.Add(30 * time.Minute)
	b.book(t, typ.ID, b.holdOf(t, typ.ID, sp, at, "patient-c"), "patient-c")
	testkit.WaitFor(t, evWait, "A to show B's booking", func() bool { return stateAt(at) == "taken" })
	before = n.both()
	if st := stateAt(at); st != "taken" {
		t.Fatalf("booked cell read again as %q", st)
	}
	if got := n.both() - before; got != 0 {
		t.Fatalf("after a booking, the week cost %d queries and commands: the view should have taken the booking in", got)
	}

	// B lets 10:00 go: free again on A.
	b.release(t, h, "patient-b")
	testkit.WaitFor(t, evWait, "A to show the release", func() bool { return stateAt(monday) == "free" })
}

// A change of hours made on another instance drops the view (the next
// read shows it); losing the
// subscription drops every view, and reads go to the source meanwhile.
func TestLiveViewDropsOnCalendarChangeAndLostSubscription(t *testing.T) {
	t.Parallel()
	conn := "liveview-" + uuid.NewString()[:8]
	a := newApp(t, withRedis(namedRedis(t, conn)))
	c := a.clinic(t, testkit.ClinicOptions{})
	typ, sp := c.Type0(), c.Specialists[0].ID
	tuesday := c.Monday(10, 0).AddDate(0, 0, 1)
	page := c.BookURL(typ, tuesday, sp)
	cell := grid.CellID(sp, tuesday)
	a.do(t, "GET", page, nil).Want(http.StatusOK)
	if a.Deps.Views.Len() != 1 {
		t.Fatalf("views after a page read: %d, want 1", a.Deps.Views.Len())
	}

	spRow := a.specialist(t, c, sp)
	day := time.Date(tuesday.In(c.Loc).Year(), tuesday.In(c.Loc).Month(), tuesday.In(c.Loc).Day(), 0, 0, 0, 0, time.UTC)
	// Closed on another instance: this one hears it.
	if err := newApp(t).Deps.Practice.AddOverride(context.Background(), c.Admin.User(c.ID), sp, staffOverride(day, spRow.Version)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, evWait, "the closed day to show", func() bool {
		return cellState(a.do(t, "GET", page, nil).Doc(), cell) == ""
	})
	if a.metricSum(t, `clinic_liveview_drops_total\{reason="event"\}`) < 1 {
		t.Fatal("the calendar change did not drop the view")
	}

	testkit.WaitFor(t, evWait, "the view to be kept again", func() bool {
		a.do(t, "GET", page, nil).Want(http.StatusOK)
		return a.Deps.Views.Len() == 1
	})
	testkit.CutSubscription(t, conn)
	testkit.WaitFor(t, evWait, "the views to go with the subscription", func() bool { return a.Deps.Views.Len() == 0 })
	if cellState(a.do(t, "GET", page, nil).Want(http.StatusOK).Doc(), cell) != "" {
		t.Fatal("the page read from the source lost the closed day")
	}
	testkit.WaitFor(t, evWait, "a view once the subscription is back", func() bool {
		a.do(t, "GET", page, nil).Want(http.StatusOK)
		return a.Deps.Views.Len() == 1
	})
}

// The grid page and the timeslots carry an ETag: 304 while nothing
// changed, 200 with a new tag after a change. An anonymous page view
// starts no session.
func TestLiveViewValidators(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typ := c.Type0()
	monday := c.Monday(10, 0)
	page := c.BookURL(typ, monday, uuid.Nil)
	slotsURL := "/v1/appointment-types/" + typ.ID.String() + "/timeslots?from=" + c.Week(monday) + "&to=" + c.Week(monday.AddDate(0, 0, 6))
	for _, u := range []string{page, slotsURL} {
		first := a.do(t, "GET", u, nil).Want(http.StatusOK)
		tag := first.Header.Get("ETag")
		if tag == "" || first.Header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("%s: ETag %q, Cache-Control %q", u, tag, first.Header.Get("Cache-Control"))
		}
		if first.Cookie("clinic_session") != nil {
			t.Fatalf("%s: an anonymous read started a session", u)
		}
		if r := a.do(t, "GET", u, nil, "If-None-Match", tag); r.Status != http.StatusNotModified || r.Body != "" {
			t.Fatalf("%s with its ETag: %d, want 304 without a body", u, r.Status)
		}
	}
	pageTag := a.do(t, "GET", page, nil).Header.Get("ETag")
	slotsTag := a.do(t, "GET", slotsURL, nil).Header.Get("ETag")
	a.hold(t, typ.ID, monday, "validators")
	testkit.WaitFor(t, evWait, "a new page after the hold", func() bool {
		r := a.do(t, "GET", page, nil, "If-None-Match", pageTag)
		return r.Status == http.StatusOK && r.Header.Get("ETag") != pageTag
	})
	if r := a.do(t, "GET", slotsURL, nil, "If-None-Match", slotsTag); r.Status != http.StatusOK || r.Header.Get("ETag") == slotsTag {
		t.Fatalf("timeslots after the hold: %d with ETag %q", r.Status, r.Header.Get("ETag"))
	}
}

// A viewer who holds a slot gets their own page, not the one everyone
// shares: their cell is theirs.
func TestLiveViewLeavesAHoldersPageTheirOwn(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	typ, sp := c.Type0(), c.Specialists[0].ID
	start := c.Monday(11, 0)
	cl := a.newClient(t)
	f := openCellForm(t, cl, c, typ, sp, start) // the week is now watched
	cl.Post(f.Action, f.Values).Want(http.StatusOK)
	testkit.WaitFor(t, evWait, "the holder's page to show their hold", func() bool {
		return cellState(cl.Get(c.BookURL(typ, start, sp)).Want(http.StatusOK).Doc(), grid.CellID(sp, start)) == "mine"
	})
	if st := stateOn(t, a, c, typ, sp, start); st != "held" {
		t.Fatalf("another browser sees %q, want held", st)
	}
}

// staffOverride closes the specialist (of version version) on day.
func staffOverride(day time.Time, version int32) practice.OverrideInput {
	return practice.OverrideInput{Day: day, Closed: true, Note: "closed for the test", Version: version}
}

// A hold and a booking made through this instance are in its views at
// once, before their events come back from Redis, and the week is still
// answered from memory: a rush of holds does not send every read back to
// PostgreSQL and Redis.
func TestLiveViewTakesThisInstancesOwnHoldsAndBookings(t *testing.T) {
	t.Parallel()
	a, n := countingApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	typ, sp := c.Type0(), c.Specialists[0].ID
	monday := c.Monday(11, 0)
	page := c.BookURL(typ, monday, sp)
	stateAt := func(start time.Time) string {
		return cellState(a.do(t, "GET", page, nil).Want(http.StatusOK).Doc(), grid.CellID(sp, start))
	}
	stateAt(monday) // builds the view
	if st := stateAt(monday); st != "free" {
		t.Fatalf("cell before any hold: %q", st)
	}
	h := a.holdOf(t, typ.ID, sp, monday, "patient-own")
	before := n.both()
	if st := stateAt(monday); st != "held" {
		t.Fatalf("right after this instance's hold the cell reads %q, want held", st)
	}
	if got := n.both() - before; got != 0 {
		t.Fatalf("the read after this instance's hold cost %d queries and commands: the view was dropped, not kept", got)
	}
	a.book(t, typ.ID, h, "patient-own")
	before = n.both()
	if st := stateAt(monday); st != "taken" {
		t.Fatalf("right after this instance's booking the cell reads %q, want taken", st)
	}
	if got := n.both() - before; got != 0 {
		t.Fatalf("the read after this instance's booking cost %d queries and commands", got)
	}
}

// A claim of a time the watched week shows held by another patient is
// refused from the view: no PostgreSQL query and no Redis command (the
// per-address limit counts only claims that reach Redis). A re-click by the holder still gets its hold back, and
// a time the view shows free is asked of Redis as before.
func TestLiveViewRefusesAClaimOfAHeldTimeFromMemory(t *testing.T) {
	t.Parallel()
	a, n := countingApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	typ, sp := c.Type0(), c.Specialists[0].ID
	monday := c.Monday(11, 0)
	a.do(t, "GET", c.BookURL(typ, monday, sp), nil).Want(http.StatusOK) // builds the view
	h := a.holdOf(t, typ.ID, sp, monday, "patient-a")

	pg, rd := n.pg.Load(), n.redis.Load()
	r := a.postHold(t, typ.ID, sp, monday, "patient-b")
	wantError(t, r, http.StatusLocked, "SLOT_HELD", "")
	if r.Header.Get("Retry-After") == "" {
		t.Error("the refusal from the view has no Retry-After")
	}
	if dpg, drd := n.pg.Load()-pg, n.redis.Load()-rd; dpg != 0 || drd != 0 {
		t.Fatalf("the refused claim cost %d queries and %d Redis commands, want none", dpg, drd)
	}

	again := a.holdOf(t, typ.ID, sp, monday, "patient-a")
	if again.HoldID != h.HoldID {
		t.Fatalf("the holder's re-click got hold %s, want its own %s", again.HoldID, h.HoldID)
	}
	rd = n.redis.Load()
	a.holdOf(t, typ.ID, sp, monday.Add(time.Hour), "patient-b")
	// At least the claim's script: the day's free times may come from
	// this process's memory, which the script checks in its own step.
	if n.redis.Load()-rd < 1 {
		t.Fatal("a claim of a free time was not asked of Redis")
	}
}
