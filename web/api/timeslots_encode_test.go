package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
)

// The hand-written timeslots answer must be what encoding/json would give
// for the same data.
func TestAppendTimeslotsIsWhatEncodingJSONWrites(t *testing.T) {
	type slotJSON struct {
		Start         string      `json:"start"`
		End           string      `json:"end"`
		SpecialistIDs []uuid.UUID `json:"specialistIds"`
	}
	start := time.Date(2026, 3, 29, 0, 30, 0, 0, time.FixedZone("CET", 3600)) // not UTC on purpose
	a, b := uuid.New(), uuid.New()
	cases := []struct {
		tz    string
		slots []availability.Slot
	}{
		{"Europe/Berlin", nil},
		{"America/Argentina/Buenos_Aires", []availability.Slot{
			{Start: start, End: start.Add(30 * time.Minute), SpecialistIDs: []uuid.UUID{a}},
			{Start: start.Add(time.Hour), End: start.Add(90 * time.Minute), SpecialistIDs: []uuid.UUID{b, a}},
		}},
		{`odd "zone" \ <name>`, []availability.Slot{{Start: start, End: start.Add(time.Minute), SpecialistIDs: []uuid.UUID{uuid.Nil}}}},
		// Ids repeat at a position, change, come back, and the nil id
		// appears where nothing was written yet.
		{"UTC", []availability.Slot{
			{Start: start, End: start.Add(time.Minute), SpecialistIDs: []uuid.UUID{a, b}},
			{Start: start, End: start.Add(time.Minute), SpecialistIDs: []uuid.UUID{a, b}},
			{Start: start, End: start.Add(time.Minute), SpecialistIDs: []uuid.UUID{b}},
			{Start: start, End: start.Add(time.Minute), SpecialistIDs: []uuid.UUID{a, b, uuid.Nil}},
			{Start: start, End: start.Add(time.Minute), SpecialistIDs: []uuid.UUID{uuid.Nil, a, b, uuid.Max}},
		}},
	}
	for _, tc := range cases {
		want := struct {
			Timezone  string     `json:"timezone"`
			Timeslots []slotJSON `json:"timeslots"`
		}{Timezone: tc.tz, Timeslots: []slotJSON{}}
		for _, sl := range tc.slots {
			want.Timeslots = append(want.Timeslots, slotJSON{sl.Start.UTC().Format(time.RFC3339), sl.End.UTC().Format(time.RFC3339), sl.SpecialistIDs})
		}
		wantRaw, _ := json.Marshal(want)
		gotRaw := appendTimeslots(nil, tc.tz, tc.slots)
		var got, exp any
		if err := json.Unmarshal(gotRaw, &got); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", tc.tz, err, gotRaw)
		}
		_ = json.Unmarshal(wantRaw, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s:\n got %s\nwant %s", tc.tz, gotRaw, wantRaw)
		}
	}
}

func TestEncodeUUIDIsTheCanonicalForm(t *testing.T) {
	for _, id := range []uuid.UUID{uuid.Nil, uuid.Max, uuid.New(), uuid.New(), uuid.New()} {
		var buf [36]byte
		if encodeUUID(&buf, id); string(buf[:]) != id.String() {
			t.Errorf("encodeUUID(%s) = %s", id, buf)
		}
	}
}
