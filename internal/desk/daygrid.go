package desk

// The day grid's model: which instants a day's rows stand for, when each
// specialist works, and what the grid loads to draw a day or a week.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
)

// Span is a stretch of real time, half-open.
type Span struct{ Start, End time.Time }

// Contains says whether t falls in the span.
func (s Span) Contains(t time.Time) bool { return !t.Before(s.Start) && t.Before(s.End) }

// zoneSpan is a stretch of real time over which a zone's offset is constant.
type zoneSpan struct {
	start, end time.Time
	offset     time.Duration
}

// wallClock maps the wall clock of one local date onto real time, across
// a change of offset that day (a wall time can have no instant or two).
type wallClock struct {
	midnight time.Time // 00:00 of the date read as if the zone were UTC
	spans    []zoneSpan
}

func newWallClock(loc *time.Location, d availability.Date) wallClock {
	c := wallClock{midnight: time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)}
	lo, hi := c.midnight.Add(-24*time.Hour), c.midnight.Add(48*time.Hour)
	for from := lo; from.Before(hi); {
		t := from.In(loc)
		_, off := t.Zone()
		_, next := t.ZoneBounds()
		to := hi
		if !next.IsZero() && next.After(from) && next.Before(hi) {
			to = next
		}
		offset := time.Duration(off) * time.Second
		if n := len(c.spans); n > 0 && c.spans[n-1].offset == offset {
			c.spans[n-1].end = to
		} else {
			c.spans = append(c.spans, zoneSpan{start: from, end: to, offset: offset})
		}
		from = to
	}
	return c
}

// first is the earliest instant at which the clock has reached wall
// (after midnight): for a skipped time, the end of the gap.
func (c wallClock) first(wall time.Duration) time.Time {
	for _, s := range c.spans {
		t := c.midnight.Add(wall - s.offset)
		if t.Before(s.start) {
			t = s.start
		}
		if t.Before(s.end) {
			return t
		}
	}
	return c.spans[len(c.spans)-1].end
}

// last is where a range ending at wall really ends: the last time the
// clock reaches wall coming from earlier times.
func (c wallClock) last(wall time.Duration) time.Time {
	for i := len(c.spans) - 1; i >= 0; i-- {
		s := c.spans[i]
		t := c.midnight.Add(wall - s.offset)
		if t.After(s.end) {
			t = s.end
		}
		if t.After(s.start) {
			return t
		}
	}
	return c.spans[0].start
}

// at is the first instant whose wall clock reads wall on the date; false
// for a time the clock skips.
func (c wallClock) at(wall time.Duration) (time.Time, bool) {
	for _, s := range c.spans {
		if t := c.midnight.Add(wall - s.offset); !t.Before(s.start) && t.Before(s.end) {
			return t, true
		}
	}
	return time.Time{}, false
}

// OpenSpans are the instants the working ranges rs of date d cover, in
// order.
func OpenSpans(loc *time.Location, d availability.Date, rs []availability.Range) []Span {
	if len(rs) == 0 {
		return nil
	}
	c := newWallClock(loc, d)
	out := make([]Span, 0, len(rs))
	for _, r := range rs {
		s := Span{c.first(time.Duration(r.Start) * time.Minute), c.last(time.Duration(r.End) * time.Minute)}
		if s.Start.Before(s.End) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Span) int { return a.Start.Compare(b.Start) })
	return out
}

// WallInstant is the first instant of date d in loc whose wall clock reads
// min minutes after midnight; false for a time the clock skips.
func WallInstant(loc *time.Location, d availability.Date, min int) (time.Time, bool) {
	return newWallClock(loc, d).at(time.Duration(min) * time.Minute)
}

// DayRows are a day grid's rows: instants a step apart in real time from
// the first, each labelled by its wall-clock time. A day on which the
// clocks go forward has no rows for the skipped hour; one on which they go
// back has the repeated hour twice.
type DayRows struct {
	Step  time.Duration
	Start []time.Time
}

// RowsOf are the rows from the earliest start of open to its latest end,
// stretched by whole steps to hold every span of busy too (a booking
// outside today's hours stays on the grid). None when both are empty.
func RowsOf(step time.Duration, open, busy []Span) DayRows {
	rows := DayRows{Step: step}
	if step <= 0 || (len(open) == 0 && len(busy) == 0) {
		return rows
	}
	var first, end time.Time
	for i, s := range slices.Concat(open, busy) {
		if i == 0 || s.Start.Before(first) {
			first = s.Start
		}
		if i == 0 || s.End.After(end) {
			end = s.End
		}
	}
	if len(open) > 0 {
		// Rows keep the step from the earliest opening, also backwards.
		anchor := open[0].Start
		for _, s := range open {
			if s.Start.Before(anchor) {
				anchor = s.Start
			}
		}
		first = anchor.Add(-step * time.Duration(stepsUp(anchor.Sub(first), step)))
	}
	for t := first; t.Before(end); t = t.Add(step) {
		rows.Start = append(rows.Start, t)
	}
	return rows
}

// stepsUp is how many steps cover d (d >= 0).
func stepsUp(d, step time.Duration) int64 {
	return int64((d + step - 1) / step)
}

// Label is row i's wall-clock time in loc.
func (r DayRows) Label(i int, loc *time.Location) string { return r.Start[i].In(loc).Format("15:04") }

// Place is the row a span starts in and how many rows it covers (at least
// one), clipped to the grid; ok false when it lies outside.
func (r DayRows) Place(s Span) (row, n int, ok bool) {
	if len(r.Start) == 0 {
		return 0, 0, false
	}
	first := r.Start[0]
	end := first.Add(r.Step * time.Duration(len(r.Start)))
	if !s.Start.Before(end) || !s.End.After(first) {
		return 0, 0, false
	}
	row = int(s.Start.Sub(first) / r.Step)
	if s.Start.Before(first) {
		row = 0
	}
	last := int(stepsUp(s.End.Sub(first), r.Step))
	last = min(last, len(r.Start))
	return row, max(1, last-row), true
}

// DayHours are a specialist's hours on one date: Ranges in minutes from
// local midnight, and the override that set them, if any.
type DayHours struct {
	Ranges   []availability.Range
	Override bool
	Closed   bool
	Note     string
}

// GridSpecialist is an active specialist and their hours on each day shown.
type GridSpecialist struct {
	ID   uuid.UUID
	Name string
	Days []DayHours
}

// GridData is what the day grid and the week view draw, apart from holds
// and free times.
type GridData struct {
	// Step is the clinic's smallest slot step (30 minutes without types).
	Step        time.Duration
	Specialists []GridSpecialist // active ones, in the clinic's order
	Bookings    []CalendarBooking
}

// defaultGridStep is a clinic's grid step before it has any types.
const defaultGridStep = 30 * time.Minute

// GridData loads a clinic's active specialists with their hours on the
// days local days from from on, its confirmed bookings over those days,
// and its smallest slot step. Like ClinicCalendar it takes a clinic: the
// live grid is shared by the clinic's viewers.
//
// Errors: none of its own (database failures are internal).
func (b *Bookings) GridData(ctx context.Context, clinicID uuid.UUID, loc *time.Location, from availability.Date, days int) (GridData, error) {
	q := db.New(b.pool)
	out := GridData{Step: defaultGridStep}
	types, err := q.AppointmentTypeListByClinic(ctx, clinicID)
	if err != nil {
		return GridData{}, fmt.Errorf("list types: %w", err)
	}
	for i, t := range types {
		if st := time.Duration(t.SlotStepMin) * time.Minute; st > 0 && (i == 0 || st < out.Step) {
			out.Step = st
		}
	}
	sps, err := q.SpecialistListByClinic(ctx, clinicID)
	if err != nil {
		return GridData{}, fmt.Errorf("list specialists: %w", err)
	}
	weekly, err := q.WeeklyHoursListByClinic(ctx, clinicID)
	if err != nil {
		return GridData{}, fmt.Errorf("list hours: %w", err)
	}
	to := from.AddDays(days - 1)
	ovs, err := q.OverrideListByClinicRange(ctx, db.OverrideListByClinicRangeParams{
		ClinicID: clinicID, FromDay: dayUTC(from), ToDay: dayUTC(to),
	})
	if err != nil {
		return GridData{}, fmt.Errorf("list overrides: %w", err)
	}
	for _, sp := range sps {
		if !sp.Active {
			continue
		}
		g := GridSpecialist{ID: sp.ID, Name: sp.Name, Days: make([]DayHours, days)}
		for i := range g.Days {
			g.Days[i] = hoursOn(sp.ID, from.AddDays(i), weekly, ovs)
		}
		out.Specialists = append(out.Specialists, g)
	}
	start := time.Date(from.Year, from.Month, from.Day, 0, 0, 0, 0, loc)
	endDate := to.AddDays(1)
	// A day's wall clock can reach a little past its midnight: take the
	// neighbours' edges too; the grid places by rows.
	end := time.Date(endDate.Year, endDate.Month, endDate.Day, 0, 0, 0, 0, loc)
	if out.Bookings, err = b.calendar(ctx, clinicID, start.Add(-3*time.Hour), end.Add(3*time.Hour)); err != nil {
		return GridData{}, err
	}
	return out, nil
}

func dayUTC(d availability.Date) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

// hoursOn are a specialist's hours on date d: their overrides of that date
// when there are any (closed when one says so), else their week.
func hoursOn(sp uuid.UUID, d availability.Date, weekly []db.WeeklyHoursListByClinicRow, ovs []db.OverrideListByClinicRangeRow) DayHours {
	var h DayHours
	day := dayUTC(d)
	for _, o := range ovs {
		if o.SpecialistID != sp || !o.Day.Equal(day) {
			continue
		}
		h.Override = true
		if h.Note == "" {
			h.Note = o.Note
		}
		if o.Closed {
			h.Closed = true
		} else {
			h.Ranges = append(h.Ranges, availability.Range{Start: int(o.StartMin), End: int(o.EndMin)})
		}
	}
	if h.Closed {
		h.Ranges = nil
	}
	if h.Override {
		return h
	}
	for _, w := range weekly {
		if w.SpecialistID == sp && time.Weekday(w.Weekday) == d.Weekday() {
			h.Ranges = append(h.Ranges, availability.Range{Start: int(w.StartMin), End: int(w.EndMin)})
		}
	}
	return h
}
