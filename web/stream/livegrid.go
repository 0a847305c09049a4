package stream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"runtime/trace"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/views"
)

// liveGrids shares the work of live pages: every stream watching the same
// view (a booking grid's type, specialist filter and days; a kiosk board)
// is served by one liveView that recomputes the view once per change and
// renders each changed fragment once; only viewers who hold a slot get
// fragments rendered for them alone.
type liveGrids struct {
	srv   *Live
	mu    sync.Mutex
	views map[string]*liveView
	// updates counts the views' updates by how they were computed: in
	// memory from the events, or by reading the view again.
	updates *prometheus.CounterVec
}

func newLiveGrids(s *Live, reg prometheus.Registerer) *liveGrids {
	updates := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "clinic_live_view_updates_total",
		Help: "Updates of the live pages' shared views, by how: events applied in memory (memory) or the view read again (read).",
	}, []string{"how"})
	if reg != nil {
		reg.MustRegister(updates)
	}
	return &liveGrids{srv: s, views: map[string]*liveView{}, updates: updates}
}

// Fragment is one swappable piece of a page: its DOM id (also the SSE
// event name) and its HTML. A fragment with a Sig is a container, sent
// only when its Sig (its shape, such as which cells it holds) changes;
// the pieces inside it are fragments of their own.
type Fragment struct {
	ID, HTML, Sig string
}

// version is what a fragment is compared by.
func (f Fragment) version() string {
	if f.Sig != "" {
		return "sig:" + f.Sig
	}
	return f.HTML
}

// liveSource computes a view's fragments.
type liveSource interface {
	Key() string
	ClinicID() uuid.UUID
	// Snapshot returns the fragments as anyone sees them, and a function
	// giving a viewer's own fragments when they differ from those (ok false
	// when they do not).
	Snapshot(ctx context.Context) (anon []Fragment, personal func(clientID string) ([]Fragment, bool), err error)
}

// liveApplier is a liveSource that can move its last computation on by
// events in memory: a live view of it reads the source again only for
// what cannot be applied. Every stream of a booking grid waits for its
// view's update, so a reading on every hold would be on every change's
// way to them.
type liveApplier interface {
	// Apply is Snapshot after evs, computed from the state of the last
	// Snapshot or Apply without reading the source; ok is false when evs
	// cannot be applied exactly (a cancellation, a change of set-up, a
	// last reading that failed), and Snapshot must be asked instead.
	Apply(ctx context.Context, evs []holds.Event) (anon []Fragment, personal func(clientID string) ([]Fragment, bool), ok bool)
}

// liveView is one view's shared state and its streams.
type liveView struct {
	lg      *liveGrids
	src     liveSource
	sub     *events.Sub
	mu      sync.Mutex
	streams map[*htmlStream]struct{}
	generic map[string]string // fragment id -> version as anyone sees it now
	// The last computation, kept current by update: a stream joining a
	// live view starts from it instead of computing the view again.
	anon     []Fragment
	personal func(clientID string) ([]Fragment, bool)
	encoded  [][]byte // anon as SSE events, shared by every joining stream
	hash     string   // StateHash(anon), once asked for
}

func (lv *liveView) anonHash() string {
	if lv.hash == "" {
		lv.hash = StateHash(lv.anon)
	}
	return lv.hash
}

// StateHash names a set of fragments: the page puts it in its stream's URL.
func StateHash(fs []Fragment) string {
	h := sha256.New()
	for _, f := range fs {
		h.Write([]byte(f.ID))
		h.Write([]byte{0})
		h.Write([]byte(f.HTML))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// htmlStream is one browser's stream.
type htmlStream struct {
	clientID string
	out      chan []byte
	done     chan struct{}
	once     sync.Once
	reason   string
	last     map[string]string // the cells as this viewer last got them, while personal
}

func (st *htmlStream) end(reason string) {
	st.once.Do(func() {
		st.reason = reason
		close(st.done)
	})
}

// send queues an encoded event; a stream that cannot keep up is cut.
func (st *htmlStream) send(b []byte) bool {
	select {
	case st.out <- b:
		return true
	default:
		st.end(events.ReasonSendFailed)
		return false
	}
}

// join registers a stream for a view and returns the whole current state
// as its first events, for the stream to write before anything it is sent
// later. It runs under the view's lock, so no change computed later can be
// lost between the snapshot and the registration.
//
// known is the state the page was rendered with (StateHash); when it is
// still the state, the stream starts with nothing to send, so a page that
// just loaded is not redrawn.
func (lg *liveGrids) join(ctx context.Context, src liveSource, st *htmlStream, known string) (*liveView, [][]byte, error) {
	lg.mu.Lock()
	lv := lg.views[src.Key()]
	if lv != nil {
		select {
		case <-lv.sub.Done():
			// The hub cut this view (it fell behind): its streams are
			// ending; start a fresh one rather than join a dead view.
			lv = nil
		default:
		}
	}
	if lv == nil {
		lv = &liveView{
			lg: lg, src: src, streams: map[*htmlStream]struct{}{},
			sub: lg.srv.deps.Hub.Subscribe(context.WithoutCancel(ctx), []string{events.ClinicKey(src.ClinicID())}, "", 1024),
		}
		lg.views[src.Key()] = lv
		go lv.run()
	}
	lv.mu.Lock()
	lg.mu.Unlock()
	locked := true
	defer func() {
		if locked {
			lv.mu.Unlock()
		}
	}()

	if lv.anon == nil {
		anon, personal, err := src.Snapshot(ctx)
		if err != nil {
			// leave takes the grids' lock before the view's, as join
			// does: the view's is let go first. A view no stream joined
			// in the meantime goes.
			lv.mu.Unlock()
			locked = false
			lv.leave(st)
			return nil, nil, err
		}
		lv.anon, lv.personal, lv.generic = anon, personal, asMap(anon)
		lv.encoded, lv.hash = nil, ""
	}
	var first [][]byte
	if mine, ok := lv.personal(st.clientID); ok {
		st.last = asMap(mine)
		if known == "" || known != StateHash(mine) {
			for _, f := range mine {
				first = append(first, EncodeEvent(f.ID, []byte(f.HTML)))
			}
		}
	} else if known == "" || known != lv.anonHash() {
		if lv.encoded == nil {
			lv.encoded = make([][]byte, len(lv.anon))
			for i, f := range lv.anon {
				lv.encoded[i] = EncodeEvent(f.ID, []byte(f.HTML))
			}
		}
		first = lv.encoded // shared, never modified
	}
	lv.streams[st] = struct{}{}
	return lv, first, nil
}

func asMap(fs []Fragment) map[string]string {
	m := make(map[string]string, len(fs))
	for _, f := range fs {
		m[f.ID] = f.version()
	}
	return m
}

// leave removes a stream; the last one out stops the view.
func (lv *liveView) leave(st *htmlStream) {
	lv.lg.mu.Lock()
	lv.mu.Lock()
	lv.leaveLocked(st)
	lv.mu.Unlock()
	lv.lg.mu.Unlock()
}

// leaveLocked needs lg.mu and lv.mu held.
func (lv *liveView) leaveLocked(st *htmlStream) {
	delete(lv.streams, st)
	if len(lv.streams) == 0 && lv.lg.views[lv.src.Key()] == lv {
		delete(lv.lg.views, lv.src.Key())
		lv.lg.srv.deps.Hub.Unsubscribe(lv.sub)
		lv.sub.End()
	}
}

// run recomputes the view after each change and sends every stream the
// cells that changed for it.
func (lv *liveView) run() {
	// Time moves slots out of reach (minimum notice) without any event:
	// look again every minute.
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			lv.updateOrRetry(change{read: true})
		case <-lv.sub.Done():
			lv.endAll(lv.sub.Reason())
			return
		case it := <-lv.sub.C:
			// Coalesce: one update covers every change queued so far.
			var ch change
			for more := true; more; {
				ch.add(it)
				select {
				case it = <-lv.sub.C:
				default:
					more = false
				}
			}
			lv.updateOrRetry(ch)
		}
	}
}

// change is what one update of a live view is for.
type change struct {
	evs []holds.Event // applied in memory where the source can
	// read: the view is read again (time moved slots out of reach, or
	// events may have been lost); full: every fragment is sent again.
	read, full bool
}

func (ch *change) add(it events.Item) {
	if it.Resync || it.Event == nil {
		ch.read, ch.full = true, true
		return
	}
	ch.evs = append(ch.evs, *it.Event)
}

// updateOrRetry does not let a failed recomputation (a database hiccup)
// lose a change: it tries again, a few times, before giving up until the
// next event or the minute tick.
func (lv *liveView) updateOrRetry(ch change) {
	for attempt := 0; ; attempt++ {
		err := lv.update(ch)
		if err == nil || attempt == 4 {
			if err != nil {
				lv.lg.srv.deps.Logger.Warn("live view update failed", "err", err)
			}
			return
		}
		select {
		case <-lv.sub.Done():
			return
		case <-time.After(time.Duration(200*(attempt+1)) * time.Millisecond):
		}
	}
}

func (lv *liveView) endAll(reason string) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	for st := range lv.streams {
		st.end(reason)
	}
}

func (lv *liveView) update(ch change) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if len(lv.streams) == 0 {
		return nil
	}
	anon, personal, err := lv.next(ctx, ch)
	if err != nil {
		return err
	}
	full := ch.full
	defer trace.StartRegion(ctx, "live.send").End()
	next := asMap(anon)
	// One update is one item per stream, however many fragments changed: a
	// resync or a change of hours must not overflow a stream's buffer.
	var changed []byte
	for _, f := range anon {
		if full || lv.generic[f.ID] != f.version() {
			changed = append(changed, EncodeEvent(f.ID, []byte(f.HTML))...)
		}
	}
	prev := lv.generic
	lv.generic, lv.anon, lv.personal, lv.encoded, lv.hash = next, anon, personal, nil, ""
	for st := range lv.streams {
		if mine, ok := personal(st.clientID); ok {
			if st.last == nil {
				st.last = prev
			}
			m := asMap(mine)
			lv.sendDiff(st, st.last, mine, full)
			st.last = m
			continue
		}
		if st.last != nil {
			// No longer holding anything: back to the shared fragments.
			lv.sendDiff(st, st.last, anon, full)
			st.last = nil
			continue
		}
		if len(changed) > 0 {
			st.send(changed)
		}
	}
	return nil
}

// next is the view after ch: applied in memory when the source can, else
// read again. The steps are regions of the runtime trace: a trace of a
// fan-out shows how long a change took from its event to the streams'
// queues.
func (lv *liveView) next(ctx context.Context, ch change) ([]Fragment, func(string) ([]Fragment, bool), error) {
	if a, ok := lv.src.(liveApplier); ok && !ch.read {
		r := trace.StartRegion(ctx, "live.apply")
		anon, personal, ok := a.Apply(ctx, ch.evs)
		r.End()
		if ok {
			lv.lg.updates.WithLabelValues("memory").Inc()
			return anon, personal, nil
		}
	}
	defer trace.StartRegion(ctx, "live.snapshot").End()
	lv.lg.updates.WithLabelValues("read").Inc()
	return lv.src.Snapshot(ctx)
}

// sendDiff sends the fragments of after that differ from before, in order
// (containers before what they contain).
func (lv *liveView) sendDiff(st *htmlStream, before map[string]string, after []Fragment, full bool) {
	var batch []byte
	for _, f := range after {
		if full || before[f.ID] != f.version() {
			batch = append(batch, EncodeEvent(f.ID, []byte(f.HTML))...)
		}
	}
	if len(batch) > 0 {
		st.send(batch)
	}
}

// CellMemo keeps the cells a live view rendered in its last computation
// and the current one: a change re-renders the cells it changed, not the
// whole week. A view uses it under its lock only.
type CellMemo struct{ prev, cur map[views.SlotCellVM]string }

// Turn starts a computation: what the last one rendered is kept for it.
func (m *CellMemo) Turn() {
	if m != nil {
		m.prev, m.cur = m.cur, make(map[views.SlotCellVM]string, len(m.cur))
	}
}

// Render is vm's HTML: kept from this turn or the last, rendered only when
// neither had it (nil m: always rendered).
func (m *CellMemo) Render(ctx context.Context, vm views.SlotCellVM) string {
	if m == nil {
		return renderCell(ctx, vm)
	}
	h, ok := m.cur[vm]
	if !ok {
		if h, ok = m.prev[vm]; !ok {
			h = renderCell(ctx, vm)
		}
		m.cur[vm] = h
	}
	return h
}

// renderCell renders one cell with the page's component, in the language
// ctx carries.
func renderCell(ctx context.Context, vm views.SlotCellVM) string {
	var b bytes.Buffer
	_ = views.SlotCell(vm).Render(ctx, &b)
	return b.String()
}
