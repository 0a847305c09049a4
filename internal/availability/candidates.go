package availability

// From free instants to slots: candidates, grouped into one slot per start.

import (
	"cmp"
	"time"

	"github.com/google/uuid"
)

// candidate is one specialist free at one instant.
type candidate struct {
	start int64 // Unix nanoseconds
	rank  int   // index into the roster, so ordering by it orders specialists
}

func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return cmp.Compare(a.rank, b.rank)
}

// group merges sorted candidates into slots, one per instant. All the
// slots' ID lists share one backing array, capped so appending to one
// cannot overwrite the next.
func group(cands []candidate, staff []worker, dur time.Duration) []Slot {
	n := 0
	for i := range cands {
		if i == 0 || cands[i].start != cands[i-1].start {
			n++
		}
	}
	slots := make([]Slot, 0, n)
	ids := make([]uuid.UUID, 0, len(cands))
	for i := 0; i < len(cands); {
		first := len(ids)
		j := i
		for ; j < len(cands) && cands[j].start == cands[i].start; j++ {
			// Overlapping ranges of one specialist produce the same
			// candidate twice.
			if j > i && cands[j].rank == cands[j-1].rank {
				continue
			}
			ids = append(ids, staff[cands[j].rank].id)
		}
		start := time.Unix(0, cands[i].start).UTC()
		slots = append(slots, Slot{Start: start, End: start.Add(dur), SpecialistIDs: ids[first:len(ids):len(ids)]})
		i = j
	}
	return slots
}

// estimate guesses the number of candidates so that one allocation
// usually suffices: every weekly range stepped through, nothing booked.
// It is capped so that an absurd date range grows the slice as it goes
// instead of reserving gigabytes up front.
func estimate(staff []worker, step int64, days int) int {
	var weekly int64
	for _, w := range staff {
		for _, wr := range w.weekly {
			if n := int64(wr.End-wr.Start) * int64(time.Minute) / step; n > 0 {
				weekly += n + 1
			}
		}
	}
	return int(min(weekly*int64(days)/7, 1<<16)) + 16
}
