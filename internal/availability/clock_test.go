package availability

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestWallClockAgainstMinuteScan compares WallClock with the dumbest possible
// method: look at the wall clock of every real minute around the date.
// scanDay is a day of a zone the wall clock is checked on.
type scanDay struct {
	zone string
	date Date
}

// scanDays are every 2026 change day of zones with unusual rules, with
// their neighbours, and a few historic oddities.
func scanDays(t *testing.T) []scanDay {
	t.Helper()
	var days []scanDay
	add := func(zone string, dates ...string) {
		for _, s := range dates {
			days = append(days, scanDay{zone, mustDate(t, s)})
		}
	}
	// Every 2026 change day of these zones, with its neighbours.
	for _, zone := range []string{
		"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
		"Pacific/Chatham",  // 45-minute offsets
		"America/Havana",   // changes at midnight
		"Antarctica/Troll", // a two-hour change
		"Asia/Kathmandu",   // +0545, no change
		"UTC",
	} {
		loc := mustZone(t, zone)
		end := mustTime(t, "2027-01-01T00:00:00Z")
		for at := mustTime(t, "2026-01-01T00:00:00Z").In(loc); ; {
			_, next := at.ZoneBounds()
			if next.IsZero() || !next.Before(end) {
				break
			}
			d := DateOf(next, loc)
			add(zone, d.AddDays(-1).String(), d.String(), d.AddDays(1).String())
			at = next.In(loc)
		}
		add(zone, "2026-06-15")
	}
	// Historic oddities.
	add("America/Sao_Paulo", "2018-11-04", "2019-02-16", "2019-02-17") // midnight gap; 23:00 repeated
	add("Pacific/Apia", "2011-12-29", "2011-12-30", "2011-12-31")      // 30 December never happened

	return days
}

func TestWallClockAgainstMinuteScan(t *testing.T) {
	days := scanDays(t)
	for _, day := range days {
		t.Run(day.zone+" "+day.date.String()+" maps wall times like a minute-by-minute scan", func(t *testing.T) {
			loc := mustZone(t, day.zone)
			var c WallClock
			c.Reset(loc, day.date)

			// wall[i] is what the clock shows at minute i of the window,
			// as minutes relative to the date's midnight.
			lo := time.Unix(0, c.midnight-nsPerDay)
			n := 3 * 24 * 60
			wall := make([]int, n)
			for i := range wall {
				at := lo.Add(time.Duration(i) * time.Minute).In(loc)
				y, m, d := at.Date()
				wall[i] = DaysBetween(day.date, Date{y, m, d})*1440 + at.Hour()*60 + at.Minute()
			}
			instant := func(i int) int64 { return lo.Add(time.Duration(i) * time.Minute).UnixNano() }

			for w := 0; w <= 1440; w += 15 {
				wallNs := int64(w) * int64(time.Minute)

				var want []int64
				first, last := int64(-1), int64(-1)
				for i, v := range wall {
					if v == w {
						want = append(want, instant(i))
					}
					if v >= w && first < 0 {
						first = instant(i)
					}
					if v < w {
						last = instant(i) + int64(time.Minute)
					}
				}
				if w < 1440 {
					if got := c.instants(nil, wallNs); !slices.Equal(got, want) {
						t.Errorf("instants(%s) = %v, want %v", hhmm(w), fmtNs(got), fmtNs(want))
					}
				}
				if w < 1440 {
					var got []int64
					for _, at := range c.Instants(time.Duration(wallNs)) {
						got = append(got, at.UnixNano())
					}
					if !slices.Equal(got, want) {
						t.Errorf("Instants(%s) = %v, want %v", hhmm(w), fmtNs(got), fmtNs(want))
					}
					at, ok := c.At(time.Duration(wallNs))
					if ok != (len(want) > 0) || ok && at.UnixNano() != want[0] {
						t.Errorf("At(%s) = %v %v, want the first of %v", hhmm(w), at, ok, fmtNs(want))
					}
				}
				if got := c.First(time.Duration(wallNs)).UnixNano(); got != first {
					t.Errorf("First(%s) = %v, want %v", hhmm(w), fmtNs([]int64{got}), fmtNs([]int64{first}))
				}
				if got := c.Last(time.Duration(wallNs)).UnixNano(); got != last {
					t.Errorf("Last(%s) = %v, want %v", hhmm(w), fmtNs([]int64{got}), fmtNs([]int64{last}))
				}
				if got := c.first(wallNs); got != first {
					t.Errorf("first(%s) = %v, want %v", hhmm(w), fmtNs([]int64{got}), fmtNs([]int64{first}))
				}
				if got := c.last(wallNs); got != last {
					t.Errorf("last(%s) = %v, want %v", hhmm(w), fmtNs([]int64{got}), fmtNs([]int64{last}))
				}
			}
		})
	}
}

func TestWallClockFastPath(t *testing.T) {
	tests := []struct {
		zone, date string
		spans      int
	}{
		{"Europe/Berlin", "2026-06-15", 1},
		{"Asia/Kolkata", "2026-03-29", 1},
		{"UTC", "2026-03-29", 1},
		{"Europe/Berlin", "2026-03-29", 2},
		{"Europe/Berlin", "2026-10-25", 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s has %d offset spans", tt.zone, tt.date, tt.spans), func(t *testing.T) {
			var c WallClock
			c.Reset(mustZone(t, tt.zone), mustDate(t, tt.date))
			if len(c.spans) != tt.spans {
				t.Errorf("got %d spans %v, want %d", len(c.spans), c.spans, tt.spans)
			}
		})
	}
}

func hhmm(w int) string {
	return fmt.Sprintf("%02d:%02d", w/60, w%60)
}

func fmtNs(ts []int64) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = time.Unix(0, t).UTC().Format(time.RFC3339)
	}
	return out
}

// A typed wall time names no instant in a spring-forward gap and the first
// of the two in an autumn repeat, as the slot engine reads working hours;
// a day whose midnight the clocks skip starts at the gap's end.
func TestWallTime(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	if at, ok := WallTime(berlin, mustDate(t, "2026-03-29"), 2*time.Hour+30*time.Minute); ok {
		t.Errorf("02:30 on 2026-03-29 in Berlin is %s; the clocks skip it", at)
	}
	at, ok := WallTime(berlin, mustDate(t, "2026-10-25"), 2*time.Hour+30*time.Minute)
	if want := mustTime(t, "2026-10-25T00:30:00Z"); !ok || !at.Equal(want) {
		t.Errorf("02:30 on 2026-10-25 in Berlin is %s %v, want its first occurrence %s", at, ok, want)
	}
	at, ok = WallTime(berlin, mustDate(t, "2026-06-15"), 9*time.Hour)
	if want := mustTime(t, "2026-06-15T07:00:00Z"); !ok || !at.Equal(want) {
		t.Errorf("09:00 on 2026-06-15 in Berlin is %s %v, want %s", at, ok, want)
	}
	havana := mustZone(t, "America/Havana")
	if got, want := DayStart(havana, mustDate(t, "2026-03-08")), mustTime(t, "2026-03-08T05:00:00Z"); !got.Equal(want) {
		t.Errorf("2026-03-08 in Havana starts at %s, want %s (01:00 CDT)", got, want)
	}
}
