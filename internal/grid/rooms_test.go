package grid

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/holds"
)

// A booking cannot be applied to the grid of a type that needs a room:
// it may take the last free room of a time, which leaves every specialist
// of the time without one, and the event does not say which room. The
// grid is read again instead; a grid of a type without rooms applies it.
func TestBookingNotAppliedToAGridThatNeedsARoom(t *testing.T) {
	clinic, typ, sp := uuid.New(), uuid.New(), uuid.New()
	at := time.Date(2030, 3, 4, 10, 0, 0, 0, time.UTC)
	ev := holds.Event{Type: holds.EventConfirm, Hold: holds.Hold{ClinicID: clinic, SpecialistID: uuid.New(),
		AppointmentTypeID: typ, Start: at, End: at.Add(30 * time.Minute)}}
	for _, rooms := range []bool{false, true} {
		sn := &Snapshot{View: View{AppointmentTypeID: typ}, ClinicID: clinic, rooms: rooms,
			typ:       availability.AppointmentType{Duration: 30 * time.Minute, Step: 30 * time.Minute},
			positions: []availability.Slot{{Start: at, End: at.Add(30 * time.Minute)}},
			free:      map[int64][]uuid.UUID{at.Unix(): {sp, ev.SpecialistID}}}
		if _, ok := sn.Apply(ev); ok == rooms {
			t.Errorf("grid needing a room %v: booking applied %v", rooms, ok)
		}
	}
}
