package staff_test

// Tests of the day grid's rows: real-time steps labelled by the wall
// clock, so the days the clocks change have the rows they really have.

import (
	"slices"
	"testing"
	"time"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/staff"
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// labels are the wall-clock labels of a day's rows for hours rs.
func labels(t *testing.T, loc *time.Location, day string, step time.Duration, rs ...availability.Range) []string {
	t.Helper()
	d, err := availability.ParseDate(day)
	if err != nil {
		t.Fatal(err)
	}
	rows := staff.RowsOf(step, staff.OpenSpans(loc, d, rs), nil)
	out := make([]string, len(rows.Start))
	for i := range rows.Start {
		out[i] = rows.Label(i, loc)
		if i > 0 && rows.Start[i].Sub(rows.Start[i-1]) != step {
			t.Errorf("rows %d and %d are %s apart, want %s", i-1, i, rows.Start[i].Sub(rows.Start[i-1]), step)
		}
	}
	return out
}

func TestDayGridRowsOrdinaryDay(t *testing.T) {
	loc := berlin(t)
	got := labels(t, loc, "2027-03-23", 30*time.Minute, availability.Range{Start: 9 * 60, End: 12 * 60}, availability.Range{Start: 13 * 60, End: 14 * 60})
	want := []string{"09:00", "09:30", "10:00", "10:30", "11:00", "11:30", "12:00", "12:30", "13:00", "13:30"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
}

// On 2027-03-28 Berlin's clocks go from 02:00 to 03:00: 00:00-06:00 is
// five hours, with no row from 02:00 to 02:59.
func TestDayGridRowsSpringForward(t *testing.T) {
	loc := berlin(t)
	got := labels(t, loc, "2027-03-28", 15*time.Minute, availability.Range{Start: 0, End: 6 * 60})
	if len(got) != 20 {
		t.Fatalf("%d rows, want 20 (five hours of 15 minutes): %v", len(got), got)
	}
	for _, l := range got {
		if l >= "02:00" && l < "03:00" {
			t.Errorf("a row at %s, which the clock skips", l)
		}
	}
	if got[7] != "01:45" || got[8] != "03:00" || got[19] != "05:45" {
		t.Errorf("rows around the gap %v", got)
	}
}

// On 2027-10-31 the clocks go back from 03:00 to 02:00: 00:00-06:00 is
// seven hours, with the rows from 02:00 to 02:45 twice.
func TestDayGridRowsFallBack(t *testing.T) {
	loc := berlin(t)
	got := labels(t, loc, "2027-10-31", 15*time.Minute, availability.Range{Start: 0, End: 6 * 60})
	if len(got) != 28 {
		t.Fatalf("%d rows, want 28 (seven hours of 15 minutes): %v", len(got), got)
	}
	count := map[string]int{}
	for _, l := range got {
		count[l]++
	}
	for _, l := range []string{"02:00", "02:15", "02:30", "02:45"} {
		if count[l] != 2 {
			t.Errorf("%s appears %d times, want 2", l, count[l])
		}
	}
	if count["01:45"] != 1 || count["03:00"] != 1 {
		t.Errorf("rows %v", got)
	}
}

// A booking is placed by the row it starts in and spans its length; one
// before the opening stretches the grid back by whole steps.
func TestDayGridPlace(t *testing.T) {
	loc := berlin(t)
	d := availability.Date{Year: 2027, Month: time.October, Day: 31}
	open := staff.OpenSpans(loc, d, []availability.Range{{Start: 0, End: 6 * 60}})
	rows := staff.RowsOf(15*time.Minute, open, nil)
	// 02:30 in the second (winter) occurrence: 01:30 UTC.
	second := time.Date(2027, time.October, 31, 1, 30, 0, 0, time.UTC)
	row, n, ok := rows.Place(staff.Span{Start: second, End: second.Add(45 * time.Minute)})
	if !ok || rows.Label(row, loc) != "02:30" || row != 14 || n != 3 {
		t.Errorf("placed at row %d (%s), %d rows, ok %v; want row 14 (the second 02:30), 3 rows", row, rows.Label(row, loc), n, ok)
	}
	if _, _, ok := rows.Place(staff.Span{Start: open[0].End, End: open[0].End.Add(time.Hour)}); ok {
		t.Error("a span after the grid was placed")
	}

	day := availability.Date{Year: 2027, Month: time.March, Day: 23}
	open = staff.OpenSpans(loc, day, []availability.Range{{Start: 9 * 60, End: 10 * 60}})
	early := time.Date(2027, time.March, 23, 8, 10, 0, 0, loc)
	rows = staff.RowsOf(30*time.Minute, open, []staff.Span{{Start: early, End: early.Add(20 * time.Minute)}})
	if len(rows.Start) != 4 || rows.Label(0, loc) != "08:00" {
		t.Errorf("rows from %s, %d of them; want 4 from 08:00", rows.Label(0, loc), len(rows.Start))
	}
	if row, n, _ := rows.Place(staff.Span{Start: early, End: early.Add(20 * time.Minute)}); row != 0 || n != 1 {
		t.Errorf("the early booking at row %d over %d rows, want 0 and 1", row, n)
	}
}

func TestDayGridWallInstant(t *testing.T) {
	loc := berlin(t)
	if _, ok := availability.WallTime(loc, availability.Date{Year: 2027, Month: time.March, Day: 28}, 2*time.Hour+30*time.Minute); ok {
		t.Error("02:30 on 2027-03-28 has an instant")
	}
	got, ok := availability.WallTime(loc, availability.Date{Year: 2027, Month: time.October, Day: 31}, 2*time.Hour+30*time.Minute)
	if want := time.Date(2027, time.October, 31, 0, 30, 0, 0, time.UTC); !ok || !got.Equal(want) {
		t.Errorf("02:30 on 2027-10-31 is %s, want its first occurrence %s", got, want)
	}
}

// A week's rows are wall-clock times shared by its dates: on the day the
// clocks go forward the skipped times have no instant, on the day they go
// back a repeated time stands at its first occurrence, and a booking
// outside the hours stretches the rows by whole steps.
func TestWeekRows(t *testing.T) {
	loc := berlin(t)
	night := staff.DayHours{Ranges: []availability.Range{{Start: 60, End: 4 * 60}}}
	hours := make([]staff.DayHours, 7)
	for i := range hours {
		hours[i] = night
	}
	spring := availability.Date{Year: 2027, Month: time.March, Day: 22} // Monday; Sunday the 28th changes
	late := time.Date(2027, time.March, 23, 4, 10, 0, 0, loc)
	busy := [][]staff.Span{nil, {{Start: late, End: late.Add(20 * time.Minute)}}}
	w := staff.WeekRowsOf(loc, spring, 30*time.Minute, hours, busy)
	if len(w.Minutes) != 7 || w.Label(0) != "01:00" || w.Label(6) != "04:00" {
		t.Fatalf("rows %v, want 7 from 01:00 to 04:00", w.Minutes)
	}
	for i, at := range w.Days[6].Start {
		if skipped := w.Label(i) == "02:00" || w.Label(i) == "02:30"; skipped != at.IsZero() {
			t.Errorf("Sunday %s: instant %v", w.Label(i), at)
		}
	}
	if row, n, ok := w.Days[1].Place(staff.Span{Start: late, End: late.Add(20 * time.Minute)}); !ok || row != 6 || n != 1 {
		t.Errorf("Tuesday's late booking at row %d over %d (%v), want row 6 over 1", row, n, ok)
	}

	autumn := availability.Date{Year: 2027, Month: time.October, Day: 25} // Sunday the 31st changes
	w = staff.WeekRowsOf(loc, autumn, 30*time.Minute, hours, nil)
	if got, want := w.Days[6].Start[3], time.Date(2027, time.October, 31, 0, 30, 0, 0, time.UTC); w.Label(3) != "02:30" || !got.Equal(want) {
		t.Errorf("Sunday %s is %s, want its first occurrence %s", w.Label(3), got, want)
	}
	if w := staff.WeekRowsOf(loc, autumn, 30*time.Minute, make([]staff.DayHours, 7), nil); len(w.Minutes) != 0 {
		t.Errorf("a week without hours has rows %v", w.Minutes)
	}
}
