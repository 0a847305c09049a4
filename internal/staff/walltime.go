package staff

import (
	"strings"
	"time"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
)

// WallStart is the instant that a typed local date and time (minutes from
// midnight) name in loc, read through availability's one wall clock just
// as the slot engine reads working hours: a time the clocks skip that day
// (the spring-forward gap) is refused, since no slot starts there, and a
// time they repeat (the autumn hour) is its first occurrence.
//
// Errors: Invalid (field) for a time the clocks skip.
func WallStart(field string, loc *time.Location, d availability.Date, minutes int) (time.Time, error) {
	t, ok := availability.WallTime(loc, d, time.Duration(minutes)*time.Minute)
	if !ok {
		return time.Time{}, apperr.Invalidf(field, "%s on %s does not exist in %s: the clocks skip it that day.", FormatMin(minutes), d, loc)
	}
	return t, nil
}

// ParseLocalTime reads a local date and time typed as 2026-03-15T09:30
// (what an HTML datetime-local field sends) and resolves it in loc with
// WallStart.
//
// Errors: Invalid (field) when s is no such date and time or names a time
// the clocks skip.
func ParseLocalTime(field, s string, loc *time.Location) (time.Time, error) {
	date, clock, found := strings.Cut(strings.TrimSpace(s), "T")
	d, err := availability.ParseDate(date)
	if !found || err != nil || len(clock) != 5 {
		return time.Time{}, apperr.Invalidf(field, "%q is not a date and time like 2026-03-15T09:30.", s)
	}
	minutes, err := ParseClock(field, clock)
	if err != nil || minutes >= 1440 {
		return time.Time{}, apperr.Invalidf(field, "%q is not a date and time like 2026-03-15T09:30.", s)
	}
	return WallStart(field, loc, d, minutes)
}
