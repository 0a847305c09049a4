package desk

// The marks of a series' sessions ("2/6") on the calendar and in search.

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// SeriesMark is a booking's place in its series: session N of Total. The
// zero mark is a booking of no series.
type SeriesMark struct {
	N, Total int
}

// seriesMarks are the marks of the bookings ids that are sessions of a
// series.
func (b *Bookings) seriesMarks(ctx context.Context, clinicID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]SeriesMark, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.New(b.pool).SeriesMarks(ctx, db.SeriesMarksParams{ClinicID: clinicID, Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("series marks: %w", err)
	}
	out := make(map[uuid.UUID]SeriesMark, len(rows))
	for _, r := range rows {
		out[r.ID] = SeriesMark{N: int(r.Position), Total: int(r.Total)}
	}
	return out, nil
}

// markCalendar gives each calendar booking its series mark.
func (b *Bookings) markCalendar(ctx context.Context, clinicID uuid.UUID, bs []CalendarBooking) error {
	ids := make([]uuid.UUID, len(bs))
	for i, x := range bs {
		ids[i] = x.ID
	}
	marks, err := b.seriesMarks(ctx, clinicID, ids)
	if err != nil {
		return err
	}
	for i := range bs {
		bs[i].Series = marks[bs[i].ID]
	}
	return nil
}

// markSearch gives each search result its series mark.
func (b *Bookings) markSearch(ctx context.Context, clinicID uuid.UUID, rs []SearchResult) error {
	ids := make([]uuid.UUID, len(rs))
	for i, x := range rs {
		ids[i] = x.ID
	}
	marks, err := b.seriesMarks(ctx, clinicID, ids)
	if err != nil {
		return err
	}
	for i := range rs {
		rs[i].Series = marks[rs[i].ID]
	}
	return nil
}
