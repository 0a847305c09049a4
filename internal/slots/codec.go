package slots

// A cached entry and its encoding in Redis, written by hand because it
// runs for every list a booking carries over.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
)

// entry is a cached computation: the slots without holds, and what a read
// needs to trim them and lay the holds over them.
type entry struct {
	entryMeta
	Slots slotList `json:"slots"`
	// meta is entryMeta as encode writes it, set when the entry is made
	// (computed or read back) and shared by the lists carried over from it.
	meta []byte
}

// entryMeta is what an entry says besides its slots: the same for a list
// and every list carried over from it.
type entryMeta struct {
	Zone     string                       `json:"zone"`
	ClinicID uuid.UUID                    `json:"clinic"`
	Type     availability.AppointmentType `json:"type"`
	Row      db.AppointmentType           `json:"row"`
	Priority map[uuid.UUID]int            `json:"priority"`
	// Expires is when the computation's window runs out (it was computed
	// for a window stretched by the cache's lifetime); a list carried
	// over a booking keeps the time of the computation it came from.
	Expires time.Time `json:"exp"`
	// NeedsRoom: the type needs a room or device, so a booking of another
	// type may take the last free room of a slot.
	NeedsRoom bool `json:"rooms,omitempty"`
}

// withMeta encodes the entry's meta once, before the entry is shared.
func (e *entry) withMeta() *entry {
	e.meta, _ = json.Marshal(e.entryMeta) // plain data: cannot fail
	return e
}

// encode is the entry as stored in Redis, a JSON object json.Unmarshal
// reads back. It is written by hand around the meta encoded once and the
// slots' own encoding: json.Marshal would encode the meta for every list a
// booking carries over and then re-read the slots' encoding to check it,
// on the booking path.
func (e *entry) encode() ([]byte, error) {
	meta := e.meta
	if meta == nil { // an entry made without withMeta
		meta, _ = json.Marshal(e.entryMeta)
	}
	slots, err := e.Slots.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(slots)+len(meta)+16)
	b = append(b, `{"slots":`...)
	b = append(b, slots...)
	b = append(b, ',')
	return append(b, meta[1:]...), nil // meta's fields and its closing brace
}

// slotList is a cached entry's slots. In Redis each specialist's ID is
// written once and each slot as [start, end, specialist indexes...] in
// Unix seconds: a pooled day of 20 specialists is a tenth of the size of
// the slots as structs, and far cheaper to encode on every booking. The
// free rooms of a slot of a type that needs one follow its specialists,
// each as -(its index + 1) in the same table of IDs, so that a hold can
// name its room from the cached list alone (a slot has a room only with
// a specialist).
type slotList []availability.Slot

type packedSlots struct {
	IDs   []uuid.UUID `json:"ids"`
	Slots [][]int64   `json:"s"`
}

func (l slotList) MarshalJSON() ([]byte, error) {
	// By hand: this runs for every list a booking carries over.
	var ids []uuid.UUID
	var last []int // by position in a slot: the index written there last
	index := map[uuid.UUID]int{}
	rows := make([]byte, 0, 64*len(l))
	for i, sl := range l {
		if i > 0 {
			rows = append(rows, ',')
		}
		rows = append(rows, '[')
		rows = strconv.AppendInt(rows, sl.Start.Unix(), 10)
		rows = append(rows, ',')
		rows = strconv.AppendInt(rows, sl.End.Unix(), 10)
		for j, id := range sl.SpecialistIDs {
			// Neighbouring slots mostly list the same specialists in the
			// same order: try the index this position had last time.
			var n int
			if j < len(last) && ids[last[j]] == id {
				n = last[j]
			} else {
				var ok bool
				if n, ok = index[id]; !ok {
					n = len(ids)
					index[id] = n
					ids = append(ids, id)
				}
				if j < len(last) {
					last[j] = n
				} else {
					last = append(last, n)
				}
			}
			rows = append(rows, ',')
			rows = strconv.AppendInt(rows, int64(n), 10)
		}
		for _, id := range sl.ResourceIDs {
			n, ok := index[id]
			if !ok {
				n = len(ids)
				index[id] = n
				ids = append(ids, id)
			}
			rows = append(rows, ',')
			rows = strconv.AppendInt(rows, -int64(n)-1, 10)
		}
		rows = append(rows, ']')
	}
	b := make([]byte, 0, len(rows)+40*len(ids)+16)
	b = append(b, `{"ids":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, id.String()...)
		b = append(b, '"')
	}
	b = append(b, `],"s":[`...)
	b = append(b, rows...)
	return append(b, "]}"...), nil
}

func (l *slotList) UnmarshalJSON(b []byte) error {
	var p packedSlots
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	out := make(slotList, len(p.Slots))
	for i, row := range p.Slots {
		if len(row) < 2 {
			return fmt.Errorf("cached slot %d: %d numbers", i, len(row))
		}
		sps := row[2:]
		for len(sps) > 0 && sps[len(sps)-1] < 0 {
			sps = sps[:len(sps)-1]
		}
		sl := availability.Slot{Start: time.Unix(row[0], 0).UTC(), End: time.Unix(row[1], 0).UTC(),
			SpecialistIDs: make([]uuid.UUID, len(sps))}
		for j, n := range sps {
			if n < 0 || n >= int64(len(p.IDs)) {
				return fmt.Errorf("cached slot %d: specialist %d of %d", i, n, len(p.IDs))
			}
			sl.SpecialistIDs[j] = p.IDs[n]
		}
		if rooms := row[2+len(sps):]; len(rooms) > 0 {
			if len(sps) == 0 {
				return fmt.Errorf("cached slot %d: rooms without a specialist", i)
			}
			sl.ResourceIDs = make([]uuid.UUID, len(rooms))
			for j, n := range rooms {
				if n = -n - 1; n >= int64(len(p.IDs)) {
					return fmt.Errorf("cached slot %d: room %d of %d", i, n, len(p.IDs))
				}
				sl.ResourceIDs[j] = p.IDs[n]
			}
		}
		out[i] = sl
	}
	*l = out
	return nil
}
