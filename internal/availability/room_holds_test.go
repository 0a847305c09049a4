package availability

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// With rooms, holds of rooms (of any specialist) applied to a computation
// without holds give what the computation with them gives, rooms
// included: the slot overlay a live page lays over a cached list agrees
// with the engine.
func TestApplyHoldsWithRoomsEqualsComputeWithThem(t *testing.T) {
	zones := propertyZones(t)
	r := rand.New(rand.NewPCG(2026, 33))
	randomID := func() uuid.UUID {
		var id uuid.UUID
		for i := range id {
			id[i] = byte(r.Uint32())
		}
		return id
	}
	checked := 0
	for i := range 200 {
		q := randomQuery(r, zones)
		q.NeedsResource = true
		q.Resources = nil
		for range 1 + r.IntN(3) {
			q.Resources = append(q.Resources, Resource{ID: randomID(), AlwaysOpen: true})
		}
		room := func() uuid.UUID { return q.Resources[r.IntN(len(q.Resources))].ID }
		for _, b := range q.Bookings {
			if r.IntN(3) == 0 {
				q.ResourceBusy = append(q.ResourceBusy, ResourceBusy{ResourceID: room(), Start: b.Start, End: b.End})
			}
		}
		for j := range q.Holds {
			if r.IntN(2) == 0 {
				q.Holds[j].ResourceID = room()
			}
		}
		unheld := q
		unheld.Holds = nil
		got, want := Compute(q), ApplyHolds(q.Type, Compute(unheld), q.Holds)
		if !equalSlots(got, want) || !sameRooms(got, want) {
			t.Fatalf("calendar %d: Compute with room holds:\n%s\nApplyHolds after Compute:\n%s", i, roomLines(got), roomLines(want))
		}
		if len(want) > 0 {
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d calendars had slots", checked)
	}
}

func sameRooms(a, b []Slot) bool {
	for i := range a {
		if !slices.Equal(a[i].ResourceIDs, b[i].ResourceIDs) {
			return false
		}
	}
	return true
}

func roomLines(slots []Slot) string {
	var out []string
	for _, s := range slots {
		out = append(out, fmt.Sprintf("%s rooms %v", s.Start.UTC().Format(time.RFC3339), s.ResourceIDs))
	}
	return lines(out)
}

// A hold of a slot's only room takes the slot away whatever its
// specialists; with a second room free the slot stays, with that room.
func TestApplyHoldsTakesHeldRoomsOut(t *testing.T) {
	t0 := time.Date(2030, 3, 4, 9, 0, 0, 0, time.UTC)
	sp, other, r1, r2 := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	typ := AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute}
	slots := []Slot{{Start: t0, End: t0.Add(30 * time.Minute), SpecialistIDs: []uuid.UUID{sp}, ResourceIDs: []uuid.UUID{r1}}}
	held := []Busy{{SpecialistID: other, ResourceID: r1, Start: t0.Add(15 * time.Minute), End: t0.Add(45 * time.Minute)}}
	if got := ApplyHolds(typ, slots, held); len(got) != 0 {
		t.Fatalf("the only room held: %+v, want no slot", got)
	}
	slots[0].ResourceIDs = []uuid.UUID{r1, r2}
	if got := ApplyHolds(typ, slots, held); len(got) != 1 || !slices.Equal(got[0].ResourceIDs, []uuid.UUID{r2}) {
		t.Fatalf("one of two rooms held: %+v, want the slot with the other room", got)
	}
	// An adjacent hold of the room (rooms have no buffers) and a slot of
	// a type without rooms are not touched.
	next := []Busy{{SpecialistID: other, ResourceID: r1, Start: t0.Add(30 * time.Minute), End: t0.Add(time.Hour), BufferBefore: time.Hour}}
	slots[0].ResourceIDs = []uuid.UUID{r1}
	if got := ApplyHolds(typ, slots, next); len(got) != 1 {
		t.Fatalf("an adjacent hold of the room: %+v, want the slot", got)
	}
	slots[0].ResourceIDs = nil
	if got := ApplyHolds(typ, slots, held); len(got) != 1 {
		t.Fatalf("a type without rooms: %+v, want the slot", got)
	}
}
