package stream

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/events"
)

// htmlStreamBuffer is how many changes a page's stream may fall behind
// before it is cut (its first state is written directly, not queued).
const htmlStreamBuffer = 32

// Viewer is who a stream is for.
type Viewer struct {
	// ClientID is the patient's client id ("" for kiosks, staff and
	// anyone who holds nothing).
	ClientID string
	// Access says whether the viewer may still see the stream; the stream
	// asks every AccessCheckEvery and ends with "access-ended" at the first
	// no. nil: a public stream.
	Access func(ctx context.Context) bool
	// Personalize, when set, makes each event the viewer's own (the live
	// view is shared, so a viewer's CSRF token is put in as it is sent).
	Personalize func([]byte) []byte
	// SignedIn marks a signed-in staff member's stream, which does not
	// count against its address network's streams (see addressStreams):
	// a clinic's staff share one network, and their streams end with
	// their sessions. Every other stream counts, kiosks' too (a board
	// may be public).
	SignedIn bool
	// Shown, when set, is told each batch of events before it is written
	// (the first state too): the staff's streams record the bookings they
	// show. An error withholds the batch and ends the stream.
	Shown func(events [][]byte) error
}

// AccessCheckEvery is how often a stream with an access check makes it:
// signing out, a disabled account or a revoked kiosk token ends the
// stream within about twice this, on whichever instance serves it. The
// streams of one instance share their checks (see accessCache).
const AccessCheckEvery = 2 * time.Second

// ServeHTMLStream joins a live view and writes its events until the
// stream ends. Every connect starts with every cell: the SSE extension
// reconnects without Last-Event-ID. A stream of a viewer who is not
// signed in counts against its address network until it ends: past the
// limit it is refused with 429 RATE_LIMITED (see addressStreams).
//
// Once the first events are out, an HTTP/1.1 stream leaves net/http: the
// connection is hijacked and served by a goroutine of its own (see
// hijackedSSE), so an open page costs its buffers and two small goroutines
// instead of the request's deep stack and net/http's per-connection
// buffers. Where the connection cannot be hijacked (HTTP/2) the handler
// serves the stream itself.
func (s *Live) ServeHTMLStream(c echo.Context, src liveSource, scope string, who Viewer) error {
	ctx := c.Request().Context()
	uncount := func() {}
	if !who.SignedIn {
		var err error
		if uncount, err = s.perAddress.take(c.RealIP()); err != nil {
			return err
		}
	}
	m := s.deps.StreamMetrics
	m.StreamOpened("html", scope)

	s.waitForEvents(ctx)
	st := &htmlStream{clientID: who.ClientID, out: make(chan []byte, htmlStreamBuffer), done: make(chan struct{})}
	lv, first, err := s.live.join(ctx, src, st, c.QueryParam("state"))
	if err != nil {
		uncount()
		m.StreamEnded("html", scope, events.ReasonInitFailed)
		return err
	}
	finish := func(reason string) {
		lv.leave(st)
		uncount()
		m.StreamEnded("html", scope, reason)
	}
	if who.Shown != nil {
		if err := who.Shown(first); err != nil {
			finish(events.ReasonInitFailed)
			return err
		}
	}
	w := startSSE(c)
	if who.Personalize != nil {
		first = personalized(first, who.Personalize)
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
		finish(pumpHTMLStream(outFor(w, who), st, ctx.Done(), who.Access))
		return nil
	}
	// The request's context and echo's context are done with once the
	// handler returns: the goroutine keeps only the connection.
	// net/http chunks HTTP/1.1 answers; an HTTP/1.0 one runs to the close.
	h := newHijackedSSE(conn, c.Request().ProtoAtLeast(1, 1))
	go func() {
		defer s.streams.Done()
		reason := pumpHTMLStream(outFor(h, who), st, h.gone, who.Access)
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

func outFor(out sseOut, who Viewer) sseOut {
	if who.Personalize != nil {
		out = personalizedOut{out: out, f: who.Personalize}
	}
	if who.Shown != nil {
		out = shownOut{out: out, f: who.Shown}
	}
	return out
}

// shownOut tells the viewer's Shown of each batch before it is written.
type shownOut struct {
	out sseOut
	f   func([][]byte) error
}

func (s shownOut) writeBatch(bs [][]byte) error {
	if err := s.f(bs); err != nil {
		return err
	}
	return s.out.writeBatch(bs)
}

// pumpHTMLStream writes what the live view sends until the stream ends, and
// says why it ended. gone is closed when the client goes away; access (nil:
// none) is asked every AccessCheckEvery whether the viewer may still see it.
func pumpHTMLStream(out sseOut, st *htmlStream, gone <-chan struct{}, access func(context.Context) bool) string {
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	var recheck <-chan time.Time
	if access != nil {
		t := time.NewTicker(AccessCheckEvery)
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
			ctx, cancel := context.WithTimeout(context.Background(), AccessCheckEvery)
			ok := access(ctx)
			cancel()
			if !ok {
				st.end(events.ReasonAccessEnded) // sent as the end event next round
			}
		case <-st.done:
			_ = out.writeBatch([][]byte{EncodeEvent("end", []byte(st.reason))})
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
