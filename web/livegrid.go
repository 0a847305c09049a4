package web

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/views"
)

// liveGrids shares the work of live slot grids: every stream watching the
// same view (type, specialist filter, days) is served by one liveView that
// recomputes the view once per change and renders each changed cell once;
// only viewers who hold a slot get cells rendered for them alone.
type liveGrids struct {
	srv   *Server
	mu    sync.Mutex
	views map[string]*liveView
}

func newLiveGrids(s *Server) *liveGrids {
	return &liveGrids{srv: s, views: map[string]*liveView{}}
}

// liveView is one view's shared state and its streams.
type liveView struct {
	lg       *liveGrids
	view     grid.View
	sub      *events.Sub
	mu       sync.Mutex
	streams  map[*htmlStream]struct{}
	generic  map[string]string // cell id -> HTML as anyone sees it now
	rendered cellRenderer
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

// cellRenderer turns grid cells into the page's cell HTML.
type cellRenderer func(c grid.Cell) string

// join registers a stream for a view and queues the whole current state as
// its first events. It runs under the view's lock, so no change computed
// later can overtake the snapshot.
func (lg *liveGrids) join(ctx context.Context, v grid.View, clinicID uuid.UUID, render cellRenderer, st *htmlStream) (*liveView, error) {
	lg.mu.Lock()
	lv := lg.views[v.Key()]
	if lv == nil {
		lv = &liveView{
			lg: lg, view: v, streams: map[*htmlStream]struct{}{}, rendered: render,
			sub: lg.srv.deps.Hub.Subscribe(context.WithoutCancel(ctx), []string{events.ClinicKey(clinicID)}, "", 1024),
		}
		lg.views[v.Key()] = lv
		go lv.run()
	}
	lv.mu.Lock()
	lg.mu.Unlock()
	defer lv.mu.Unlock()

	sn, err := lg.srv.deps.Grid.Snapshot(ctx, v)
	if err != nil {
		lv.leaveLocked(st)
		return nil, err
	}
	if lv.generic == nil {
		lv.generic = lv.renderAll(sn.Cells(""))
	}
	cells := lv.generic
	if sn.Personal(st.clientID) {
		cells = lv.renderAll(sn.Cells(st.clientID))
		st.last = cells
	}
	for _, c := range sn.Cells(st.clientID) {
		if !st.send(encodeNamed(c.ID, []byte(cells[c.ID]))) {
			break
		}
	}
	lv.streams[st] = struct{}{}
	return lv, nil
}

func (lv *liveView) renderAll(cells []grid.Cell) map[string]string {
	out := make(map[string]string, len(cells))
	for _, c := range cells {
		out[c.ID] = lv.rendered(c)
	}
	return out
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
	if len(lv.streams) == 0 && lv.lg.views[lv.view.Key()] == lv {
		delete(lv.lg.views, lv.view.Key())
		lv.lg.srv.deps.Hub.Unsubscribe(lv.sub)
		lv.sub.End()
	}
}

// run recomputes the view after each change and sends every stream the
// cells that changed for it.
func (lv *liveView) run() {
	for {
		select {
		case <-lv.sub.Done():
			lv.endAll(lv.sub.Reason())
			return
		case it := <-lv.sub.C:
			full := it.Resync
			// Coalesce: one recomputation covers every change queued so far.
			for drained := false; !drained; {
				select {
				case more := <-lv.sub.C:
					full = full || more.Resync
				default:
					drained = true
				}
			}
			lv.update(full)
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

func (lv *liveView) update(full bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if len(lv.streams) == 0 {
		return
	}
	sn, err := lv.lg.srv.deps.Grid.Snapshot(ctx, lv.view)
	if err != nil {
		lv.lg.srv.deps.Logger.Warn("live grid update", "err", err)
		return
	}
	anon := sn.Cells("")
	next := make(map[string]string, len(anon))
	var changed [][]byte // encoded events of cells whose anonymous HTML changed
	for _, c := range anon {
		h := lv.rendered(c)
		next[c.ID] = h
		if full || lv.generic[c.ID] != h {
			changed = append(changed, encodeNamed(c.ID, []byte(h)))
		}
	}
	prev := lv.generic
	lv.generic = next
	for st := range lv.streams {
		if sn.Personal(st.clientID) {
			if st.last == nil {
				st.last = prev
			}
			mine := lv.renderAll(sn.Cells(st.clientID))
			lv.sendDiff(st, st.last, mine, full)
			st.last = mine
			continue
		}
		if st.last != nil {
			// No longer holding anything: back to the shared cells.
			lv.sendDiff(st, st.last, next, full)
			st.last = nil
			continue
		}
		for _, ev := range changed {
			if !st.send(ev) {
				break
			}
		}
	}
}

func (lv *liveView) sendDiff(st *htmlStream, before, after map[string]string, full bool) {
	for id, h := range after {
		if full || before[id] != h {
			if !st.send(encodeNamed(id, []byte(h))) {
				return
			}
		}
	}
}

// renderCell renders one cell with the page's component.
func renderCell(vm views.SlotCellVM) string {
	var b bytes.Buffer
	_ = views.SlotCell(vm).Render(context.Background(), &b)
	return b.String()
}
