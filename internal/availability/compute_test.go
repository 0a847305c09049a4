package availability

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Hand-made calendars in the week of Monday 2026-03-02, Berlin winter time.
var (
	idA = uuid.MustParse("10000000-0000-4000-8000-00000000000a")
	idB = uuid.MustParse("20000000-0000-4000-8000-00000000000b")
	idC = uuid.MustParse("c0000000-0000-4000-8000-00000000000c")
	idD = uuid.MustParse("d0000000-0000-4000-8000-00000000000d")

	names = map[uuid.UUID]string{idA: "A", idB: "B", idC: "C", idD: "D"}
)

func TestCompute(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	at := func(date, hm string) time.Time {
		d := mustDate(t, date)
		m := clock(hm)
		return time.Date(d.Year, d.Month, d.Day, m/60, m%60, 0, 0, berlin)
	}
	monday := mustDate(t, "2026-03-02")
	mon := []time.Weekday{time.Monday}
	booking := func(id uuid.UUID, from, to string) Busy {
		return Busy{SpecialistID: id, Start: at("2026-03-02", from), End: at("2026-03-02", to)}
	}
	hour := AppointmentType{Duration: time.Hour, Step: time.Hour}
	halfHour := AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute}

	tests := []struct {
		name string
		q    Query // Zone, Now, From and To default to Berlin, Sunday noon, Monday, Monday
		want []string
	}{
		{
			name: "a lunch break splits the day into two ranges",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "12:00"), hours("13:00", "15:00"))}},
			},
			want: []string{"Mon 09:00 A", "Mon 10:00 A", "Mon 11:00 A", "Mon 13:00 A", "Mon 14:00 A"},
		},
		{
			name: "each of several ranges a day steps from its own start",
			q: Query{
				Type:        halfHour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("08:00", "09:00"), hours("11:15", "12:30"), hours("16:00", "17:00"))}},
			},
			want: []string{"Mon 08:00 A", "Mon 08:30 A", "Mon 11:15 A", "Mon 11:45 A", "Mon 16:00 A", "Mon 16:30 A"},
		},
		{
			name: "a slot must fit inside its range",
			q: Query{
				Type:        AppointmentType{Duration: 45 * time.Minute, Step: 30 * time.Minute},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))}},
			},
			want: []string{"Mon 09:00 A"},
		},
		{
			name: "overlapping ranges of one specialist do not duplicate slots",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"), hours("10:00", "12:00"))}},
			},
			want: []string{"Mon 09:00 A", "Mon 10:00 A", "Mon 11:00 A"},
		},
		{
			name: "a range may end at midnight",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, Range{Start: clock("22:00"), End: 1440})}},
			},
			want: []string{"Mon 22:00 A", "Mon 23:00 A"},
		},
		{
			name: "malformed ranges are ignored",
			q: Query{
				Type: hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon,
					hours("09:00", "10:00"), Range{Start: 600, End: 600}, Range{Start: 700, End: 650}, Range{Start: -60, End: 60}, Range{Start: 1380, End: 1500})}},
			},
			want: []string{"Mon 09:00 A"},
		},
		{
			name: "a closed override removes that date's weekly hours",
			q: Query{
				Type: hour,
				Specialists: []Specialist{{ID: idA, Active: true,
					Weekly:    on([]time.Weekday{time.Monday, time.Tuesday}, hours("09:00", "11:00")),
					Overrides: []Override{{Date: monday, Closed: true}}}},
				To: monday.AddDays(1),
			},
			want: []string{"Tue 09:00 A", "Tue 10:00 A"},
		},
		{
			name: "a replacement override replaces that date's weekly hours only",
			q: Query{
				Type: hour,
				Specialists: []Specialist{{ID: idA, Active: true,
					Weekly:    on([]time.Weekday{time.Monday, time.Tuesday}, hours("09:00", "11:00")),
					Overrides: []Override{{Date: monday, Ranges: []Range{hours("14:00", "15:00"), hours("17:00", "18:00")}}}}},
				To: monday.AddDays(1),
			},
			want: []string{"Mon 14:00 A", "Mon 17:00 A", "Tue 09:00 A", "Tue 10:00 A"},
		},
		{
			name: "an override can open a day without weekly hours",
			q: Query{
				Type: hour,
				Specialists: []Specialist{{ID: idA, Active: true,
					Weekly:    on(mon, hours("09:00", "10:00")),
					Overrides: []Override{{Date: monday.AddDays(5), Ranges: []Range{hours("10:00", "11:00")}}}}},
				To: monday.AddDays(6),
			},
			want: []string{"Mon 09:00 A", "Sat 10:00 A"},
		},
		{
			name: "the buffer before a slot must clear the previous booking",
			q: Query{
				Type:        AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute, BufferBefore: 15 * time.Minute},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))}},
				Bookings:    []Busy{booking(idA, "09:30", "10:00")},
			},
			// 10:00 would need 09:45 free; 09:00's buffer lies outside working hours.
			want: []string{"Mon 09:00 A", "Mon 10:30 A"},
		},
		{
			name: "the buffer after a slot must clear the next booking",
			q: Query{
				Type:        AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute, BufferAfter: 15 * time.Minute},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))}},
				Bookings:    []Busy{booking(idA, "10:00", "10:30")},
			},
			// 09:30 would run into the booking at 10:00 with its buffer; 10:30's buffer may run past closing.
			want: []string{"Mon 09:00 A", "Mon 10:30 A"},
		},
		{
			name: "a booking of another type keeps its own buffers",
			q: Query{
				Type:        halfHour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:30"))}},
				Bookings: []Busy{{SpecialistID: idA, Start: at("2026-03-02", "10:00"), End: at("2026-03-02", "10:30"),
					BufferBefore: 30 * time.Minute, BufferAfter: 15 * time.Minute}},
			},
			// Blocked from 09:30 to 10:45.
			want: []string{"Mon 09:00 A", "Mon 11:00 A"},
		},
		{
			name: "buffers of both sides add up",
			q: Query{
				Type:        AppointmentType{Duration: 30 * time.Minute, Step: 15 * time.Minute, BufferAfter: 10 * time.Minute},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))}},
				Bookings:    []Busy{{SpecialistID: idA, Start: at("2026-03-02", "10:00"), End: at("2026-03-02", "10:30"), BufferBefore: 5 * time.Minute}},
			},
			// 09:15 ends 09:45, free until 09:55: fine. 09:30 ends 10:00 + 10 > 09:55.
			want: []string{"Mon 09:00 A", "Mon 09:15 A"},
		},
		{
			name: "buffered intervals that only touch do not conflict",
			q: Query{
				Type:        AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute, BufferBefore: 10 * time.Minute, BufferAfter: 10 * time.Minute},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))}},
				Bookings: []Busy{
					{SpecialistID: idA, Start: at("2026-03-02", "08:30"), End: at("2026-03-02", "08:40"), BufferAfter: 10 * time.Minute},
					{SpecialistID: idA, Start: at("2026-03-02", "11:00"), End: at("2026-03-02", "11:30"), BufferBefore: 20 * time.Minute},
				},
			},
			want: []string{"Mon 09:00 A", "Mon 09:30 A", "Mon 10:00 A"},
		},
		{
			name: "bookings of other specialists do not block",
			q: Query{
				Type:         hour,
				Specialists:  []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))}},
				Bookings:     []Busy{booking(idB, "09:00", "11:00")},
				SpecialistID: idA,
			},
			want: []string{"Mon 09:00 A", "Mon 10:00 A"},
		},
		{
			name: "a hold blocks its specialist like a booking",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "12:00"))}},
				Holds:       []Busy{booking(idA, "10:00", "11:00")},
			},
			want: []string{"Mon 09:00 A", "Mon 11:00 A"},
		},
		{
			name: "minimum notice hides slots starting too soon, the boundary included",
			q: Query{
				Type:        AppointmentType{Duration: time.Hour, Step: 30 * time.Minute, MinNotice: time.Hour},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "12:00"))}},
				Now:         at("2026-03-02", "09:00"),
			},
			want: []string{"Mon 10:00 A", "Mon 10:30 A", "Mon 11:00 A"},
		},
		{
			name: "the booking window hides slots starting too late, the boundary included",
			q: Query{
				Type:        AppointmentType{Duration: time.Hour, Step: time.Hour, MaxAdvance: 24 * time.Hour},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(weekdays, hours("09:00", "10:00"))}},
				Now:         at("2026-03-02", "09:00"),
				To:          monday.AddDays(4),
			},
			want: []string{"Mon 09:00 A", "Tue 09:00 A"},
		},
		{
			name: "a zero booking window means no limit",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(weekdays, hours("09:00", "10:00"))}},
				Now:         at("2026-03-02", "09:00"),
				To:          monday.AddDays(4),
			},
			want: []string{"Mon 09:00 A", "Tue 09:00 A", "Wed 09:00 A", "Thu 09:00 A", "Fri 09:00 A"},
		},
		{
			name: "a step smaller than the duration gives overlapping slots",
			q: Query{
				Type:        AppointmentType{Duration: time.Hour, Step: 15 * time.Minute},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))}},
			},
			want: []string{"Mon 09:00 A", "Mon 09:15 A", "Mon 09:30 A", "Mon 09:45 A", "Mon 10:00 A"},
		},
		{
			name: "a booking removes every overlapping slot of a small step",
			q: Query{
				Type:        AppointmentType{Duration: time.Hour, Step: 15 * time.Minute},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))}},
				Bookings:    []Busy{booking(idA, "10:30", "11:00")},
			},
			want: []string{"Mon 09:00 A", "Mon 09:15 A", "Mon 09:30 A"},
		},
		{
			name: "the specialist filter shows only that specialist",
			q: Query{
				Type: hour,
				Specialists: []Specialist{
					{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))},
					{ID: idB, Active: true, Priority: 5, Weekly: on(mon, hours("10:00", "12:00"))},
				},
				SpecialistID: idA,
			},
			want: []string{"Mon 09:00 A", "Mon 10:00 A"},
		},
		{
			name: "an unknown specialist gets no slots",
			q: Query{
				Type:         hour,
				Specialists:  []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))}},
				SpecialistID: idC,
			},
			want: []string{},
		},
		{
			name: "an inactive specialist gets no slots of their own",
			q: Query{
				Type:         hour,
				Specialists:  []Specialist{{ID: idD, Active: false, Weekly: on(mon, hours("09:00", "11:00"))}},
				SpecialistID: idD,
			},
			want: []string{},
		},
		{
			name: "the pooled view merges starts and lists specialists by priority then ID",
			q: Query{
				Type: hour,
				Specialists: []Specialist{
					{ID: idC, Active: true, Priority: 1, Weekly: on(mon, hours("09:00", "10:00"))},
					{ID: idA, Active: true, Priority: 1, Weekly: on(mon, hours("09:00", "12:00"))},
					{ID: idB, Active: true, Priority: 2, Weekly: on(mon, hours("09:00", "12:00"))},
				},
				Bookings: []Busy{booking(idA, "10:00", "11:00")},
			},
			want: []string{"Mon 09:00 B,A,C", "Mon 10:00 B", "Mon 11:00 B,A"},
		},
		{
			name: "the pooled view offers a slot while any specialist is free",
			q: Query{
				Type: hour,
				Specialists: []Specialist{
					{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "11:00"))},
					{ID: idB, Active: true, Weekly: on(mon, hours("09:30", "11:30"))},
				},
				Bookings: []Busy{booking(idA, "09:00", "11:00"), booking(idB, "10:30", "11:30")},
			},
			want: []string{"Mon 09:30 B"},
		},
		{
			name: "an inactive specialist is left out of the pool",
			q: Query{
				Type: hour,
				Specialists: []Specialist{
					{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))},
					{ID: idD, Active: false, Priority: 9, Weekly: on(mon, hours("09:00", "11:00"))},
				},
			},
			want: []string{"Mon 09:00 A"},
		},
		{
			name: "a specialist listed twice counts once",
			q: Query{
				Type: hour,
				Specialists: []Specialist{
					{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))},
					{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))},
				},
			},
			want: []string{"Mon 09:00 A"},
		},
		{
			name: "a nil zone means UTC",
			q: Query{
				Zone:        time.UTC,
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))}},
			},
			want: []string{"Mon 09:00 A"},
		},
		{
			name: "no working hours give an empty, non-nil result",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on([]time.Weekday{time.Sunday}, hours("09:00", "10:00"))}},
			},
			want: []string{},
		},
		{
			name: "a fully booked day gives an empty, non-nil result",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))}},
				Bookings:    []Busy{booking(idA, "08:00", "12:00")},
			},
			want: []string{},
		},
		{
			name: "no specialists give an empty, non-nil result",
			q:    Query{Type: hour},
			want: []string{},
		},
		{
			name: "a zero step gives an empty, non-nil result instead of looping",
			q: Query{
				Type:        AppointmentType{Duration: time.Hour},
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(mon, hours("09:00", "10:00"))}},
			},
			want: []string{},
		},
		{
			name: "From after To gives an empty, non-nil result",
			q: Query{
				Type:        hour,
				Specialists: []Specialist{{ID: idA, Active: true, Weekly: on(weekdays, hours("09:00", "10:00"))}},
				From:        monday.AddDays(1),
			},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			loc := berlin
			switch {
			case q.Zone == time.UTC:
				// The nil-zone case: write the query in UTC, pass nil.
				loc, q.Zone = time.UTC, nil
			case q.Zone == nil:
				q.Zone = berlin
			}
			if q.From == (Date{}) {
				q.From = monday
			}
			if q.To == (Date{}) {
				q.To = monday
			}
			if q.Now.IsZero() {
				q.Now = at("2026-03-01", "12:00")
			}

			got := Compute(q)
			if got == nil {
				t.Fatal("Compute returned nil, want a non-nil slice")
			}
			if desc := describe(got, loc, names); !slices.Equal(desc, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", lines(desc), lines(tt.want))
			}
			for _, s := range got {
				if s.Start.Location() != time.UTC || s.End.Location() != time.UTC {
					t.Errorf("slot %v is not in UTC", s.Start)
				}
				if s.End.Sub(s.Start) != q.Type.Duration {
					t.Errorf("slot %v lasts %v, want %v", s.Start, s.End.Sub(s.Start), q.Type.Duration)
				}
			}
		})
	}
}

func TestApplyHolds(t *testing.T) {
	t0 := mustTime(t, "2026-03-02T09:00:00Z")
	slot := func(h int, ids ...uuid.UUID) Slot {
		s := t0.Add(time.Duration(h) * time.Hour)
		return Slot{Start: s, End: s.Add(time.Hour), SpecialistIDs: ids}
	}
	typ := AppointmentType{Duration: time.Hour, Step: time.Hour, BufferAfter: 15 * time.Minute}

	t.Run("removes only the held specialist and keeps the order of the others", func(t *testing.T) {
		slots := []Slot{slot(0, idB, idA, idC)}
		got := ApplyHolds(typ, slots, []Busy{{SpecialistID: idA, Start: t0, End: t0.Add(time.Hour)}})
		want := []Slot{slot(0, idB, idC)}
		if !equalSlots(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("drops slots left with nobody", func(t *testing.T) {
		slots := []Slot{slot(0, idA), slot(1, idA)}
		got := ApplyHolds(typ, slots, []Busy{{SpecialistID: idA, Start: t0, End: t0.Add(time.Hour)}})
		want := []Slot{slot(1, idA)}
		if !equalSlots(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("applies the slot type's buffers and the hold's own", func(t *testing.T) {
		slots := []Slot{slot(0, idA), slot(2, idB)}
		holds := []Busy{
			{SpecialistID: idA, Start: t0.Add(70 * time.Minute), End: t0.Add(2 * time.Hour)},                              // inside 09:00's buffer after
			{SpecialistID: idB, Start: t0.Add(4 * time.Hour), End: t0.Add(5 * time.Hour), BufferBefore: 61 * time.Minute}, // reaches back into 11:00-12:00
		}
		got := ApplyHolds(typ, slots, holds)
		if len(got) != 0 {
			t.Errorf("got %v, want none", got)
		}
	})
	t.Run("does not modify its input", func(t *testing.T) {
		slots := []Slot{slot(0, idB, idA)}
		ApplyHolds(typ, slots, []Busy{{SpecialistID: idB, Start: t0, End: t0.Add(time.Hour)}})
		if !equalSlots(slots, []Slot{slot(0, idB, idA)}) {
			t.Errorf("input changed to %v", slots)
		}
	})
	t.Run("returns an empty, non-nil slice for no slots", func(t *testing.T) {
		if got := ApplyHolds(typ, nil, nil); got == nil || len(got) != 0 {
			t.Errorf("got %#v, want an empty non-nil slice", got)
		}
	})
}

func TestFits(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	q := Query{
		Zone: berlin,
		Type: AppointmentType{Duration: time.Hour, Step: 30 * time.Minute, MinNotice: 2 * time.Hour},
		Specialists: []Specialist{
			{ID: idA, Active: true, Weekly: on(weekdays, hours("09:00", "12:00"))},
			{ID: idB, Active: true, Weekly: on(weekdays, hours("09:00", "12:00"))},
		},
		Bookings: []Busy{{SpecialistID: idA, Start: mustTime(t, "2026-03-03T10:00:00+01:00"), End: mustTime(t, "2026-03-03T11:00:00+01:00")}},
		Holds:    []Busy{{SpecialistID: idB, Start: mustTime(t, "2026-03-03T09:00:00+01:00"), End: mustTime(t, "2026-03-03T09:30:00+01:00")}},
		Now:      mustTime(t, "2026-03-02T08:00:00+01:00"),
		// Fits looks at the slot's own date, whatever the query says.
		From: mustDate(t, "2030-01-01"),
		To:   mustDate(t, "2030-01-01"),
	}
	tests := []struct {
		name  string
		start string
		id    uuid.UUID
		want  bool
	}{
		{"a free slot start fits", "2026-03-03T09:00:00+01:00", idA, true},
		{"a start off the step grid does not fit", "2026-03-03T09:15:00+01:00", idA, false},
		{"a start overlapping a booking does not fit", "2026-03-03T09:30:00+01:00", idA, false},
		{"a start overlapping a hold does not fit", "2026-03-03T09:00:00+01:00", idB, false},
		{"a start past the hold fits", "2026-03-03T09:30:00+01:00", idB, true},
		{"a start inside the minimum notice does not fit", "2026-03-02T09:30:00+01:00", idA, false},
		{"the first start after the minimum notice fits", "2026-03-02T10:00:00+01:00", idA, true},
		{"a start whose slot overruns closing does not fit", "2026-03-03T11:30:00+01:00", idA, false},
		{"a start on a day off does not fit", "2026-03-07T09:00:00+01:00", idA, false},
		{"an unknown specialist does not fit", "2026-03-03T09:00:00+01:00", idC, false},
		{"the nil specialist does not fit", "2026-03-03T09:00:00+01:00", uuid.Nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fits(q, mustTime(t, tt.start), tt.id); got != tt.want {
				t.Errorf("Fits(%s, %s) = %v, want %v", tt.start, names[tt.id], got, tt.want)
			}
		})
	}
}
