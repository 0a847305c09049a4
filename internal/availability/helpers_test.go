package availability

import (
	"fmt"
	"strings"
	"testing"
	"time"

	// The DST expectations are hardcoded, so the tests must not depend on
	// whether the machine has a zoneinfo database installed.
	_ "time/tzdata"

	"github.com/google/uuid"
)

func mustZone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("load zone %s: %v", name, err)
	}
	return loc
}

func mustDate(tb testing.TB, s string) Date {
	tb.Helper()
	d, err := ParseDate(s)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func mustTime(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// clock parses "HH:MM" into minutes after midnight.
func clock(s string) int {
	var h, m int
	if _, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil {
		panic(err)
	}
	return h*60 + m
}

// hours builds a Range from "HH:MM" bounds.
func hours(from, to string) Range {
	return Range{Start: clock(from), End: clock(to)}
}

// on gives the same ranges on each of the weekdays.
func on(days []time.Weekday, rs ...Range) []WeeklyRange {
	var out []WeeklyRange
	for _, d := range days {
		for _, r := range rs {
			out = append(out, WeeklyRange{Weekday: d, Range: r})
		}
	}
	return out
}

var (
	weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	everyDay = []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}
)

// rfc3339 lists the slot starts in UTC, the form the DST tests spell out.
func rfc3339(slots []Slot) []string {
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = s.Start.UTC().Format(time.RFC3339)
	}
	return out
}

// describe renders slots as "Mon 09:00 A,B" in loc, naming specialists
// through names, so expectations read like a timetable.
func describe(slots []Slot, loc *time.Location, names map[uuid.UUID]string) []string {
	out := make([]string, len(slots))
	for i, s := range slots {
		who := make([]string, len(s.SpecialistIDs))
		for j, id := range s.SpecialistIDs {
			who[j] = names[id]
			if who[j] == "" {
				who[j] = id.String()
			}
		}
		out[i] = s.Start.In(loc).Format("Mon 15:04") + " " + strings.Join(who, ",")
	}
	return out
}

func equalSlots(a, b []Slot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Start.Equal(b[i].Start) || !a[i].End.Equal(b[i].End) || len(a[i].SpecialistIDs) != len(b[i].SpecialistIDs) {
			return false
		}
		for j := range a[i].SpecialistIDs {
			if a[i].SpecialistIDs[j] != b[i].SpecialistIDs[j] {
				return false
			}
		}
	}
	return true
}

func lines(ss []string) string {
	if len(ss) == 0 {
		return "  (none)"
	}
	return "  " + strings.Join(ss, "\n  ")
}
