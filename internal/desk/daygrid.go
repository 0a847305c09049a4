package desk

// The day grid's model: which instants a day's rows stand for, when each
// specialist works, and what the grid loads to draw a day or a week.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
)

// Span is a stretch of real time, half-open.
type Span struct{ Start, End time.Time }

// Contains says whether t falls in the span.
func (s Span) Contains(t time.Time) bool { return !t.Before(s.Start) && t.Before(s.End) }

// OpenSpans are the instants the working ranges rs of date d cover, in
// order.
func OpenSpans(loc *time.Location, d availability.Date, rs []availability.Range) []Span {
	if len(rs) == 0 {
		return nil
	}
	c := availability.NewWallClock(loc, d)
	out := make([]Span, 0, len(rs))
	for _, r := range rs {
		s := Span{c.First(time.Duration(r.Start) * time.Minute), c.Last(time.Duration(r.End) * time.Minute)}
		if s.Start.Before(s.End) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Span) int { return a.Start.Compare(b.Start) })
	return out
}

// DayRows are a day grid's rows: instants a step apart in real time from
// the first, each labelled by its wall-clock time. A day on which the
// clocks go forward has no rows for the skipped hour; one on which they go
// back has the repeated hour twice. A week's rows (WeekRows) are wall-clock
// times instead, the same on every date; there a zero Start is a time the
// clock skips that day.
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

// Place is the row a span starts in and how many rows it covers (rows
// with no instant count when they lie between), clipped to the grid; ok
// false when no row falls within it.
func (r DayRows) Place(s Span) (row, n int, ok bool) {
	row = -1
	for i, t := range r.Start {
		if t.IsZero() {
			continue
		}
		if row < 0 && s.Start.Before(t.Add(r.Step)) && s.End.After(t) {
			row = i
		}
		if row >= 0 && t.Before(s.End) {
			n = i - row + 1
		}
	}
	return row, n, row >= 0 && n > 0
}

// WeekRows are the rows of one specialist's week, a column per date: one
// row per wall-clock time, a step apart, from the week's earliest opening
// to its latest closing, stretched by whole steps to hold every busy span
// (a booking outside the hours stays on the grid). Each date's rows are
// the instants of those wall times that day: on a day the clocks go
// forward a skipped time has none (a zero Start, which the grid greys),
// and on one they go back a repeated time stands at its first occurrence.
type WeekRows struct {
	// Minutes are the rows' wall-clock times in minutes from midnight
	// (past 1440 for a busy span that runs into the next date).
	Minutes []int
	Days    []DayRows // one per date, in order
}

// Label is row i's wall-clock time.
func (w WeekRows) Label(i int) string { return practice.FormatMin(w.Minutes[i] % 1440) }

// WeekRowsOf are the rows of the len(hours) dates from from in loc, given
// each date's hours and busy spans (busy[i] for date i; may be shorter).
// None when nobody works and nothing is booked.
func WeekRowsOf(loc *time.Location, from availability.Date, step time.Duration, hours []DayHours, busy [][]Span) WeekRows {
	out := WeekRows{Days: make([]DayRows, len(hours))}
	lo, hi := math.MaxInt, math.MinInt
	for i, h := range hours {
		day := from.AddDays(i)
		for _, r := range h.Ranges {
			lo, hi = min(lo, r.Start), max(hi, r.End)
		}
		if i < len(busy) {
			for _, s := range busy[i] {
				lo, hi = min(lo, wallMinute(s.Start, loc, day)), max(hi, wallMinute(s.End, loc, day))
			}
		}
	}
	stepMin := int(step / time.Minute)
	if lo >= hi || stepMin <= 0 {
		return WeekRows{}
	}
	lo -= lo % stepMin
	for m := lo; m < hi; m += stepMin {
		out.Minutes = append(out.Minutes, m)
	}
	for i := range hours {
		c := availability.NewWallClock(loc, from.AddDays(i))
		rows := DayRows{Step: step, Start: make([]time.Time, len(out.Minutes))}
		for j, m := range out.Minutes {
			rows.Start[j], _ = c.At(time.Duration(m) * time.Minute)
		}
		out.Days[i] = rows
	}
	return out
}

// wallMinute is t's wall-clock time in minutes from day's midnight (past
// 1440 when t is on a later date).
func wallMinute(t time.Time, loc *time.Location, day availability.Date) int {
	l := t.In(loc)
	return availability.DaysBetween(day, availability.DateOf(t, loc))*1440 + l.Hour()*60 + l.Minute()
}

// DayHours are a specialist's hours on one date: Ranges in minutes from
// local midnight, and the override that set them, if any.
type DayHours struct {
	Ranges   []availability.Range
	Override bool
	Closed   bool
	// Closure: a closure (the specialist's or the clinic's) closes the
	// date; Note is its note.
	Closure bool
	Note    string
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
	// Closures are the clinic's closures over any of the days.
	Closures []practice.Closure
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
	if out.Closures, err = closuresOver(ctx, q, clinicID, from, to); err != nil {
		return GridData{}, err
	}
	for _, sp := range sps {
		if !sp.Active {
			continue
		}
		g := GridSpecialist{ID: sp.ID, Name: sp.Name, Days: make([]DayHours, days)}
		for i := range g.Days {
			g.Days[i] = hoursOn(sp.ID, from.AddDays(i), weekly, ovs)
			if c, ok := closedBy(out.Closures, sp.ID, from.AddDays(i)); ok {
				g.Days[i] = DayHours{Override: true, Closed: true, Closure: true, Note: c.Note}
			}
		}
		out.Specialists = append(out.Specialists, g)
	}
	start := availability.DayStart(loc, from)
	// A day's wall clock can reach a little past its midnight: take the
	// neighbours' edges too; the grid places by rows.
	end := availability.DayStart(loc, to.AddDays(1))
	if out.Bookings, err = b.calendar(ctx, clinicID, start.Add(-3*time.Hour), end.Add(3*time.Hour)); err != nil {
		return GridData{}, err
	}
	return out, nil
}

// closuresOver are the clinic's closures over any date from from to to.
func closuresOver(ctx context.Context, q *db.Queries, clinicID uuid.UUID, from, to availability.Date) ([]practice.Closure, error) {
	rows, err := q.ClosureListByClinicRange(ctx, db.ClosureListByClinicRangeParams{ClinicID: clinicID, FromDay: dayUTC(from), ToDay: dayUTC(to)})
	if err != nil {
		return nil, fmt.Errorf("list closures: %w", err)
	}
	out := make([]practice.Closure, len(rows))
	for i, r := range rows {
		out[i] = practice.Closure{ID: r.ID, SpecialistID: r.SpecialistID.UUID, First: r.FirstDay, Last: r.LastDay, Holiday: r.Holiday, Note: r.Note}
	}
	return out, nil
}

// closedBy is the first of cs that closes specialist sp on d: a
// specialist's own closure before the clinic's, whose note says more.
func closedBy(cs []practice.Closure, sp uuid.UUID, d availability.Date) (practice.Closure, bool) {
	var found practice.Closure
	ok := false
	for _, c := range cs {
		if c.Covers(sp, d) && (!ok || found.ClinicWide()) {
			found, ok = c, true
		}
	}
	return found, ok
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
