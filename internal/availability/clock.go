package availability

import "time"

// WallClock maps the wall clock of one local date onto real time. It is
// the one place in the code that turns a local date and a wall-clock time
// into instants: the slot engine, the staff's day grid and every typed
// time go through it.
//
// Working hours are wall-clock times, but slots are instants. On most days
// the zone has one offset and each wall time is exactly one instant. On a
// daylight-saving change a wall time can have no instant (the spring-forward
// gap) or two (the repeated fall-back hour); time.Date would silently
// normalise the first and pick one of the second. So instead of asking
// time.Date, WallClock reads the stretches of constant offset around the
// date with ZoneBounds and solves "instant + offset = wall time" in each.
//
// An ordinary day has a single span, which makes every conversion one
// subtraction and one bounds check. The zero WallClock is not usable: make
// one with NewWallClock or Reset.
type WallClock struct {
	// midnight is 00:00 of the date read as if the zone were UTC, in Unix
	// nanoseconds; an instant t in a span shows wall time t+offset-midnight.
	midnight int64
	// spans covers real time from a day before the date to a day after it,
	// which holds every instant that can show the date on its wall clock.
	spans []span
}

// span is a stretch of real time over which the zone's offset is constant.
type span struct {
	start, end int64 // Unix nanoseconds, half-open
	offset     int64 // nanoseconds east of UTC
}

const nsPerDay = int64(24 * time.Hour)

// NewWallClock is the wall clock of date d in loc.
func NewWallClock(loc *time.Location, d Date) *WallClock {
	c := new(WallClock)
	c.Reset(loc, d)
	return c
}

// Reset points the clock at date d in loc, reusing the span storage so
// that walking a month of dates does not allocate per day.
func (c *WallClock) Reset(loc *time.Location, d Date) {
	c.midnight = d.unixDays() * nsPerDay
	c.spans = c.spans[:0]

	lo, hi := c.midnight-nsPerDay, c.midnight+2*nsPerDay
	for from := lo; from < hi; {
		t := time.Unix(0, from).In(loc)
		_, offset := t.Zone()
		_, next := t.ZoneBounds()
		to := hi
		if !next.IsZero() && next.UnixNano() > from && next.UnixNano() < hi {
			to = next.UnixNano()
		}
		off := int64(offset) * int64(time.Second)
		// A change of abbreviation alone is not a change of wall clock.
		if n := len(c.spans); n > 0 && c.spans[n-1].offset == off {
			c.spans[n-1].end = to
		} else {
			c.spans = append(c.spans, span{start: from, end: to, offset: off})
		}
		from = to
	}
}

// First is the earliest instant at which the wall clock has reached wall
// (the time after midnight) on this date. For a wall time inside a
// spring-forward gap that is the end of the gap, where the clock jumps
// past it; for a repeated time it is the first occurrence. It is where a
// range starting at wall really starts.
func (c *WallClock) First(wall time.Duration) time.Time {
	return time.Unix(0, c.first(int64(wall)))
}

// Last is where a range ending at wall really ends: the instant at which
// the wall clock reaches wall on this date for the last time coming from
// earlier times. For a time inside the repeated hour that is its second
// occurrence, for the start of the repeated hour its first (the clock
// never falls below it again), and for a time the clock skips, the start
// of the gap. Together with First it gives a range its true real length
// across a change.
func (c *WallClock) Last(wall time.Duration) time.Time {
	return time.Unix(0, c.last(int64(wall)))
}

// Instants are, in order, the instants whose wall clock reads wall on this
// date: none in a gap, two in a repeated hour, one otherwise.
func (c *WallClock) Instants(wall time.Duration) []time.Time {
	var buf [4]int64
	ns := c.instants(buf[:0], int64(wall))
	out := make([]time.Time, len(ns))
	for i, t := range ns {
		out[i] = time.Unix(0, t)
	}
	return out
}

// At is the instant a wall time names on this date, as the slot engine
// reads it: false for a time the clock skips (there is no slot at it),
// and the first occurrence of a repeated one.
func (c *WallClock) At(wall time.Duration) (time.Time, bool) {
	var buf [4]int64
	if ns := c.instants(buf[:0], int64(wall)); len(ns) > 0 {
		return time.Unix(0, ns[0]), true
	}
	return time.Time{}, false
}

// WallTime is the instant wall-clock time wall of date d in loc names (see
// WallClock.At): false for a time the clock skips that day.
func WallTime(loc *time.Location, d Date, wall time.Duration) (time.Time, bool) {
	return NewWallClock(loc, d).At(wall)
}

// DayStart is the first instant of date d in loc: its midnight, or the
// end of a gap the clocks jump across at midnight.
func DayStart(loc *time.Location, d Date) time.Time {
	return NewWallClock(loc, d).First(0)
}

func (c *WallClock) first(wall int64) int64 {
	for _, s := range c.spans {
		t := max(s.start, c.midnight+wall-s.offset)
		if t < s.end {
			return t
		}
	}
	return c.spans[len(c.spans)-1].end
}

func (c *WallClock) last(wall int64) int64 {
	for i := len(c.spans) - 1; i >= 0; i-- {
		s := c.spans[i]
		// Within s the clock shows less than wall from s.start until t.
		t := min(s.end, c.midnight+wall-s.offset)
		if t > s.start {
			return t
		}
	}
	return c.spans[0].start
}

// instants appends, in order, every instant whose wall clock reads wall on
// this date (Unix nanoseconds), for the engine's allocation-free loop.
func (c *WallClock) instants(dst []int64, wall int64) []int64 {
	for _, s := range c.spans {
		if t := c.midnight + wall - s.offset; t >= s.start && t < s.end {
			dst = append(dst, t)
		}
	}
	return dst
}
