package availability

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The 2026 change days, as the tz database has them:
//
//	Europe/Berlin        2026-03-29 02:00 CET  -> 03:00 CEST   (01:00Z)
//	                     2026-10-25 03:00 CEST -> 02:00 CET    (01:00Z)
//	America/New_York     2026-03-08 02:00 EST  -> 03:00 EDT    (07:00Z)
//	                     2026-11-01 02:00 EDT  -> 01:00 EST    (06:00Z)
//	Australia/Lord_Howe  2026-04-05 02:00 +11  -> 01:30 +1030  (04-04 15:00Z)
//	                     2026-10-04 02:00 +1030 -> 02:30 +11   (10-03 15:30Z)
//	Asia/Kolkata         none, +0530 all year
//
// TestChangeDays checks this table against the zone data in use.

func TestChangeDays(t *testing.T) {
	tests := []struct {
		zone string
		want []string // UTC instants at which the offset changes in 2026
	}{
		{"Europe/Berlin", []string{"2026-03-29T01:00:00Z", "2026-10-25T01:00:00Z"}},
		{"America/New_York", []string{"2026-03-08T07:00:00Z", "2026-11-01T06:00:00Z"}},
		{"Australia/Lord_Howe", []string{"2026-04-04T15:00:00Z", "2026-10-03T15:30:00Z"}},
		{"Asia/Kolkata", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.zone+" changes its offset exactly at the listed instants", func(t *testing.T) {
			loc := mustZone(t, tt.zone)
			got := []string{}
			end := mustTime(t, "2027-01-01T00:00:00Z")
			for at := mustTime(t, "2026-01-01T00:00:00Z").In(loc); at.Before(end); {
				_, next := at.ZoneBounds()
				if next.IsZero() || !next.Before(end) {
					break
				}
				_, before := at.Zone()
				if _, after := next.In(loc).Zone(); after != before {
					got = append(got, next.UTC().Format(time.RFC3339))
				}
				at = next.In(loc)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// dstCase is one working day around a clock change and the slot starts
// it must give, in UTC.
type dstCase struct {
	name   string
	zone   string
	date   string
	ranges []Range
	length time.Duration // of the appointment; 30 minutes if zero
	want   []string
}

// dstCases are the clock changes TestComputeAcrossDaylightSaving computes
// a day across.
var dstCases = []dstCase{
	{
		name:   "Berlin spring-forward skips 02:00 and 02:30, 00:00-06:00 is 5 real hours",
		zone:   "Europe/Berlin",
		date:   "2026-03-29",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-03-28T23:00:00Z", "2026-03-28T23:30:00Z", // 00:00, 00:30 CET
			"2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z", // 01:00, 01:30 CET
			"2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z", // 03:00, 03:30 CEST
			"2026-03-29T02:00:00Z", "2026-03-29T02:30:00Z",
			"2026-03-29T03:00:00Z", "2026-03-29T03:30:00Z", // 05:30 CEST ends 06:00
		},
	},
	{
		name:   "Berlin fall-back offers 02:00 and 02:30 twice, 00:00-06:00 is 7 real hours",
		zone:   "Europe/Berlin",
		date:   "2026-10-25",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-10-24T22:00:00Z", "2026-10-24T22:30:00Z", // 00:00, 00:30 CEST
			"2026-10-24T23:00:00Z", "2026-10-24T23:30:00Z", // 01:00, 01:30 CEST
			"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", // 02:00, 02:30 CEST
			"2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z", // 02:00, 02:30 CET
			"2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z", // 03:00, 03:30 CET
			"2026-10-25T03:00:00Z", "2026-10-25T03:30:00Z",
			"2026-10-25T04:00:00Z", "2026-10-25T04:30:00Z", // 05:30 CET ends 06:00
		},
	},
	{
		name:   "Berlin range starting inside the gap starts when the gap ends",
		zone:   "Europe/Berlin",
		date:   "2026-03-29",
		ranges: []Range{hours("02:30", "04:00")},
		want:   []string{"2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}, // 03:00, 03:30 CEST
	},
	{
		name:   "Berlin range ending inside the gap ends when the gap starts",
		zone:   "Europe/Berlin",
		date:   "2026-03-29",
		ranges: []Range{hours("01:00", "02:30")},
		want:   []string{"2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z"}, // 01:00, 01:30 CET
	},
	{
		name:   "Berlin range covering only the repeated hour lasts two real hours",
		zone:   "Europe/Berlin",
		date:   "2026-10-25",
		ranges: []Range{hours("02:00", "03:00")},
		want:   []string{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z"},
	},
	{
		name:   "Berlin range ending where the repeated hour starts ends at its first occurrence",
		zone:   "Europe/Berlin",
		date:   "2026-10-25",
		ranges: []Range{hours("00:00", "02:00")},
		length: time.Hour,
		// 01:30 CEST would end at 02:30 CEST, past the range.
		want: []string{"2026-10-24T22:00:00Z", "2026-10-24T22:30:00Z", "2026-10-24T23:00:00Z"},
	},
	{
		name:   "New York spring-forward skips 02:00 and 02:30",
		zone:   "America/New_York",
		date:   "2026-03-08",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-03-08T05:00:00Z", "2026-03-08T05:30:00Z", // 00:00, 00:30 EST
			"2026-03-08T06:00:00Z", "2026-03-08T06:30:00Z", // 01:00, 01:30 EST
			"2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z", // 03:00, 03:30 EDT
			"2026-03-08T08:00:00Z", "2026-03-08T08:30:00Z",
			"2026-03-08T09:00:00Z", "2026-03-08T09:30:00Z", // 05:30 EDT ends 06:00
		},
	},
	{
		name:   "New York fall-back offers 01:00 and 01:30 twice",
		zone:   "America/New_York",
		date:   "2026-11-01",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-11-01T04:00:00Z", "2026-11-01T04:30:00Z", // 00:00, 00:30 EDT
			"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", // 01:00, 01:30 EDT
			"2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z", // 01:00, 01:30 EST
			"2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z", // 02:00, 02:30 EST
			"2026-11-01T08:00:00Z", "2026-11-01T08:30:00Z",
			"2026-11-01T09:00:00Z", "2026-11-01T09:30:00Z",
			"2026-11-01T10:00:00Z", "2026-11-01T10:30:00Z", // 05:30 EST ends 06:00
		},
	},
	{
		name:   "Lord Howe fall-back repeats half an hour, so 01:30 comes twice",
		zone:   "Australia/Lord_Howe",
		date:   "2026-04-05",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-04-04T13:00:00Z", "2026-04-04T13:30:00Z", // 00:00, 00:30 +11
			"2026-04-04T14:00:00Z", "2026-04-04T14:30:00Z", // 01:00, 01:30 +11
			"2026-04-04T15:00:00Z", "2026-04-04T15:30:00Z", // 01:30, 02:00 +1030
			"2026-04-04T16:00:00Z", "2026-04-04T16:30:00Z",
			"2026-04-04T17:00:00Z", "2026-04-04T17:30:00Z",
			"2026-04-04T18:00:00Z", "2026-04-04T18:30:00Z",
			"2026-04-04T19:00:00Z", // 05:30 +1030 ends 06:00
		},
	},
	{
		name:   "Lord Howe spring-forward skips half an hour, so 02:00 never comes",
		zone:   "Australia/Lord_Howe",
		date:   "2026-10-04",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-10-03T13:30:00Z", "2026-10-03T14:00:00Z", // 00:00, 00:30 +1030
			"2026-10-03T14:30:00Z", "2026-10-03T15:00:00Z", // 01:00, 01:30 +1030
			"2026-10-03T15:30:00Z", "2026-10-03T16:00:00Z", // 02:30, 03:00 +11
			"2026-10-03T16:30:00Z", "2026-10-03T17:00:00Z",
			"2026-10-03T17:30:00Z", "2026-10-03T18:00:00Z",
			"2026-10-03T18:30:00Z", // 05:30 +11 ends 06:00
		},
	},
	{
		name:   "Kolkata has no change on Europe's spring-forward day",
		zone:   "Asia/Kolkata",
		date:   "2026-03-29",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-03-28T18:30:00Z", "2026-03-28T19:00:00Z", "2026-03-28T19:30:00Z", "2026-03-28T20:00:00Z",
			"2026-03-28T20:30:00Z", "2026-03-28T21:00:00Z", "2026-03-28T21:30:00Z", "2026-03-28T22:00:00Z",
			"2026-03-28T22:30:00Z", "2026-03-28T23:00:00Z", "2026-03-28T23:30:00Z", "2026-03-29T00:00:00Z",
		},
	},
	{
		name:   "Kolkata has no change on Europe's fall-back day",
		zone:   "Asia/Kolkata",
		date:   "2026-10-25",
		ranges: []Range{hours("00:00", "06:00")},
		want: []string{
			"2026-10-24T18:30:00Z", "2026-10-24T19:00:00Z", "2026-10-24T19:30:00Z", "2026-10-24T20:00:00Z",
			"2026-10-24T20:30:00Z", "2026-10-24T21:00:00Z", "2026-10-24T21:30:00Z", "2026-10-24T22:00:00Z",
			"2026-10-24T22:30:00Z", "2026-10-24T23:00:00Z", "2026-10-24T23:30:00Z", "2026-10-25T00:00:00Z",
		},
	},
}

func TestComputeAcrossDaylightSaving(t *testing.T) {
	id := uuid.MustParse("5a5a5a5a-0000-4000-8000-000000000001")
	halfHour := AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute}

	for _, tt := range dstCases {
		t.Run(tt.name, func(t *testing.T) {
			date := mustDate(t, tt.date)
			typ := halfHour
			if tt.length != 0 {
				typ.Duration = tt.length
			}
			q := Query{
				Zone: mustZone(t, tt.zone),
				Type: typ,
				Specialists: []Specialist{{ID: id, Active: true,
					Overrides: []Override{{Date: date, Ranges: tt.ranges}}}},
				From: date,
				To:   date,
				Now:  mustTime(t, "2026-01-01T00:00:00Z"),
			}
			got := rfc3339(Compute(q))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", lines(got), lines(tt.want))
			}
			// Neighbouring days must not leak slots into the change day,
			// nor the change day into them.
			q.From, q.To = date.AddDays(-1), date.AddDays(1)
			if got := rfc3339(Compute(q)); !slices.Equal(got, tt.want) {
				t.Errorf("over three days got\n%s\nwant\n%s", lines(got), lines(tt.want))
			}
		})
	}
}

func TestSlotCrossingTheChangeLastsItsRealDuration(t *testing.T) {
	id := uuid.MustParse("5a5a5a5a-0000-4000-8000-000000000001")
	tests := []struct {
		name       string
		zone, date string
		start, end string // the crossing slot, in UTC
	}{
		{"Berlin 01:30 CET ends 03:30 CEST", "Europe/Berlin", "2026-03-29", "2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z"},
		{"Berlin 02:30 CEST ends 02:30 CET", "Europe/Berlin", "2026-10-25", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"},
		{"New York 01:30 EST ends 03:30 EDT", "America/New_York", "2026-03-08", "2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z"},
		{"New York 01:30 EDT ends 01:30 EST", "America/New_York", "2026-11-01", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"},
		{"Lord Howe 01:30 +11 ends 02:00 +1030", "Australia/Lord_Howe", "2026-04-05", "2026-04-04T14:30:00Z", "2026-04-04T15:30:00Z"},
		{"Lord Howe 01:30 +1030 ends 03:00 +11", "Australia/Lord_Howe", "2026-10-04", "2026-10-03T15:00:00Z", "2026-10-03T16:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			date := mustDate(t, tt.date)
			loc := mustZone(t, tt.zone)
			q := Query{
				Zone:        loc,
				Type:        AppointmentType{Duration: time.Hour, Step: 30 * time.Minute},
				Specialists: []Specialist{{ID: id, Active: true, Overrides: []Override{{Date: date, Ranges: []Range{hours("00:00", "06:00")}}}}},
				From:        date,
				To:          date,
				Now:         mustTime(t, "2026-01-01T00:00:00Z"),
			}
			slots := Compute(q)
			start := mustTime(t, tt.start)
			i := slices.IndexFunc(slots, func(s Slot) bool { return s.Start.Equal(start) })
			if i < 0 {
				t.Fatalf("no slot at %s among\n%s", tt.start, lines(rfc3339(slots)))
			}
			s := slots[i]
			if !s.End.Equal(mustTime(t, tt.end)) {
				t.Errorf("slot ends %s, want %s", s.End.Format(time.RFC3339), tt.end)
			}
			_, before := s.Start.In(loc).Zone()
			if _, after := s.End.In(loc).Zone(); after == before {
				t.Errorf("slot %s does not cross the change", tt.start)
			}
			for _, s := range slots {
				if d := s.End.Sub(s.Start); d != time.Hour {
					t.Errorf("slot %s lasts %v real time, want 1h", s.Start.Format(time.RFC3339), d)
				}
			}
		})
	}
}
