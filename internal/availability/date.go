package availability

import (
	"fmt"
	"time"
)

// Date is a civil (calendar) date in the clinic's zone.
//
// Working hours and overrides are stated per date rather than per instant
// because a clinic day is a wall-clock notion: its length in real time
// changes wherever daylight saving applies.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses "YYYY-MM-DD". It is strict (no signs, no short fields,
// no out-of-range days) because dates arrive from URLs and forms, and a
// lenient parser would quietly turn "2026-02-30" into a day in March.
func ParseDate(s string) (Date, error) {
	if date, ok := parseDate(s); ok {
		return date, nil
	}
	// Made only for a refusal: every timeslots read parses two dates.
	return Date{}, fmt.Errorf("availability: invalid date %q, want YYYY-MM-DD", s)
}

func parseDate(s string) (Date, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, false
	}
	y, okY := atoi(s[0:4])
	m, okM := atoi(s[5:7])
	d, okD := atoi(s[8:10])
	if !okY || !okM || !okD || y < 1 || m < 1 || m > 12 || d < 1 {
		return Date{}, false
	}
	date := Date{Year: y, Month: time.Month(m), Day: d}
	return date, date.AddDays(0) == date
}

// atoi accepts only ASCII digits, unlike strconv.Atoi, which takes signs.
func atoi(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func (d Date) String() string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
}

// AddDays normalises through time.Date, so month and year ends and leap
// days need no special cases.
func (d Date) AddDays(n int) Date {
	y, m, day := d.midnightUTC().AddDate(0, 0, n).Date()
	return Date{Year: y, Month: m, Day: day}
}

func (d Date) Weekday() time.Weekday {
	return d.midnightUTC().Weekday()
}

func (d Date) Before(o Date) bool {
	if d.Year != o.Year {
		return d.Year < o.Year
	}
	if d.Month != o.Month {
		return d.Month < o.Month
	}
	return d.Day < o.Day
}

// DateOf returns the local date of an instant; a nil loc means UTC, like
// everywhere else in this package.
func DateOf(t time.Time, loc *time.Location) Date {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	return Date{Year: y, Month: m, Day: d}
}

// DaysBetween returns b - a in days. It counts calendar days, never
// 24-hour periods, so a daylight-saving change cannot make it off by one.
func DaysBetween(a, b Date) int {
	return int(b.unixDays() - a.unixDays())
}

// midnightUTC reads the date in UTC, where every day is exactly 24 hours
// long: that makes it safe for calendar arithmetic.
func (d Date) midnightUTC() time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

// unixDays is the number of days since 1970-01-01.
func (d Date) unixDays() int64 {
	return d.midnightUTC().Unix() / secondsPerDay
}

const secondsPerDay = 24 * 60 * 60

// WeekStart is the Monday of d's week.
func (d Date) WeekStart() Date {
	return d.AddDays(-((int(d.Weekday()) + 6) % 7))
}
