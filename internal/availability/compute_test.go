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
	for _, tt := range computeCases {
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
				q.From = caseMonday
			}
			if q.To == (Date{}) {
				q.To = caseMonday
			}
			if q.Now.IsZero() {
				q.Now = caseAt("2026-03-01", "12:00")
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
