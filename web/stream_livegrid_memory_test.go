package web_test

// A live grid moves on in memory by the events it hears (a hold, a
// heartbeat, a release, a booking) instead of reading the week again:
// what every stream then shows must be what a fresh reading renders.

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/internal/testkit"
)

// Three browsers watch one week: one that holds a time, one that will
// hold nothing, and one that never had a client id. After each event the
// grid applies in memory, each stream (its page with every event swapped
// in) equals the page read afresh for its browser, byte for byte; a
// cancellation, which a grid cannot apply, reads the week again.
func TestLiveGridAppliesEventsInMemoryExactlyAsAFreshReadingShowsThem(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typ := c.Types[0].ID
	week := "week=" + c.NextWeek()
	me, other, anon := a.viewer(t, c.Slug, typ, week), a.viewer(t, c.Slug, typ, week), a.viewer(t, c.Slug, typ, week)
	me.returning()
	other.returning()
	browsers := []*shownGrid{me.show(), other.show(), anon.show()}
	myID, z := me.clientID(), liveClient("z")
	at := c.Monday(10, 0)

	updates := func(how string) float64 {
		return a.metricSum(t, `clinic_live_view_updates_total\{how="`+how+`"\}`)
	}
	// step makes a change and waits for the grid's update, made in memory
	// or by reading the week again (how).
	step := func(name, how string, change func()) {
		t.Helper()
		before := map[string]float64{"memory": updates("memory"), "read": updates("read")}
		change()
		for deadline := time.Now().Add(evWait); updates(how) == before[how]; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no update (%s) of the live grid within %s", name, how, evWait)
			}
		}
		for _, b := range browsers {
			b.matchesFreshPage(name)
		}
		if n := updates("read"); how == "memory" && n != before["read"] {
			t.Fatalf("%s: the grid was read again (%v readings, %v before); the event applies in memory", name, n, before["read"])
		}
	}

	var h, hz holdView
	step("HoldOfOneViewer", "memory", func() { h = a.hold(t, typ, at, myID) })
	step("HoldOfAnotherClient", "memory", func() { hz = a.hold(t, typ, at, z) })
	step("Heartbeat", "memory", func() {
		if r := a.do(t, "PATCH", "/v1/holds", map[string]string{"holdId": h.HoldID, "clientId": myID}); r.Status != 200 {
			t.Fatalf("heartbeat: %d %s", r.Status, r.Body)
		}
	})
	step("Release", "memory", func() { a.release(t, hz, z) })
	var booked bookedView
	step("Booking", "memory", func() { booked = a.bookLive(t, typ, h, myID) })
	step("CancellationIsReadAgain", "read", func() { a.cancelBooking(t, booked) })
}

// shownGrid is what a browser shows of a booking grid: the page it
// loaded, with each event of its stream swapped in.
type shownGrid struct {
	v     *viewer
	s     *sseConn
	shown map[string]string
}

// show loads the page and opens its stream (which begins with every day
// and cell as the page shows them).
func (v *viewer) show() *shownGrid {
	v.t.Helper()
	s := v.open()
	page, _ := v.fragments()
	return &shownGrid{v: v, s: s, shown: page}
}

var cellIDsRE = regexp.MustCompile(`<li id="[^"]*"`)

// matchesFreshPage takes the stream's events until what the browser
// shows equals the page read from the source now (the weeks kept in
// memory for pages are dropped first): every cell byte for byte, every
// day with the same cells in the same order (a day is sent again only
// when its cells change; the cells inside it are swapped one by one).
func (g *shownGrid) matchesFreshPage(step string) {
	g.v.t.Helper()
	g.v.a.Deps.Views.DropAll(liveview.DropReplaced)
	page, _ := g.v.fragments()
	diff := g.differs(page)
	for deadline := time.Now().Add(evWait); diff != ""; diff = g.differs(page) {
		ev, ok, closed := g.s.next(time.Until(deadline))
		if closed || (!ok && !time.Now().Before(deadline)) {
			g.v.t.Fatalf("%s: the stream of %s shows what a fresh reading does not: %s", step, g.who(), diff)
		}
		if ok && ev.Name != "" {
			checkFragmentEvent(g.v.t, ev)
			g.shown[ev.Name] = ev.Data()
		}
	}
}

func (g *shownGrid) differs(page map[string]string) string {
	if len(page) != len(g.shown) {
		return "another number of days and cells"
	}
	for id, want := range page {
		got, ok := g.shown[id]
		switch {
		case !ok:
			return id + " missing"
		case strings.HasPrefix(id, "day-"):
			if !slices.Equal(cellIDsRE.FindAllString(got, -1), cellIDsRE.FindAllString(want, -1)) {
				return id + " holds other cells"
			}
		case got != want:
			return id + ":\nstream " + got + "\npage   " + want
		}
	}
	return ""
}

// who names the browser in a failure.
func (g *shownGrid) who() string {
	u, _ := url.Parse(g.v.a.URL)
	for _, ck := range g.v.http.Jar.Cookies(u) {
		if ck.Name == "clinic_session" {
			return "the returning browser " + g.v.clientID()
		}
	}
	return "a browser without a client id"
}
