package slots

// Lists read lately, answered from memory: what a claim and its confirm
// go by, checked by Redis in their own steps.

import (
	"slices"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
)

// Generations are counters of one clinic (one hash slot) with the values
// a list was read at: while each still has its value, no booking or
// set-up change has reached the list's days, and the list stands.
type Generations struct {
	Keys, Values []string
	server       string // the PostgreSQL server the list was computed from
}

// Unchanged reports whether values, read later for g.Keys in order, are
// still g's, from the same PostgreSQL server: false for no counters at
// all.
func (s *Service) Unchanged(g Generations, values []string) bool {
	return len(g.Keys) > 0 && slices.Equal(g.Values, values) && g.server == s.server()
}

// Remembered is the free slots of one local day (holds left out), from
// this process's memory only: a list it read or computed lately whose
// range holds the day, restricted to it, with the generations that list
// was read at. Nothing is asked of Redis, so the list may be out of date:
// the caller acts on it only in a step that checks its Generations
// (holds.ClaimRequest.Watch) and reads afresh when they moved. false when
// nothing remembered holds the day.
func (s *Service) Remembered(typeID, specialistID uuid.UUID, day availability.Date) (Result, bool) {
	if s.noCache || s.rdb == nil {
		return Result{}, false
	}
	now := s.now()
	me, ok := s.memo.covering(typeID, specialistID, day, now)
	if !ok || me.ref.server != s.server() {
		return Result{}, false
	}
	e := me.e
	loc, err := loadZone(e.Zone)
	if err != nil {
		return Result{}, false
	}
	var in []availability.Slot
	for _, sl := range trim(e.Slots, now, e.Type) {
		if availability.DateOf(sl.Start, loc) == day {
			in = append(in, sl)
		}
	}
	return Result{Timezone: e.Zone, Location: loc, ClinicID: e.ClinicID, Type: e.Type, Stored: clinics.TypeFromRow(e.Row), Slots: in, Priority: e.Priority, NeedsRoom: e.NeedsRoom,
		Generations: Generations{Keys: me.ref.genKeys, Values: me.ref.genVals, server: me.ref.server}}, true
}
