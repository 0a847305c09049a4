package patient

import (
	"bytes"
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/stream"
)

// gridSource is a booking grid as a live source: a fragment per day (sent
// when the day's slots change shape) and one per cell. It keeps the
// snapshot it last computed from, so a hold, a heartbeat, a release or a
// booking moves the grid on in memory (see Apply); a grid is read again
// only for what cannot be applied.
type gridSource struct {
	srv  *Pages
	page pageView
	memo *stream.CellMemo
	last *keptGrid
}

// keptGrid is the snapshot a live grid was last computed from, nil when
// the next change must read it again. Its live view uses it under its
// lock only.
type keptGrid struct{ sn *grid.Snapshot }

// Key names the view and its language: viewers of another language get
// cells of their own.
func (g gridSource) Key() string {
	// The zone is in the key: after a clinic changes it, new viewers get a
	// view of their own, in the new zone.
	return g.page.pageURL() + "|" + g.page.grid().Key() + "|" + g.page.tr.Lang() + "|" + g.page.loc.String()
}

func (g gridSource) ClinicID() uuid.UUID { return g.page.clinicID }

// Snapshot reads the grid. Only a reading that found the clinic's live
// holds is kept for events to be applied to (with Redis down a grid shows
// none, and must be read again on the next change).
func (g gridSource) Snapshot(ctx context.Context) ([]stream.Fragment, func(string) ([]stream.Fragment, bool), error) {
	g.last.sn = nil
	sn, err := g.srv.deps.Grid.LiveSnapshot(ctx, g.page.grid())
	if err == nil {
		g.last.sn = sn
	} else if sn, err = g.srv.deps.Grid.Snapshot(ctx, g.page.grid()); err != nil {
		return nil, nil, err
	}
	anon, personal := g.render(ctx, sn)
	return anon, personal, nil
}

// Apply is the grid after evs, from the snapshot last computed: the events
// a snapshot takes exactly (grid.Snapshot.Apply), with the holds whose
// life ended meanwhile left out, as a reading now would leave them out.
func (g gridSource) Apply(ctx context.Context, evs []holds.Event) ([]stream.Fragment, func(string) ([]stream.Fragment, bool), bool) {
	sn := g.last.sn
	if sn == nil {
		return nil, nil, false
	}
	for _, ev := range evs {
		var ok bool
		if sn, ok = sn.Apply(ev); !ok {
			g.last.sn = nil
			return nil, nil, false
		}
	}
	sn = sn.Lapsed(time.Now())
	g.last.sn = sn
	anon, personal := g.render(ctx, sn)
	return anon, personal, true
}

// render is sn's fragments as anyone sees them, and a viewer's own where
// they differ.
func (g gridSource) render(ctx context.Context, sn *grid.Snapshot) ([]stream.Fragment, func(string) ([]stream.Fragment, bool)) {
	g.memo.Turn()
	renderAll := func(cells []grid.Cell) []stream.Fragment { return g.page.fragments(ctx, cells, g.memo) }
	personal := func(clientID string) ([]stream.Fragment, bool) {
		if !sn.Personal(clientID) {
			return nil, false
		}
		return renderAll(sn.Cells(clientID)), true
	}
	return renderAll(sn.Cells("")), personal
}

// fragments are a grid's days and cells as the live stream sends them.
// memo (nil: none) keeps cells rendered before.
func (p pageView) fragments(ctx context.Context, cells []grid.Cell, memo *stream.CellMemo) []stream.Fragment {
	ctx = i18n.WithLocalizer(ctx, p.tr)
	var out []stream.Fragment
	for _, d := range p.weekDays(cells, true) {
		d.Rendered = make([]string, len(d.Cells))
		sig := d.ID
		for i, c := range d.Cells {
			d.Rendered[i] = memo.Render(ctx, c)
			sig += "," + c.ID
		}
		var buf bytes.Buffer
		_ = views.DaySection(d).Render(ctx, &buf)
		out = append(out, stream.Fragment{ID: d.ID, HTML: buf.String(), Sig: sig})
		for i, c := range d.Cells {
			out = append(out, stream.Fragment{ID: c.ID, HTML: d.Rendered[i]})
		}
	}
	return out
}
