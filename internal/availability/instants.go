package availability

// Instants as int64 nanoseconds, clamped to the range they can express,
// and the dates a computation can reach.

import (
	"math"
	"time"
)

// Instants outside int64 nanoseconds (years 1678 to 2262) are clamped:
// the zero Time as Now must mean "long ago", not wrap around.
var (
	minInstant = time.Unix(0, math.MinInt64)
	maxInstant = time.Unix(0, math.MaxInt64)
)

// Dates are limited to well inside that span, since a day's clock looks a
// day beyond it on both sides.
var (
	minDate = Date{Year: 1700, Month: time.January, Day: 1}
	maxDate = Date{Year: 2200, Month: time.December, Day: 31}
)

func unixNano(t time.Time) int64 {
	switch {
	case t.Before(minInstant):
		return math.MinInt64
	case t.After(maxInstant):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// addSat adds without wrapping around, so clamped instants stay clamped.
func addSat(t int64, d time.Duration) int64 {
	s := t + int64(d)
	switch {
	case d > 0 && s < t:
		return math.MaxInt64
	case d < 0 && s > t:
		return math.MinInt64
	}
	return s
}

// clipDates narrows [from, to] to the dates that can hold a slot between
// earliest and latest, so a far-reaching To with a short booking window
// costs nothing. A day of margin covers clocks turned back across midnight.
func clipDates(from, to Date, earliest, latest int64, loc *time.Location) (Date, Date) {
	if d := DateOf(time.Unix(0, earliest), loc).AddDays(-1); from.Before(d) {
		from = d
	}
	if d := DateOf(time.Unix(0, latest), loc).AddDays(1); d.Before(to) {
		to = d
	}
	if from.Before(minDate) {
		from = minDate
	}
	if maxDate.Before(to) {
		to = maxDate
	}
	return from, to
}
