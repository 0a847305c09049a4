package patient

import (
	"bytes"
	"context"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/stream"
)

// gridSource is a booking grid as a live source: a fragment per day (sent
// when the day's slots change shape) and one per cell.
type gridSource struct {
	srv  *Pages
	page pageView
	memo *stream.CellMemo
}

// Key names the view and its language: viewers of another language get
// cells of their own.
func (g gridSource) Key() string {
	// The zone is in the key: after a clinic changes it, new viewers get a
	// view of their own, in the new zone.
	return g.page.pageURL() + "|" + g.page.grid().Key() + "|" + g.page.tr.Lang() + "|" + g.page.loc.String()
}

func (g gridSource) ClinicID() uuid.UUID { return g.page.clinicID }

func (g gridSource) Snapshot(ctx context.Context) ([]stream.Fragment, func(string) ([]stream.Fragment, bool), error) {
	sn, err := g.srv.deps.Grid.Snapshot(ctx, g.page.grid())
	if err != nil {
		return nil, nil, err
	}
	g.memo.Turn()
	renderAll := func(cells []grid.Cell) []stream.Fragment { return g.page.fragments(ctx, cells, g.memo) }
	personal := func(clientID string) ([]stream.Fragment, bool) {
		if !sn.Personal(clientID) {
			return nil, false
		}
		return renderAll(sn.Cells(clientID)), true
	}
	return renderAll(sn.Cells("")), personal, nil
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
