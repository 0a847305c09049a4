package grid

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/holds"
)

// A booking applied to a snapshot looks again only at the positions near
// it; the result must be what applying it to every position gives, for
// any buffers of the view's type and of the booking's.
func TestBookedEqualsApplyingTheBookingToEveryPosition(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 26))
	clinic := uuid.New()
	sps := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	monday := time.Date(2030, 3, 4, 8, 0, 0, 0, time.UTC)
	minutes := func(n int) time.Duration { return time.Duration(n) * time.Minute }
	for round := range 300 {
		typ := availability.AppointmentType{Duration: minutes(15 * (1 + rng.IntN(4))), Step: minutes(5 * (1 + rng.IntN(6))),
			BufferBefore: minutes(5 * rng.IntN(4)), BufferAfter: minutes(5 * rng.IntN(4))}
		sn := &Snapshot{View: View{AppointmentTypeID: uuid.New()}, ClinicID: clinic, typ: typ, free: map[int64][]uuid.UUID{}}
		for day := range 5 {
			for at := monday.AddDate(0, 0, day); at.Before(monday.AddDate(0, 0, day).Add(10 * time.Hour)); at = at.Add(typ.Step) {
				sn.positions = append(sn.positions, availability.Slot{Start: at, End: at.Add(typ.Duration)})
				var ids []uuid.UUID
				for _, id := range sps {
					if rng.IntN(4) > 0 {
						ids = append(ids, id)
					}
				}
				if len(ids) > 0 {
					sn.free[at.Unix()] = ids
				}
			}
		}
		start := monday.AddDate(0, 0, rng.IntN(6)-1).Add(minutes(5 * rng.IntN(150)))
		ev := holds.Event{Type: holds.EventConfirm, Hold: holds.Hold{HoldID: "h", ClinicID: clinic, SpecialistID: sps[rng.IntN(3)],
			AppointmentTypeID: uuid.New(), Start: start, End: start.Add(minutes(10 * (1 + rng.IntN(6))))}}
		// Half the time the booking comes from a known hold with buffers
		// of its own (another type's), else it is the view's type.
		if rng.IntN(2) == 0 {
			h := ev.Hold
			h.BufferBefore, h.BufferAfter = minutes(5*rng.IntN(5)), minutes(5*rng.IntN(5))
			sn.holds = []holds.Hold{h}
		} else {
			ev.AppointmentTypeID = sn.View.AppointmentTypeID
		}
		before, after := typ.BufferBefore, typ.BufferAfter
		if len(sn.holds) > 0 {
			before, after = sn.holds[0].BufferBefore, sn.holds[0].BufferAfter
		}
		want := availability.ApplyHolds(typ, sn.FreeOfBookings(), []availability.Busy{{SpecialistID: ev.SpecialistID,
			Start: ev.Start, End: ev.End, BufferBefore: before, BufferAfter: after}})

		got, ok := sn.Apply(ev)
		if !ok {
			t.Fatalf("round %d: the booking was not applied", round)
		}
		if g := got.FreeOfBookings(); !reflect.DeepEqual(normal(g), normal(want)) {
			t.Fatalf("round %d: type %+v, booking %s-%s (buffers %s/%s):\n got %v\nwant %v", round, typ, ev.Start, ev.End, before, after, g, want)
		}
		if len(got.Holds()) != 0 {
			t.Fatalf("round %d: the booked hold is still there", round)
		}
	}
}

// normal is slots with their specialist lists as plain slices (a slice's
// capacity aside), so equal lists compare equal.
func normal(sl []availability.Slot) []availability.Slot {
	out := make([]availability.Slot, len(sl))
	for i, s := range sl {
		out[i] = availability.Slot{Start: s.Start, End: s.End, SpecialistIDs: append([]uuid.UUID(nil), s.SpecialistIDs...)}
	}
	return out
}

// Holds applied from events, in any order, stand in the order a reading
// lists them, each with its owner as events name it: the owner's cells
// are "mine" though an event carries no client id, and a heartbeat of a
// hold replaces it in place. Lapsed leaves out the holds past their life.
func TestAppliedHoldsKeepTheReadingsOrderAndTheirOwners(t *testing.T) {
	clinic, typ := uuid.New(), uuid.New()
	sps := []uuid.UUID{uuid.New(), uuid.New()}
	start := time.Date(2030, 3, 4, 9, 0, 0, 0, time.UTC)
	now := start.Add(-time.Hour)
	var hs []holds.Hold
	for i := range 6 {
		at := start.Add(time.Duration(i%3) * 30 * time.Minute)
		hs = append(hs, holds.Hold{HoldID: fmt.Sprintf("h%d", i), ClinicID: clinic, AppointmentTypeID: typ, SpecialistID: sps[i%2],
			Start: at, End: at.Add(30 * time.Minute), ExpiresAt: now.Add(time.Duration(i+1) * time.Minute)})
	}
	client := func(h holds.Hold) string { return "client-" + h.HoldID }
	positions := []availability.Slot{{Start: start, End: start.Add(30 * time.Minute)}}
	rng := rand.New(rand.NewPCG(27, 11))
	for round := range 50 {
		sn := &Snapshot{View: View{AppointmentTypeID: typ}, ClinicID: clinic, positions: positions,
			free: map[int64][]uuid.UUID{start.Unix(): sps}}
		for _, i := range rng.Perm(len(hs)) {
			ev := holds.Event{Type: holds.EventHold, Hold: hs[i], ClientHash: holds.ClientHash(client(hs[i]))}
			if rng.IntN(2) == 0 {
				ev.Type = holds.EventHeartbeat
			}
			sn, _ = sn.Apply(ev)
			sn, _ = sn.Apply(ev) // heard again: nothing changes
		}
		want := slices.Clone(hs)
		slices.SortFunc(want, holdOrder)
		if !reflect.DeepEqual(sn.Holds(), want) {
			ids := func(hs []holds.Hold) (out []string) {
				for _, h := range hs {
					out = append(out, h.HoldID)
				}
				return out
			}
			t.Fatalf("round %d: holds in the order %v, a reading's is %v", round, ids(sn.Holds()), ids(want))
		}
		for i, h := range sn.Holds() {
			if sn.Owner(i) != holds.ClientHash(client(h)) || !sn.Personal(client(h)) {
				t.Fatalf("round %d: hold %s lost its owner", round, h.HoldID)
			}
		}
		if c := sn.Cells(client(want[0]))[0]; c.State != Mine || c.HoldID != want[0].HoldID {
			t.Fatalf("round %d: the owner of %s sees %+v", round, want[0].HoldID, c)
		}
		if c := sn.Cells("")[0]; c.State != Held {
			t.Fatalf("round %d: anyone sees %s at a time both specialists hold", round, c.State)
		}
		lapsed := sn.Lapsed(now.Add(3 * time.Minute))
		if len(lapsed.Holds()) != 3 || lapsed.Personal(client(hs[2])) || !lapsed.Personal(client(hs[3])) {
			t.Fatalf("round %d: after three lives ended %d holds are left", round, len(lapsed.Holds()))
		}
	}
}
