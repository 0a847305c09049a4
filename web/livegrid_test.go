package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// Tests of the HTML stream of the booking page,
// GET /c/:slug/book/:typeId/live?week=&specialist=, read over real HTTP and
// compared with the page itself.

// viewer is one browser: its cookie jar carries its session (and so its
// client id) from the page to the stream.
type viewer struct {
	t      *testing.T
	a      *liveApp
	http   *http.Client
	page   string // path of the booking page, with its query
	stream string // path of the page's live stream, with its query
}

func (a *liveApp) viewer(slug string, typeID uuid.UUID, query string) *viewer {
	a.t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		a.t.Fatal(err)
	}
	base := "/c/" + slug + "/book/" + typeID.String()
	return &viewer{t: a.t, a: a, http: &http.Client{Jar: jar}, page: base + "?" + query, stream: base + "/live?" + query}
}

var (
	cellRE     = regexp.MustCompile(`(?s)<li id="([^"]*)".*?</li>`)
	dayRE      = regexp.MustCompile(`(?s)<section id="(day-[^"]*)".*?</section>`)
	sseSwapRE  = regexp.MustCompile(`\ssse-swap="([^"]*)"`)
	dataStatRE = regexp.MustCompile(`\sdata-state="([^"]*)"`)
	rootRE     = regexp.MustCompile(`^<(li|section) id="([^"]*)"`)
)

// fragments loads the page and returns the HTML of each element the
// stream can replace, by id: every day section and every slot cell. It
// also returns the ids in page order.
func (v *viewer) fragments() (map[string]string, []string) {
	v.t.Helper()
	res, err := v.http.Get(v.a.URL + v.page)
	if err != nil {
		v.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		v.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		v.t.Fatalf("GET %s: %d %s", v.page, res.StatusCode, raw)
	}
	html := string(raw)
	// The page connects to its stream with the state it shows (&state=...),
	// so the stream need not resend it; the tests dial without it and get
	// everything.
	if !strings.Contains(html, `sse-connect="`+strings.ReplaceAll(v.stream, "&", "&amp;")+`&amp;state=`) {
		v.t.Fatalf("the page does not connect to %s", v.stream)
	}
	out := map[string]string{}
	var order []string
	add := func(re *regexp.Regexp, in string) {
		for _, m := range re.FindAllStringSubmatch(in, -1) {
			if _, dup := out[m[1]]; dup {
				v.t.Fatalf("id %s twice on the page", m[1])
			}
			out[m[1]] = m[0]
			order = append(order, m[1])
		}
	}
	add(dayRE, html)
	add(cellRE, html)
	if len(out) == 0 {
		v.t.Fatalf("no slot grid on %s", v.page)
	}
	return out, order
}

// cellCount counts the slot cells among ids.
func cellCount(ids []string) int {
	n := 0
	for _, id := range ids {
		if strings.HasPrefix(id, "slot-") {
			n++
		}
	}
	return n
}

// returning gives the viewer a session with a client id, as a browser has
// that held a slot before (a page view makes none).
func (v *viewer) returning() {
	v.t.Helper()
	sm := v.a.deps.Sessions
	ctx, err := sm.Load(context.Background(), "")
	if err != nil {
		v.t.Fatal(err)
	}
	sm.Put(ctx, "clientId", "b_"+strings.ReplaceAll(uuid.NewString(), "-", ""))
	token, _, err := sm.Commit(ctx)
	if err != nil {
		v.t.Fatal(err)
	}
	u, _ := url.Parse(v.a.URL)
	v.http.Jar.SetCookies(u, []*http.Cookie{{Name: "clinic_session", Value: token, Path: "/"}})
}

// clientID is the viewer's client id, read from its session as the server
// stores it (see returning).
func (v *viewer) clientID() string {
	v.t.Helper()
	u, _ := url.Parse(v.a.URL)
	for _, ck := range v.http.Jar.Cookies(u) {
		if ck.Name == "clinic_session" {
			ctx, err := v.a.deps.Sessions.Load(context.Background(), ck.Value)
			if err != nil {
				v.t.Fatal(err)
			}
			if id := v.a.deps.Sessions.GetString(ctx, "clientId"); id != "" {
				return id
			}
		}
	}
	v.t.Fatal("the viewer has no session with a client id")
	return ""
}

// open loads the page, connects its stream, and checks that the stream
// begins with every day and cell of the page, each exactly as the page
// renders it for this viewer. It returns the stream, positioned after them.
func (v *viewer) open() *sseConn {
	v.t.Helper()
	v.fragments() // as a browser does: the page (and its session) first
	s := dialSSE(v.t, v.http, v.a.URL+v.stream)
	v.everyFragment(s)
	return s
}

// everyFragment reads one event per day section and cell of the page,
// each exactly as the page now renders it.
func (v *viewer) everyFragment(s *sseConn) {
	v.t.Helper()
	page, order := v.fragments()
	got := map[string]bool{}
	for len(got) < len(page) {
		ev := s.must(evWait, fmt.Sprintf("fragment %d of %d", len(got)+1, len(page)))
		if ev.Name == "" && len(ev.Lines) == 0 {
			continue // the retry hint
		}
		if ev.Name == "end" {
			v.t.Fatalf("stream ended (%s) after %d of the page's %d days and cells", ev.Data(), len(got), len(page))
		}
		checkFragmentEvent(v.t, ev)
		want, ok := page[ev.Name]
		if !ok {
			v.t.Fatalf("stream sent %s, which the page does not show", ev.Name)
		}
		if got[ev.Name] {
			v.t.Fatalf("stream sent %s twice before sending all of the page", ev.Name)
		}
		got[ev.Name] = true
		if ev.Data() != want {
			v.t.Fatalf("%s:\nstream %s\npage   %s", ev.Name, ev.Data(), want)
		}
	}
	if len(order) != len(got) {
		v.t.Fatalf("stream sent %d days and cells, page shows %d", len(got), len(order))
	}
}

// checkFragmentEvent: an event is named after the element it carries (a
// cell or a day), and that element swaps itself in on exactly that event.
func checkFragmentEvent(t *testing.T, ev sseEvent) {
	t.Helper()
	d := ev.Data()
	for _, l := range ev.Lines {
		if strings.ContainsAny(l, "\r\n") {
			t.Fatalf("data line %q holds a line break", l)
		}
	}
	root := rootRE.FindStringSubmatch(d)
	swap := sseSwapRE.FindStringSubmatch(d) // the root's own: attributes come before children
	if root == nil || swap == nil || !strings.HasSuffix(d, "</"+root[1]+">") {
		t.Fatalf("event %s: data is not one live <li> cell or <section> day: %s", ev.Name, d)
	}
	if ev.Name != root[2] || ev.Name != swap[1] {
		t.Fatalf("event name %q, element id %q, sse-swap %q: all three must be equal", ev.Name, root[2], swap[1])
	}
}

func stateOf(html string) string {
	m := dataStatRE.FindStringSubmatch(html)
	if m == nil {
		return ""
	}
	return m[1]
}

// cellChange waits for the next event of cell id and asserts that no other
// cell changed meanwhile and that the cell is now in state want, exactly
// as the page now renders it for v.
func (v *viewer) cellChange(s *sseConn, id, want string) (before []sseEvent) {
	v.t.Helper()
	ev, before := s.until(evWait, "cell "+id+" "+want, func(e sseEvent) bool {
		return e.Name == id && stateOf(e.Data()) == want
	})
	for _, b := range before {
		if b.Name != id {
			v.t.Fatalf("cell %s changed too (%s); only %s should have", b.Name, describeEvents([]sseEvent{b}), id)
		}
	}
	checkFragmentEvent(v.t, ev)
	page, _ := v.fragments()
	if ev.Data() != page[id] {
		v.t.Fatalf("cell %s:\nstream %s\npage   %s", id, ev.Data(), page[id])
	}
	return before
}

func weekOf(t *testing.T) string { return mondayAt(t, 9, 0).Format("2006-01-02") }

func TestLiveGridBeginsWithEveryDayAndCellExactlyAsThePageRendersThem(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	week := weekOf(t)
	// Some state on the grid: a held cell (both specialists held by
	// others) and a cell held by one specialist only (free in the pooled view).
	a.hold(typ, mondayAt(t, 10, 0), liveClient("p"))
	a.hold(typ, mondayAt(t, 10, 0), liveClient("q"))
	sp1Hold := a.hold(typ, mondayAt(t, 11, 0), liveClient("r"))

	t.Run("Pooled", func(t *testing.T) {
		v := a.viewer(c.Slug, typ, "week="+week)
		page, order := v.fragments()
		if n := cellCount(order); n != 5*16 || len(order) != 5*16+7 {
			t.Fatalf("a Monday-Friday 09-17 week of 30-minute slots has 7 days and 80 cells, the page shows %d ids, %d cells", len(order), n)
		}
		if got := stateOf(page[grid.CellID(uuid.Nil, mondayAt(t, 10, 0))]); got != "held" {
			t.Fatalf("10:00 with both specialists held: %q", got)
		}
		if got := stateOf(page[grid.CellID(uuid.Nil, mondayAt(t, 11, 0))]); got != "free" {
			t.Fatalf("11:00 with one specialist held: %q", got)
		}
		s := v.open()
		s.quiet(300 * time.Millisecond)
	})
	t.Run("OneSpecialist", func(t *testing.T) {
		v := a.viewer(c.Slug, typ, "week="+week+"&specialist="+sp1Hold.SpecialistID.String())
		page, _ := v.fragments()
		id := grid.CellID(sp1Hold.SpecialistID, mondayAt(t, 11, 0))
		if got := stateOf(page[id]); got != "held" {
			t.Fatalf("the specialist's held 11:00 (%s): %q", id, got)
		}
		v.open()
	})
	t.Run("EveryConnectBeginsAgainWithEveryCell", func(t *testing.T) {
		v := a.viewer(c.Slug, typ, "week="+week)
		v.open()
		v.open() // the extension reconnects without Last-Event-ID
	})
}

func TestLiveGridCellFollowsHoldsReleasesBookingsAndCancellations(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	v := a.viewer(c.Slug, typ, "week="+weekOf(t))
	s := v.open()
	at := mondayAt(t, 10, 0)
	id := grid.CellID(uuid.Nil, at)
	x, y := liveClient("x"), liveClient("y")

	// One specialist held: still free in the pooled view; both: held.
	hx := a.hold(typ, at, x)
	hy := a.hold(typ, at, y)
	if hx.SpecialistID == hy.SpecialistID {
		t.Fatal("two holds of one slot went to one specialist")
	}
	v.cellChange(s, id, "held")

	a.release(hy, y)
	v.cellChange(s, id, "free")

	hy = a.hold(typ, at, y)
	v.cellChange(s, id, "held")

	bx := a.book(typ, hx, x)
	a.book(typ, hy, y)
	v.cellChange(s, id, "taken")

	a.cancelBooking(bx)
	v.cellChange(s, id, "free")
	s.quiet(300 * time.Millisecond)
}

func TestLiveGridShowsTheViewersOwnHoldAsHeldForYouAndOthersSeeItFree(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	week := "week=" + weekOf(t)
	me := a.viewer(c.Slug, typ, week)
	other := a.viewer(c.Slug, typ, week)
	me.returning()
	other.returning()
	mine, theirs := me.open(), other.open()
	myID := me.clientID()
	if myID == other.clientID() {
		t.Fatal("two browsers share a client id")
	}
	at := mondayAt(t, 10, 0)
	id := grid.CellID(uuid.Nil, at)

	h := a.hold(typ, at, myID)
	me.cellChange(mine, id, "mine")
	page, _ := me.fragments()
	for _, want := range []string{"Held for you", `data-hold-id="` + h.HoldID + `"`, `data-expires="`} {
		if !strings.Contains(page[id], want) {
			t.Fatalf("own held cell lacks %s: %s", want, page[id])
		}
	}

	// Someone else's hold on the other specialist: the viewer still holds
	// its own; the other viewer now sees the cell held.
	z := liveClient("z")
	hz := a.hold(typ, at, z)
	if before := other.cellChange(theirs, id, "held"); len(before) != 0 {
		t.Fatalf("the other viewer got %s before held: another's hold is never shown to it", describeEvents(before))
	}
	mine.quiet(300 * time.Millisecond)

	a.release(hz, z)
	a.release(h, myID)
	me.cellChange(mine, id, "free")
	other.cellChange(theirs, id, "free")
}

// The page of a type with fine slot steps shows hundreds of cells; the
// stream must still begin with every one of them.
func TestLiveGridSendsEveryCellOfAWeekWithFiveMinuteSteps(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{{
		Name: "Quick check", DurationMin: 30, SlotStepMin: 5, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1,
	}}})
	v := a.viewer(c.Slug, c.Types[0].ID, "week="+weekOf(t))
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
			a := bootLiveOn(t, testkit.DB(t), namedRedis(t, conn), web.Options{})
			c := a.clinic(testkit.ClinicOptions{Types: []db.AppointmentTypeInsertParams{{
				Name: "Consultation", DurationMin: 30, SlotStepMin: step, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1,
			}}})
			v := a.viewer(c.Slug, c.Types[0].ID, "week="+weekOf(t))
			s := v.open()
			cutSubscription(t, conn)
			v.everyFragment(s) // events may have been lost: the whole state again
			s.quiet(300 * time.Millisecond)
		})
	}
}

func TestLiveGridRejectsUnknownClinicOrType(t *testing.T) {
	t.Parallel()
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	other := a.clinic(testkit.ClinicOptions{})
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
	a := bootLive(t, web.Options{})
	c := a.clinic(testkit.ClinicOptions{})
	typ := c.Types[0].ID
	at := mondayAt(t, 10, 0)
	loc, _ := time.LoadLocation("Europe/Berlin")
	monday := availability.DateOf(at, loc)
	x, y, z := liveClient("x"), liveClient("y"), liveClient("z")
	ctx := context.Background()

	cellAt := func(v grid.View, who string) grid.Cell {
		t.Helper()
		sn, err := a.deps.Grid.Snapshot(ctx, v)
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

	hx := a.hold(typ, at, x)
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

	hy := a.hold(typ, at, y)
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

	a.book(typ, hx, x)
	a.book(typ, hy, y)
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
	ts := newServer(t, nil)
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	loc, _ := time.LoadLocation(c.Timezone)
	monday := testkit.NextWeekday(time.Now(), loc, time.Monday, 10, 0)
	page := fmt.Sprintf("%s/c/%s/book/%s?week=%s", ts.URL, c.Slug, c.Types[0].ID, monday.Format("2006-01-02"))
	res, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`sse-connect="([^"]+)"`).FindSubmatch(raw)
	if m == nil || !strings.Contains(string(m[1]), "state=") {
		t.Fatalf("no stream URL with a state in the page")
	}
	stream := strings.ReplaceAll(string(m[1]), "&amp;", "&")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+stream, nil)
	sres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sres.Body.Close()
	names := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(sres.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				names <- n
			}
		}
	}()
	select {
	case n := <-names:
		t.Fatalf("the stream redrew the page it was told it shows (first event %s)", n)
	case <-time.After(700 * time.Millisecond):
	}
	body := fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"clientId":"someone"}`, c.Types[0].ID, monday.UTC().Format(time.RFC3339))
	hr, err := http.Post(ts.URL+"/v1/holds", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Body.Close()
	want := fmt.Sprintf("slot-any-%d", monday.Unix())
	select {
	case n := <-names:
		if n != want {
			t.Fatalf("first event %s, want %s", n, want)
		}
	case <-ctx.Done():
		t.Fatal("the change never arrived")
	}
}
