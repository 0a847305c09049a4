package slots

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
)

// A cached entry's slots come back from Redis exactly as they went in.
func TestSlotListRoundTrip(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	start := time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC) // the night the clocks go back in Europe
	in := slotList{
		{Start: start, End: start.Add(30 * time.Minute), SpecialistIDs: []uuid.UUID{a, b, c}},
		{Start: start.Add(time.Hour), End: start.Add(2 * time.Hour), SpecialistIDs: []uuid.UUID{c}},
		{Start: start.Add(3 * time.Hour), End: start.Add(3*time.Hour + 30*time.Minute), SpecialistIDs: []uuid.UUID{b, a}},
	}
	e := entry{Zone: "Europe/Berlin", Slots: in}
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var out entry
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if !reflect.DeepEqual(out.Slots, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out.Slots, in)
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
	} {
		var l slotList
		if err := json.Unmarshal([]byte(raw), &l); err == nil {
			t.Errorf("%s: decoded to %+v, want an error", raw, l)
		}
	}
}
