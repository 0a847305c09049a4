package web_test

// Tests of the HTML stream of the booking page,
// GET /c/:slug/book/:typeId/live?week=&specialist=, read over real HTTP and
// compared with the page itself.

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/testkit"
)

func TestLiveGridBeginsWithEveryDayAndCellExactlyAsThePageRendersThem(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	week := c.NextWeek()
	// Some state on the grid: a held cell (both specialists held by
	// others) and a cell held by one specialist only (free in the pooled view).
	a.hold(t, typ, c.Monday(10, 0), liveClient("p"))
	a.hold(t, typ, c.Monday(10, 0), liveClient("q"))
	sp1Hold := a.hold(t, typ, c.Monday(11, 0), liveClient("r"))

	t.Run("Pooled", func(t *testing.T) {
		v := a.viewer(t, c.Slug, typ, "week="+week)
		page, order := v.fragments()
		if n := cellCount(order); n != 5*16 || len(order) != 5*16+7 {
			t.Fatalf("a Monday-Friday 09-17 week of 30-minute slots has 7 days and 80 cells, the page shows %d ids, %d cells", len(order), n)
		}
		if got := stateOf(page[grid.CellID(uuid.Nil, c.Monday(10, 0))]); got != "held" {
			t.Fatalf("10:00 with both specialists held: %q", got)
		}
		if got := stateOf(page[grid.CellID(uuid.Nil, c.Monday(11, 0))]); got != "free" {
			t.Fatalf("11:00 with one specialist held: %q", got)
		}
		s := v.open()
		s.quiet(300 * time.Millisecond)
	})
	t.Run("OneSpecialist", func(t *testing.T) {
		v := a.viewer(t, c.Slug, typ, "week="+week+"&specialist="+sp1Hold.SpecialistID.String())
		page, _ := v.fragments()
		id := grid.CellID(sp1Hold.SpecialistID, c.Monday(11, 0))
		if got := stateOf(page[id]); got != "held" {
			t.Fatalf("the specialist's held 11:00 (%s): %q", id, got)
		}
		v.open()
	})
	t.Run("EveryConnectBeginsAgainWithEveryCell", func(t *testing.T) {
		v := a.viewer(t, c.Slug, typ, "week="+week)
		v.open()
		v.open() // the extension reconnects without Last-Event-ID
	})
}

func TestLiveGridCellFollowsHoldsReleasesBookingsAndCancellations(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{TrustedProxies: loopbackProxy}))
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	v := a.viewer(t, c.Slug, typ, "week="+c.NextWeek())
	s := v.open()
	at := c.Monday(10, 0)
	id := grid.CellID(uuid.Nil, at)
	x, y, z := liveClient("x"), liveClient("y"), liveClient("z")

	// One specialist held: still free in the pooled view; both: held.
	hx := a.hold(t, typ, at, x)
	hy := a.hold(t, typ, at, y)
	if hx.SpecialistID == hy.SpecialistID {
		t.Fatal("two holds of one slot went to one specialist")
	}
	v.cellChange(s, id, "held")

	a.release(t, hy, y)
	v.cellChange(s, id, "free")

	// Someone on another network takes the released time (y's own
	// network may not until the hold's life is over).
	hz := a.holdFrom(t, typ, uuid.Nil, at, z, "198.51.100.31")
	v.cellChange(s, id, "held")

	bx := a.bookLive(t, typ, hx, x)
	a.bookLive(t, typ, hz, z)
	v.cellChange(s, id, "taken")

	a.cancelBooking(t, bx)
	v.cellChange(s, id, "free")
	s.quiet(300 * time.Millisecond)
}

func TestLiveGridShowsTheViewersOwnHoldAsHeldForYouAndOthersSeeItFree(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	week := "week=" + c.NextWeek()
	me := a.viewer(t, c.Slug, typ, week)
	other := a.viewer(t, c.Slug, typ, week)
	me.returning()
	other.returning()
	mine, theirs := me.open(), other.open()
	myID := me.clientID()
	if myID == other.clientID() {
		t.Fatal("two browsers share a client id")
	}
	at := c.Monday(10, 0)
	id := grid.CellID(uuid.Nil, at)

	h := a.hold(t, typ, at, myID)
	me.cellChange(mine, id, "mine")
	page, _ := me.fragments()
	for _, want := range []string{"Held for you", `data-hold-id="` + h.HoldID + `"`, `data-until="`} {
		if !strings.Contains(page[id], want) {
			t.Fatalf("own held cell lacks %s: %s", want, page[id])
		}
	}

	// Someone else's hold on the other specialist: the viewer still holds
	// its own; the other viewer now sees the cell held.
	z := liveClient("z")
	hz := a.hold(t, typ, at, z)
	if before := other.cellChange(theirs, id, "held"); len(before) != 0 {
		t.Fatalf("the other viewer got %s before held: another's hold is never shown to it", describeEvents(before))
	}
	mine.quiet(300 * time.Millisecond)

	a.release(t, hz, z)
	a.release(t, h, myID)
	me.cellChange(mine, id, "free")
	other.cellChange(theirs, id, "free")
}

// The page of a type with fine slot steps shows hundreds of cells; the
// stream must still begin with every one of them.
func TestLiveGridSendsEveryCellOfAWeekWithFiveMinuteSteps(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{{
		Name: "Quick check", DurationMin: 30, SlotStepMin: 5, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1,
	}}})
	v := a.viewer(t, c.Slug, c.Types[0].ID, "week="+c.NextWeek())
	page, _ := v.fragments()
	if len(page) <= 256 {
		t.Fatalf("want a page of more cells than a stream buffers (256), got %d", len(page))
	}
	s := v.open()
	s.quiet(300 * time.Millisecond)
}

func TestLiveGridResendsEveryDayAndCellWhenTheRedisSubscriptionComesBack(t *testing.T) {
	t.Parallel()
	for name, step := range map[string]int32{"HalfHourSteps": 30, "FiveMinuteSteps": 5} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn := "livetest-" + uuid.NewString()[:8]
			a := newApp(t, withRedis(namedRedis(t, conn)))
			c := a.clinic(t, testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{{
				Name: "Consultation", DurationMin: 30, SlotStepMin: step, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1,
			}}})
			v := a.viewer(t, c.Slug, c.Types[0].ID, "week="+c.NextWeek())
			s := v.open()
			testkit.CutSubscription(t, conn)
			v.everyFragment(s) // events may have been lost: the whole state again
			s.quiet(300 * time.Millisecond)
		})
	}
}

func TestLiveGridRejectsUnknownClinicOrType(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	other := a.clinic(t, testkit.ClinicOptions{})
	for name, path := range map[string]string{
		"UnknownClinic":          "/c/no-such-clinic-" + uuid.NewString()[:8] + "/book/" + c.Types[0].ID.String() + "/live",
		"UnknownType":            "/c/" + c.Slug + "/book/" + uuid.NewString() + "/live",
		"TypeOfAnotherClinic":    "/c/" + c.Slug + "/book/" + other.Types[0].ID.String() + "/live",
		"MalformedWeekIsRefused": "/c/" + c.Slug + "/book/" + c.Types[0].ID.String() + "/live?week=next",
	} {
		t.Run(name, func(t *testing.T) {
			res, cancel := getStream(t, nil, a.URL+path)
			defer cancel()
			if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusBadRequest {
				t.Fatalf("%s: %d, want 404 or 400", path, res.StatusCode)
			}
			if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatal("an error is not a stream")
			}
		})
	}
}

// The grid package decides each cell's state per viewer: the owner of a
// hold sees "mine", others see "held" only once every specialist of a
// pooled slot is held, and "free" before.
func TestLiveGridCellStatesPerViewer(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	at := c.Monday(10, 0)
	monday := availability.DateOf(at, c.Loc)
	x, y, z := liveClient("x"), liveClient("y"), liveClient("z")
	ctx := context.Background()

	cellAt := func(v grid.View, who string) grid.Cell {
		t.Helper()
		sn, err := a.Deps.Grid.Snapshot(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, cl := range sn.Cells(who) {
			if cl.Start.Equal(at) {
				if cl.ID != grid.CellID(v.SpecialistID, at) {
					t.Fatalf("cell id %s, want %s", cl.ID, grid.CellID(v.SpecialistID, at))
				}
				return cl
			}
		}
		t.Fatalf("no cell at %s", at)
		return grid.Cell{}
	}
	pooled := grid.View{AppointmentTypeID: typ, From: monday, To: monday.AddDays(6)}

	hx := a.hold(t, typ, at, x)
	if cl := cellAt(pooled, x); cl.State != grid.Mine || cl.HoldID != hx.HoldID || cl.ExpiresAt.IsZero() {
		t.Fatalf("owner sees %+v, want mine with hold %s and its expiry", cl, hx.HoldID)
	}
	for _, who := range []string{y, ""} {
		if cl := cellAt(pooled, who); cl.State != grid.Free || cl.HoldID != "" {
			t.Fatalf("%q sees %+v, want free (one specialist left)", who, cl)
		}
	}
	justX := pooled
	justX.SpecialistID = hx.SpecialistID
	if cl := cellAt(justX, y); cl.State != grid.Held || cl.HoldID != "" || !cl.ExpiresAt.IsZero() {
		t.Fatalf("in the held specialist's view another sees %+v, want held without the hold's details", cl)
	}

	hy := a.hold(t, typ, at, y)
	for who, want := range map[string]grid.State{x: grid.Mine, y: grid.Mine, z: grid.Held, "": grid.Held} {
		if cl := cellAt(pooled, who); cl.State != want {
			t.Fatalf("%q sees %s with both specialists held, want %s", who, cl.State, want)
		}
	}
	justY := pooled
	justY.SpecialistID = hy.SpecialistID
	if cl := cellAt(justY, x); cl.State != grid.Held {
		t.Fatalf("x in y's specialist's view sees %s, want held", cl.State)
	}

	a.bookLive(t, typ, hx, x)
	a.bookLive(t, typ, hy, y)
	for _, who := range []string{x, y, z} {
		if cl := cellAt(pooled, who); cl.State != grid.Taken {
			t.Fatalf("%q sees %s once both are booked, want taken", who, cl.State)
		}
	}
}

// A page that just loaded connects with the state it shows: the stream
// does not redraw it, and later changes still arrive.
func TestLiveGridSkipsTheStateThePageAlreadyShows(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	monday := c.Monday(10, 0)
	page := a.do(t, "GET", c.BookURL(c.Type0(), monday, uuid.Nil), nil)
	m := regexp.MustCompile(`sse-connect="([^"]+)"`).FindStringSubmatch(page.Body)
	if m == nil || !strings.Contains(m[1], "state=") {
		t.Fatalf("no stream URL with a state in the page")
	}
	s := dialSSE(t, nil, a.URL+strings.ReplaceAll(m[1], "&amp;", "&"))
	for deadline := time.Now().Add(700 * time.Millisecond); time.Now().Before(deadline); {
		ev, ok, closed := s.next(time.Until(deadline))
		if closed {
			t.Fatal("the stream closed")
		}
		if ok && ev.Name != "" {
			t.Fatalf("the stream redrew the page it was told it shows (first event %s)", ev.Name)
		}
	}
	a.hold(t, c.Types[0].ID, monday, "someone")
	want := fmt.Sprintf("slot-any-%d", monday.Unix())
	if ev, _ := s.until(10*time.Second, "the change", func(e sseEvent) bool { return e.Name != "" }); ev.Name != want {
		t.Fatalf("first event %s, want %s", ev.Name, want)
	}
}
