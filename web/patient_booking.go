package web

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
)

// pageView is the grid view a booking page or its stream asks for.
type pageView struct {
	slug       string
	clinicID   uuid.UUID
	typeID     uuid.UUID
	specialist uuid.UUID
	monday     availability.Date
	loc        *time.Location
	token      string          // set on the reschedule grid of a manage link
	tr         *i18n.Localizer // the viewer's language
	// first and last are the dates the type can be booked in now (see
	// boundWeek): the page links to no week outside them.
	first, last availability.Date
}

func (p pageView) grid() grid.View {
	return grid.View{AppointmentTypeID: p.typeID, SpecialistID: p.specialist, From: p.monday, To: p.monday.AddDays(6)}
}

func (p pageView) base() string { return "/c/" + p.slug + "/book/" + p.typeID.String() }

// pageURL is the grid page itself: booking, or moving a booking.
func (p pageView) pageURL() string {
	if p.token != "" {
		return "/manage/" + p.token + "/reschedule"
	}
	return p.base()
}

// holdURL is where a click on a free cell posts.
func (p pageView) holdURL() string {
	if p.token != "" {
		return p.pageURL()
	}
	return p.base() + "/hold"
}

func (p pageView) streamURL() string { return p.pageURL() + "/live" + p.query() }

// streamURLFor is the stream URL carrying the state the page shows, so
// the stream skips resending it.
func (p pageView) streamURLFor(ctx context.Context, cells []grid.Cell) string {
	return p.streamURL() + "&state=" + stateHash(p.fragments(ctx, cells, nil))
}

func (p pageView) heading() string {
	if p.token != "" {
		return p.tr.T("booking.heading.move", nil)
	}
	return p.tr.T("booking.heading.book", nil)
}

func (p pageView) filter() string {
	if p.specialist == uuid.Nil {
		return ""
	}
	return p.specialist.String()
}

func (p pageView) query() string {
	q := "?week=" + p.monday.String()
	if p.specialist != uuid.Nil {
		q += "&specialist=" + p.specialist.String()
	}
	return q
}

// readPageView reads slug, typeId, week and specialist; the type must be
// the clinic's.
func (s *Server) readPageView(c echo.Context) (pageView, error) {
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return pageView{}, err
	}
	tr := speak(c, clinic.Language) // before any refusal: its page speaks it too
	typeID, err := uuid.Parse(c.Param("typeId"))
	if err != nil {
		return pageView{}, apperr.NotFoundf("typeId", "No such appointment type.")
	}
	if owner, err := s.deps.Slots.ClinicOfType(ctx, typeID); err != nil || owner != clinic.ID {
		return pageView{}, apperr.NotFoundf("typeId", "No such appointment type.")
	}
	loc, err := s.deps.Slots.Zone(ctx, clinic.ID)
	if err != nil {
		return pageView{}, err
	}
	p := pageView{slug: clinic.Slug, clinicID: clinic.ID, typeID: typeID, loc: loc, tr: tr}
	day := availability.DateOf(time.Now(), loc)
	if w := c.FormValue("week"); w != "" {
		if day, err = availability.ParseDate(w); err != nil {
			return pageView{}, apperr.Invalidf("week", "week must be a date, YYYY-MM-DD.")
		}
	}
	p.monday = day.WeekStart()
	if err := s.boundWeek(ctx, &p); err != nil {
		return pageView{}, err
	}
	if v := c.QueryParam("specialist"); v != "" {
		if p.specialist, err = uuid.Parse(v); err != nil {
			return pageView{}, apperr.Invalidf("specialist", "specialist must be a specialist's id.")
		}
	}
	return p, nil
}

// boundWeek refuses a week that shares no day with the type's booking
// window (a grid of the year 3000 would be computed and cached for nobody)
// and notes the window in p.
func (s *Server) boundWeek(ctx context.Context, p *pageView) error {
	first, last, err := s.deps.Slots.Window(ctx, p.typeID)
	if err != nil {
		return err
	}
	if p.monday.AddDays(6).Before(first) || last.Before(p.monday) {
		return apperr.Invalidf("week", "week must be a date from %s to %s.", first, last)
	}
	p.first, p.last = first, last
	return nil
}

// inWindow reports whether any day of the week starting monday can be booked.
func (p pageView) inWindow(monday availability.Date) bool {
	return !monday.AddDays(6).Before(p.first) && !p.last.Before(monday)
}

// cellVM shapes a grid cell for the page.
func (p pageView) cellVM(c grid.Cell, live bool) views.SlotCellVM {
	vm := views.SlotCellVM{
		ID: c.ID, State: string(c.State), Time: p.tr.Time(c.Start.In(p.loc)),
		StartUTC: c.Start.UTC().Format(time.RFC3339), HoldURL: p.holdURL(), Live: live,
		HoldID: c.HoldID, Week: p.monday.String(),
	}
	if p.specialist != uuid.Nil {
		vm.Specialist = p.specialist.String()
	}
	if !c.ExpiresAt.IsZero() {
		vm.ExpiresAt = c.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	return vm
}

// weekDays lays the cells out by local day.
func (p pageView) weekDays(cells []grid.Cell, live bool) []views.DayVM {
	days := make([]views.DayVM, 7)
	for i := range days {
		d := p.monday.AddDays(i)
		t := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, p.loc)
		days[i] = views.DayVM{ID: "day-" + d.String(), Label: p.tr.Day(t), Date: d.String(), Live: live}
	}
	for _, c := range cells {
		i := availability.DaysBetween(p.monday, availability.DateOf(c.Start, p.loc))
		if i >= 0 && i < 7 {
			days[i].Cells = append(days[i].Cells, p.cellVM(c, live))
		}
	}
	return days
}

// htmlStreamBuffer is how many changes a page's stream may fall behind
// before it is cut (its first state is written directly, not queued).
const htmlStreamBuffer = 32

// bookingStream answers GET /c/:slug/book/:typeId/live: the HTML stream a
// booking page's grid connects to. Each event is named after the cell it
// replaces and carries that cell as the page renders it for this viewer.
func (s *Server) bookingStream(c echo.Context) error {
	p, err := s.readPageView(c)
	if err != nil {
		return err
	}
	return s.serveHTMLStream(c, p.source(s), p.typeID.String(), viewer{clientID: s.existingClientID(c)})
}

// source is the page's grid as a live source; grids whose cells post
// elsewhere (booking, moving one booking) are different views.
func (p pageView) source(s *Server) gridSource {
	return gridSource{srv: s, page: p, memo: &cellMemo{}}
}

// viewer is who a stream is for.
type viewer struct {
	// clientID is the patient's client id ("" for kiosks, staff and
	// anyone who holds nothing).
	clientID string
	// access says whether the viewer may still see the stream; the stream
	// asks every accessCheckEvery and ends with "access-ended" at the first
	// no. nil: a public stream.
	access func(ctx context.Context) bool
	// personalize, when set, makes each event the viewer's own (the live
	// view is shared, so a viewer's CSRF token is put in as it is sent).
	personalize func([]byte) []byte
}

// accessCheckEvery is how often a stream with an access check makes it:
// signing out, a disabled account or a revoked kiosk token ends the
// stream within about twice this, on whichever instance serves it. The
// streams of one instance share their checks (see accessCache).
const accessCheckEvery = 2 * time.Second

// serveHTMLStream joins a live view and writes its events until the
// stream ends. Every connect starts with every cell: the SSE extension
// reconnects without Last-Event-ID.
//
// Once the first events are out, an HTTP/1.1 stream leaves net/http: the
// connection is hijacked and served by a goroutine of its own (see
// hijackedSSE), so an open page costs its buffers and two small goroutines
// instead of the request's deep stack and net/http's per-connection
// buffers. Where the connection cannot be hijacked (HTTP/2) the handler
// serves the stream itself.
func (s *Server) serveHTMLStream(c echo.Context, src liveSource, scope string, who viewer) error {
	ctx := c.Request().Context()
	m := s.deps.StreamMetrics
	m.StreamOpened("html", scope)

	s.waitForEvents(ctx)
	st := &htmlStream{clientID: who.clientID, out: make(chan []byte, htmlStreamBuffer), done: make(chan struct{})}
	lv, first, err := s.live.join(ctx, src, st, c.QueryParam("state"))
	if err != nil {
		m.StreamEnded("html", scope, events.ReasonInitFailed)
		return err
	}
	finish := func(reason string) {
		lv.leave(st)
		m.StreamEnded("html", scope, reason)
	}
	w := startSSE(c)
	if who.personalize != nil {
		first = personalized(first, who.personalize)
	}
	if err := w.writeFirst(first); err != nil {
		finish(events.ReasonSendFailed)
		return nil
	}
	// Counted before the hijack: once hijacked, the connection is no longer
	// one that Shutdown waits for, and ListenAndServe must find the stream
	// here instead.
	s.streams.Add(1)
	conn, _, err := http.NewResponseController(c.Response()).Hijack()
	if err != nil {
		s.streams.Done()
		finish(pumpHTMLStream(outFor(w, who), st, ctx.Done(), who.access))
		return nil
	}
	// The request's context and echo's context are done with once the
	// handler returns: the goroutine keeps only the connection.
	// net/http chunks HTTP/1.1 answers; an HTTP/1.0 one runs to the close.
	h := newHijackedSSE(conn, c.Request().ProtoAtLeast(1, 1))
	go func() {
		defer s.streams.Done()
		reason := pumpHTMLStream(outFor(h, who), st, h.gone, who.access)
		h.close()
		finish(reason)
	}()
	return nil
}

// sseOut is where a stream's events go: the handler's response, or a
// hijacked connection.
type sseOut interface {
	writeBatch(bs [][]byte) error
}

// personalizedOut makes each event the viewer's own before it is written.
type personalizedOut struct {
	out sseOut
	f   func([]byte) []byte
}

func (p personalizedOut) writeBatch(bs [][]byte) error {
	return p.out.writeBatch(personalized(bs, p.f))
}

// personalized applies f to copies: the events may be shared.
func personalized(bs [][]byte, f func([]byte) []byte) [][]byte {
	out := make([][]byte, len(bs))
	for i, b := range bs {
		out[i] = f(b)
	}
	return out
}

func outFor(out sseOut, who viewer) sseOut {
	if who.personalize == nil {
		return out
	}
	return personalizedOut{out: out, f: who.personalize}
}

// pumpHTMLStream writes what the live view sends until the stream ends, and
// says why it ended. gone is closed when the client goes away; access (nil:
// none) is asked every accessCheckEvery whether the viewer may still see it.
func pumpHTMLStream(out sseOut, st *htmlStream, gone <-chan struct{}, access func(context.Context) bool) string {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	var recheck <-chan time.Time
	if access != nil {
		t := time.NewTicker(accessCheckEvery)
		defer t.Stop()
		recheck = t.C
	}
	var batch [][]byte
	for {
		var err error
		select {
		case <-gone:
			return events.ReasonClientAbort
		case <-recheck:
			ctx, cancel := context.WithTimeout(context.Background(), accessCheckEvery)
			ok := access(ctx)
			cancel()
			if !ok {
				st.end(events.ReasonAccessEnded) // sent as the end event next round
			}
		case <-st.done:
			_ = out.writeBatch([][]byte{encodeNamed("end", []byte(st.reason))})
			return st.reason
		case b := <-st.out:
			// Write what is queued as one batch.
			batch = append(batch[:0], b)
			for more := true; more; {
				select {
				case b = <-st.out:
					batch = append(batch, b)
				default:
					more = false
				}
			}
			err = out.writeBatch(batch)
			clear(batch)
		case <-ping.C:
			err = out.writeBatch([][]byte{pingEvent})
		}
		if err != nil {
			return events.ReasonSendFailed
		}
	}
}

var pingEvent = []byte(": ping\n\n")
