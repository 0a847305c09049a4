package availability

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
)

// randomQuery builds a small, messy calendar: overlapping ranges, overrides,
// inactive and duplicate-priority specialists, bookings of unknown
// specialists, and dates around the 2026 daylight-saving changes.
func randomQuery(r *rand.Rand, zones []*time.Location) Query {
	pick := func(ds ...time.Duration) time.Duration { return ds[r.IntN(len(ds))] }
	anchors := []Date{
		{2026, time.March, 6}, {2026, time.March, 27}, {2026, time.April, 2},
		{2026, time.October, 1}, {2026, time.October, 23}, {2026, time.October, 30},
		{2026, time.June, 15},
	}
	from := anchors[r.IntN(len(anchors))].AddDays(r.IntN(3))
	to := from.AddDays(r.IntN(5))
	loc := zones[r.IntN(len(zones))]

	randomRange := func() Range {
		start := r.IntN(1440/5) * 5
		end := min(1440, start+15+r.IntN(480/5)*5)
		return Range{Start: start, End: end}
	}
	randomID := func() uuid.UUID {
		var id uuid.UUID
		for i := range id {
			id[i] = byte(r.Uint32())
		}
		return id
	}
	// Instants around the queried dates, on a 5-minute grid.
	randomInstant := func() time.Time {
		base := time.Date(from.Year, from.Month, from.Day, 0, 0, 0, 0, loc).Add(-12 * time.Hour)
		span := DaysBetween(from, to) + 2
		return base.Add(time.Duration(r.IntN(span*24*12)) * 5 * time.Minute)
	}

	q := Query{
		Zone: loc,
		Type: AppointmentType{
			Duration:     pick(15*time.Minute, 30*time.Minute, 45*time.Minute, time.Hour, 90*time.Minute),
			Step:         pick(5*time.Minute, 10*time.Minute, 15*time.Minute, 30*time.Minute, time.Hour),
			BufferBefore: pick(0, 5*time.Minute, 10*time.Minute),
			BufferAfter:  pick(0, 5*time.Minute, 15*time.Minute),
			MinNotice:    pick(0, time.Hour, 24*time.Hour),
			MaxAdvance:   pick(0, 0, 48*time.Hour, 96*time.Hour),
		},
		From: from,
		To:   to,
	}
	q.Now = time.Date(from.Year, from.Month, from.Day, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(48*60)-24*60) * time.Minute)

	for range 1 + r.IntN(5) {
		s := Specialist{ID: randomID(), Priority: r.IntN(3), Active: r.IntN(6) != 0}
		for wd := range time.Weekday(7) {
			for range r.IntN(3) {
				s.Weekly = append(s.Weekly, WeeklyRange{Weekday: wd, Range: randomRange()})
			}
		}
		for range r.IntN(3) {
			o := Override{Date: from.AddDays(r.IntN(DaysBetween(from, to) + 1)), Closed: r.IntN(2) == 0}
			if !o.Closed {
				for range 1 + r.IntN(2) {
					o.Ranges = append(o.Ranges, randomRange())
				}
			}
			s.Overrides = append(s.Overrides, o)
		}
		q.Specialists = append(q.Specialists, s)
	}

	busy := func() Busy {
		id := randomID() // sometimes nobody we know
		if r.IntN(8) != 0 {
			id = q.Specialists[r.IntN(len(q.Specialists))].ID
		}
		start := randomInstant()
		return Busy{
			SpecialistID: id,
			Start:        start,
			End:          start.Add(pick(15*time.Minute, 30*time.Minute, time.Hour, 2*time.Hour)),
			BufferBefore: pick(0, 5*time.Minute, 20*time.Minute),
			BufferAfter:  pick(0, 10*time.Minute, 30*time.Minute),
		}
	}
	for range r.IntN(40) {
		q.Bookings = append(q.Bookings, busy())
	}
	for range r.IntN(15) {
		q.Holds = append(q.Holds, busy())
	}

	switch r.IntN(4) {
	case 0:
		q.SpecialistID = q.Specialists[r.IntN(len(q.Specialists))].ID
	case 1:
		q.SpecialistID = randomID()
	}
	return q
}

func propertyZones(t *testing.T) []*time.Location {
	var zones []*time.Location
	for _, name := range []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"} {
		zones = append(zones, mustZone(t, name))
	}
	return zones
}

func TestComputeProperties(t *testing.T) {
	zones := propertyZones(t)
	r := rand.New(rand.NewPCG(2026, 3))
	for i := range 300 {
		q := randomQuery(r, zones)
		got := Compute(q)

		t.Run(fmt.Sprintf("calendar %d: holds applied afterwards give the same slots", i), func(t *testing.T) {
			unheld := q
			unheld.Holds = nil
			want := ApplyHolds(q.Type, Compute(unheld), q.Holds)
			if !equalSlots(got, want) {
				t.Errorf("Compute with holds:\n%s\nApplyHolds after Compute:\n%s", lines(rfc3339(got)), lines(rfc3339(want)))
			}
		})

		t.Run(fmt.Sprintf("calendar %d: slots are sorted, unique, ranked and really free", i), func(t *testing.T) {
			checkInvariants(t, q, got)
		})
	}
}

// checkInvariants re-checks each slot against the rules in the plainest
// way, with time.Time arithmetic rather than the engine's nanoseconds.
func checkInvariants(t *testing.T, q Query, slots []Slot) {
	t.Helper()
	if slots == nil {
		t.Fatal("nil result")
	}
	byID := map[uuid.UUID]Specialist{}
	for _, s := range q.Specialists {
		if _, dup := byID[s.ID]; !dup {
			byID[s.ID] = s
		}
	}
	for i, s := range slots {
		if i > 0 && !slots[i-1].Start.Before(s.Start) {
			t.Errorf("slot %d (%v) does not come after %v", i, s.Start, slots[i-1].Start)
		}
		if s.End.Sub(s.Start) != q.Type.Duration {
			t.Errorf("slot %v lasts %v", s.Start, s.End.Sub(s.Start))
		}
		if s.Start.Before(q.Now.Add(q.Type.MinNotice)) {
			t.Errorf("slot %v is inside the minimum notice", s.Start)
		}
		if q.Type.MaxAdvance != 0 && s.Start.After(q.Now.Add(q.Type.MaxAdvance)) {
			t.Errorf("slot %v is beyond the booking window", s.Start)
		}
		if d := DateOf(s.Start, q.Zone); d.Before(q.From) || q.To.Before(d) {
			t.Errorf("slot %v is on %v, outside %v..%v", s.Start, d, q.From, q.To)
		}
		if len(s.SpecialistIDs) == 0 {
			t.Errorf("slot %v has no specialists", s.Start)
		}
		for j, id := range s.SpecialistIDs {
			sp, ok := byID[id]
			if !ok || !sp.Active || (q.SpecialistID != uuid.Nil && id != q.SpecialistID) {
				t.Errorf("slot %v lists %v, who is not in the view", s.Start, id)
			}
			if j > 0 {
				prev := byID[s.SpecialistIDs[j-1]]
				if prev.Priority < sp.Priority || (prev.Priority == sp.Priority && prev.ID.String() >= sp.ID.String()) {
					t.Errorf("slot %v lists %v before %v", s.Start, prev.ID, sp.ID)
				}
			}
			lo, hi := s.Start.Add(-q.Type.BufferBefore), s.End.Add(q.Type.BufferAfter)
			for _, b := range slices.Concat(q.Bookings, q.Holds) {
				if b.SpecialistID == id && lo.Before(b.End.Add(b.BufferAfter)) && b.Start.Add(-b.BufferBefore).Before(hi) {
					t.Errorf("slot %v of %v overlaps busy %v-%v", s.Start, id, b.Start, b.End)
				}
			}
		}
	}
}

func TestFitsAgreesWithCompute(t *testing.T) {
	zones := propertyZones(t)
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 100 {
		q := randomQuery(r, zones)
		q.SpecialistID = uuid.Nil
		slots := Compute(q)

		t.Run(fmt.Sprintf("calendar %d: Fits is true exactly for computed starts", i), func(t *testing.T) {
			free := map[time.Time]map[uuid.UUID]bool{}
			var probes []time.Time
			for _, s := range slots {
				free[s.Start] = map[uuid.UUID]bool{}
				for _, id := range s.SpecialistIDs {
					free[s.Start][id] = true
				}
				probes = append(probes, s.Start, s.Start.Add(time.Minute), s.Start.Add(-q.Type.Step))
			}
			for _, p := range probes {
				// Fits ignores From and To; Compute does not.
				if d := DateOf(p, q.Zone); d.Before(q.From) || q.To.Before(d) {
					continue
				}
				for _, sp := range q.Specialists {
					want := free[p][sp.ID]
					if got := Fits(q, p, sp.ID); got != want {
						t.Errorf("Fits(%s, %v) = %v, want %v", p.UTC().Format(time.RFC3339), sp.ID, got, want)
					}
				}
			}
		})
	}
}
