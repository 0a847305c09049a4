package slots

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
)

// A cached entry's slots come back from Redis exactly as they went in.
func TestSlotListRoundTrip(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	room1, room2 := uuid.New(), uuid.New()
	start := time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC) // the night the clocks go back in Europe
	in := slotList{
		{Start: start, End: start.Add(30 * time.Minute), SpecialistIDs: []uuid.UUID{a, b, c}},
		{Start: start.Add(time.Hour), End: start.Add(2 * time.Hour), SpecialistIDs: []uuid.UUID{c}},
		{Start: start.Add(3 * time.Hour), End: start.Add(3*time.Hour + 30*time.Minute), SpecialistIDs: []uuid.UUID{b, a}},
		// Positions that repeat, change and grow.
		{Start: start.Add(4 * time.Hour), End: start.Add(5 * time.Hour), SpecialistIDs: []uuid.UUID{b, a, c}},
		{Start: start.Add(5 * time.Hour), End: start.Add(6 * time.Hour), SpecialistIDs: []uuid.UUID{b, a, c}},
		{Start: start.Add(6 * time.Hour), End: start.Add(7 * time.Hour), SpecialistIDs: []uuid.UUID{b, c, a, uuid.Nil}},
		{Start: start.Add(7 * time.Hour), End: start.Add(8 * time.Hour), SpecialistIDs: []uuid.UUID{}},
		{Start: start.Add(8 * time.Hour), End: start.Add(9 * time.Hour), SpecialistIDs: []uuid.UUID{b, c, a, uuid.Nil}},
		// A type that needs a room: its free rooms, some new to the list,
		// one also a specialist's id (the table is shared).
		{Start: start.Add(9 * time.Hour), End: start.Add(10 * time.Hour), SpecialistIDs: []uuid.UUID{a, b}, ResourceIDs: []uuid.UUID{room1, room2}},
		{Start: start.Add(10 * time.Hour), End: start.Add(11 * time.Hour), SpecialistIDs: []uuid.UUID{room2}, ResourceIDs: []uuid.UUID{room2}},
		{Start: start.Add(11 * time.Hour), End: start.Add(12 * time.Hour), SpecialistIDs: []uuid.UUID{c}, ResourceIDs: []uuid.UUID{a}},
	}
	e := entry{entryMeta: entryMeta{Zone: "Europe/Berlin", ClinicID: uuid.New(), Priority: map[uuid.UUID]int{a: 2, c: 0},
		Row: db.AppointmentType{Name: `"Quoted" \ name`, DurationMin: 30, Translations: json.RawMessage(`{"de":{"name":"Beratung"}}`)}, Type: availability.AppointmentType{Duration: time.Hour},
		Expires: start.Add(5 * time.Minute)}, Slots: in}
	for _, e := range []*entry{&e, (&entry{entryMeta: e.entryMeta, Slots: in}).withMeta(), {Slots: in}, {}} {
		raw, err := e.encode()
		if err != nil {
			t.Fatal(err)
		}
		var out entry
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		if len(out.Slots) == 0 {
			out.Slots = nil // {} and [] alike
		}
		if string(out.Row.Translations) == "null" {
			out.Row.Translations = nil // a row without any (a stored one has {})
		}
		if want := (entry{entryMeta: e.entryMeta, Slots: e.Slots}); !reflect.DeepEqual(out, want) {
			t.Fatalf("round trip of\n%s\n got %+v\nwant %+v", raw, out, want)
		}
	}
	var empty entry
	if err := json.Unmarshal([]byte(`{"slots":{"ids":[],"s":[]}}`), &empty); err != nil || len(empty.Slots) != 0 {
		t.Fatalf("empty list: %v %v", empty.Slots, err)
	}
}

// A damaged or old-format entry is an error (the cache then recomputes),
// never a panic or a slot with the wrong specialist.
func TestSlotListRefusesWhatItDidNotWrite(t *testing.T) {
	for _, raw := range []string{
		`[{"Start":"2026-10-25T00:30:00Z","End":"2026-10-25T01:00:00Z","SpecialistIDs":[]}]`, // the old format
		`{"ids":[],"s":[[1]]}`,
		`{"ids":[],"s":[[1,2,0]]}`,
		`{"ids":["00000000-0000-0000-0000-000000000000"],"s":[[1,2,-1]]}`,
		`{"ids":["00000000-0000-0000-0000-000000000000"],"s":[[1,2,0,-2]]}`,
		`{"ids":["00000000-0000-0000-0000-000000000000"],"s":[[1,2,-1,0]]}`,
	} {
		var l slotList
		if err := json.Unmarshal([]byte(raw), &l); err == nil {
			t.Errorf("%s: decoded to %+v, want an error", raw, l)
		}
	}
}
