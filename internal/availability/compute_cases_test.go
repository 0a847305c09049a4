package availability

// The hand-made calendars TestCompute computes, in the week of Monday
// 2026-03-02, Berlin winter time, and the slots each must give.

import (
	"time"

	"github.com/google/uuid"
)

// computeCase is one calendar and its slots, described as "Mon 09:00 A".
type computeCase struct {
	name string
	q    Query // Zone, Now, From and To default to Berlin, Sunday noon, Monday, Monday
	want []string
}

var (
	caseMonday   = Date{Year: 2026, Month: time.March, Day: 2}
	caseMon      = []time.Weekday{time.Monday}
	caseHour     = AppointmentType{Duration: time.Hour, Step: time.Hour}
	caseHalfHour = AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute}
)

// caseAt is a Berlin wall-clock time ("15:04") on a date ("2006-01-02").
func caseAt(date, hm string) time.Time {
	d, err := ParseDate(date)
	if err != nil {
		panic(err)
	}
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	m := clock(hm)
	return time.Date(d.Year, d.Month, d.Day, m/60, m%60, 0, 0, loc)
}

// caseBooking is a booking of the specialist on caseMonday, from and to
// wall-clock times.
func caseBooking(id uuid.UUID, from, to string) Busy {
	return Busy{SpecialistID: id, Start: caseAt("2026-03-02", from), End: caseAt("2026-03-02", to)}
}

var computeCases = []computeCase{
	{
		name: "a lunch break splits the day into two ranges",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "12:00"), hours("13:00", "15:00"))}},
		},
		want: []string{"Mon 09:00 A", "Mon 10:00 A", "Mon 11:00 A", "Mon 13:00 A", "Mon 14:00 A"},
	},
	{
		name: "each of several ranges a day steps from its own start",
		q: Query{
			Type:        caseHalfHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("08:00", "09:00"), hours("11:15", "12:30"), hours("16:00", "17:00"))}},
		},
		want: []string{"Mon 08:00 A", "Mon 08:30 A", "Mon 11:15 A", "Mon 11:45 A", "Mon 16:00 A", "Mon 16:30 A"},
	},
	{
		name: "a slot must fit inside its range",
		q: Query{
			Type:        AppointmentType{Duration: 45 * time.Minute, Step: 30 * time.Minute},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))}},
		},
		want: []string{"Mon 09:00 A"},
	},
	{
		name: "overlapping ranges of one specialist do not duplicate slots",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"), hours("10:00", "12:00"))}},
		},
		want: []string{"Mon 09:00 A", "Mon 10:00 A", "Mon 11:00 A"},
	},
	{
		name: "a range may end at midnight",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, Range{Start: clock("22:00"), End: 1440})}},
		},
		want: []string{"Mon 22:00 A", "Mon 23:00 A"},
	},
	{
		name: "malformed ranges are ignored",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon,
				hours("09:00", "10:00"), Range{Start: 600, End: 600}, Range{Start: 700, End: 650}, Range{Start: -60, End: 60}, Range{Start: 1380, End: 1500})}},
		},
		want: []string{"Mon 09:00 A"},
	},
	{
		name: "a closed override removes that date's weekly hours",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{{ID: idA, Active: true,
				Weekly:    on([]time.Weekday{time.Monday, time.Tuesday}, hours("09:00", "11:00")),
				Overrides: []Override{{Date: caseMonday, Closed: true}}}},
			To: caseMonday.AddDays(1),
		},
		want: []string{"Tue 09:00 A", "Tue 10:00 A"},
	},
	{
		name: "a replacement override replaces that date's weekly hours only",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{{ID: idA, Active: true,
				Weekly:    on([]time.Weekday{time.Monday, time.Tuesday}, hours("09:00", "11:00")),
				Overrides: []Override{{Date: caseMonday, Ranges: []Range{hours("14:00", "15:00"), hours("17:00", "18:00")}}}}},
			To: caseMonday.AddDays(1),
		},
		want: []string{"Mon 14:00 A", "Mon 17:00 A", "Tue 09:00 A", "Tue 10:00 A"},
	},
	{
		name: "an override can open a day without weekly hours",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{{ID: idA, Active: true,
				Weekly:    on(caseMon, hours("09:00", "10:00")),
				Overrides: []Override{{Date: caseMonday.AddDays(5), Ranges: []Range{hours("10:00", "11:00")}}}}},
			To: caseMonday.AddDays(6),
		},
		want: []string{"Mon 09:00 A", "Sat 10:00 A"},
	},
	{
		name: "the buffer before a slot must clear the previous booking",
		q: Query{
			Type:        AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute, BufferBefore: 15 * time.Minute},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))}},
			Bookings:    []Busy{caseBooking(idA, "09:30", "10:00")},
		},
		// 10:00 would need 09:45 free; 09:00's buffer lies outside working hours.
		want: []string{"Mon 09:00 A", "Mon 10:30 A"},
	},
	{
		name: "the buffer after a slot must clear the next booking",
		q: Query{
			Type:        AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute, BufferAfter: 15 * time.Minute},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))}},
			Bookings:    []Busy{caseBooking(idA, "10:00", "10:30")},
		},
		// 09:30 would run into the booking at 10:00 with its buffer; 10:30's buffer may run past closing.
		want: []string{"Mon 09:00 A", "Mon 10:30 A"},
	},
	{
		name: "a booking of another type keeps its own buffers",
		q: Query{
			Type:        caseHalfHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:30"))}},
			Bookings: []Busy{{SpecialistID: idA, Start: caseAt("2026-03-02", "10:00"), End: caseAt("2026-03-02", "10:30"),
				BufferBefore: 30 * time.Minute, BufferAfter: 15 * time.Minute}},
		},
		// Blocked from 09:30 to 10:45.
		want: []string{"Mon 09:00 A", "Mon 11:00 A"},
	},
	{
		name: "buffers of both sides add up",
		q: Query{
			Type:        AppointmentType{Duration: 30 * time.Minute, Step: 15 * time.Minute, BufferAfter: 10 * time.Minute},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))}},
			Bookings:    []Busy{{SpecialistID: idA, Start: caseAt("2026-03-02", "10:00"), End: caseAt("2026-03-02", "10:30"), BufferBefore: 5 * time.Minute}},
		},
		// 09:15 ends 09:45, free until 09:55: fine. 09:30 ends 10:00 + 10 > 09:55.
		want: []string{"Mon 09:00 A", "Mon 09:15 A"},
	},
	{
		name: "buffered intervals that only touch do not conflict",
		q: Query{
			Type:        AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute, BufferBefore: 10 * time.Minute, BufferAfter: 10 * time.Minute},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))}},
			Bookings: []Busy{
				{SpecialistID: idA, Start: caseAt("2026-03-02", "08:30"), End: caseAt("2026-03-02", "08:40"), BufferAfter: 10 * time.Minute},
				{SpecialistID: idA, Start: caseAt("2026-03-02", "11:00"), End: caseAt("2026-03-02", "11:30"), BufferBefore: 20 * time.Minute},
			},
		},
		want: []string{"Mon 09:00 A", "Mon 09:30 A", "Mon 10:00 A"},
	},
	{
		name: "bookings of other specialists do not block",
		q: Query{
			Type:         caseHour,
			Specialists:  []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))}},
			Bookings:     []Busy{caseBooking(idB, "09:00", "11:00")},
			SpecialistID: idA,
		},
		want: []string{"Mon 09:00 A", "Mon 10:00 A"},
	},
	{
		name: "a hold blocks its specialist like a booking",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "12:00"))}},
			Holds:       []Busy{caseBooking(idA, "10:00", "11:00")},
		},
		want: []string{"Mon 09:00 A", "Mon 11:00 A"},
	},
	{
		name: "minimum notice hides slots starting too soon, the boundary included",
		q: Query{
			Type:        AppointmentType{Duration: time.Hour, Step: 30 * time.Minute, MinNotice: time.Hour},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "12:00"))}},
			Now:         caseAt("2026-03-02", "09:00"),
		},
		want: []string{"Mon 10:00 A", "Mon 10:30 A", "Mon 11:00 A"},
	},
	{
		name: "the booking window hides slots starting too late, the boundary included",
		q: Query{
			Type:        AppointmentType{Duration: time.Hour, Step: time.Hour, MaxAdvance: 24 * time.Hour},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(weekdays, hours("09:00", "10:00"))}},
			Now:         caseAt("2026-03-02", "09:00"),
			To:          caseMonday.AddDays(4),
		},
		want: []string{"Mon 09:00 A", "Tue 09:00 A"},
	},
	{
		name: "a zero booking window means no limit",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(weekdays, hours("09:00", "10:00"))}},
			Now:         caseAt("2026-03-02", "09:00"),
			To:          caseMonday.AddDays(4),
		},
		want: []string{"Mon 09:00 A", "Tue 09:00 A", "Wed 09:00 A", "Thu 09:00 A", "Fri 09:00 A"},
	},
	{
		name: "a step smaller than the duration gives overlapping slots",
		q: Query{
			Type:        AppointmentType{Duration: time.Hour, Step: 15 * time.Minute},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))}},
		},
		want: []string{"Mon 09:00 A", "Mon 09:15 A", "Mon 09:30 A", "Mon 09:45 A", "Mon 10:00 A"},
	},
	{
		name: "a booking removes every overlapping slot of a small step",
		q: Query{
			Type:        AppointmentType{Duration: time.Hour, Step: 15 * time.Minute},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))}},
			Bookings:    []Busy{caseBooking(idA, "10:30", "11:00")},
		},
		want: []string{"Mon 09:00 A", "Mon 09:15 A", "Mon 09:30 A"},
	},
	{
		name: "the specialist filter shows only that specialist",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{
				{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))},
				{ID: idB, Active: true, Priority: 5, Weekly: on(caseMon, hours("10:00", "12:00"))},
			},
			SpecialistID: idA,
		},
		want: []string{"Mon 09:00 A", "Mon 10:00 A"},
	},
	{
		name: "an unknown specialist gets no slots",
		q: Query{
			Type:         caseHour,
			Specialists:  []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))}},
			SpecialistID: idC,
		},
		want: []string{},
	},
	{
		name: "an inactive specialist gets no slots of their own",
		q: Query{
			Type:         caseHour,
			Specialists:  []Specialist{{ID: idD, Active: false, Weekly: on(caseMon, hours("09:00", "11:00"))}},
			SpecialistID: idD,
		},
		want: []string{},
	},
	{
		name: "the pooled view merges starts and lists specialists by priority then ID",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{
				{ID: idC, Active: true, Priority: 1, Weekly: on(caseMon, hours("09:00", "10:00"))},
				{ID: idA, Active: true, Priority: 1, Weekly: on(caseMon, hours("09:00", "12:00"))},
				{ID: idB, Active: true, Priority: 2, Weekly: on(caseMon, hours("09:00", "12:00"))},
			},
			Bookings: []Busy{caseBooking(idA, "10:00", "11:00")},
		},
		want: []string{"Mon 09:00 B,A,C", "Mon 10:00 B", "Mon 11:00 B,A"},
	},
	{
		name: "the pooled view offers a slot while any specialist is free",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{
				{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "11:00"))},
				{ID: idB, Active: true, Weekly: on(caseMon, hours("09:30", "11:30"))},
			},
			Bookings: []Busy{caseBooking(idA, "09:00", "11:00"), caseBooking(idB, "10:30", "11:30")},
		},
		want: []string{"Mon 09:30 B"},
	},
	{
		name: "an inactive specialist is left out of the pool",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{
				{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))},
				{ID: idD, Active: false, Priority: 9, Weekly: on(caseMon, hours("09:00", "11:00"))},
			},
		},
		want: []string{"Mon 09:00 A"},
	},
	{
		name: "a specialist listed twice counts once",
		q: Query{
			Type: caseHour,
			Specialists: []Specialist{
				{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))},
				{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))},
			},
		},
		want: []string{"Mon 09:00 A"},
	},
	{
		name: "a nil zone means UTC",
		q: Query{
			Zone:        time.UTC,
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))}},
		},
		want: []string{"Mon 09:00 A"},
	},
	{
		name: "no working hours give an empty, non-nil result",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on([]time.Weekday{time.Sunday}, hours("09:00", "10:00"))}},
		},
		want: []string{},
	},
	{
		name: "a fully booked day gives an empty, non-nil result",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))}},
			Bookings:    []Busy{caseBooking(idA, "08:00", "12:00")},
		},
		want: []string{},
	},
	{
		name: "no specialists give an empty, non-nil result",
		q:    Query{Type: caseHour},
		want: []string{},
	},
	{
		name: "a zero step gives an empty, non-nil result instead of looping",
		q: Query{
			Type:        AppointmentType{Duration: time.Hour},
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(caseMon, hours("09:00", "10:00"))}},
		},
		want: []string{},
	},
	{
		name: "From after To gives an empty, non-nil result",
		q: Query{
			Type:        caseHour,
			Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(weekdays, hours("09:00", "10:00"))}},
			From:        caseMonday.AddDays(1),
		},
		want: []string{},
	},
}
