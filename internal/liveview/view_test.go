package liveview

import (
	"context"
	"testing"
	"time"

	"github.com/clinic/booking/internal/holds"
)

// Room counts the specialists no other client's hold stands in the way
// of; it is 0 (a claim may be refused) only when all are held by others,
// and 1 (Redis decides) for the holder itself and once the view is gone.
func TestViewRoomCountsTheSpecialistsFreeOfOthersHolds(t *testing.T) {
	t.Parallel()
	r := newRigOf(t, 10, 2)
	v := r.keep(t, r.week(0))
	sn, _ := v.Snapshot()
	p := sn.Positions()[0]
	now := r.clock()
	if free, _ := v.Room(p.Start, "anyone", now); free != 2 {
		t.Fatalf("room %d with both specialists free, want 2", free)
	}
	seq := uint64(0)
	for i, sp := range r.clinic.Specialists {
		ev := holds.Event{Type: holds.EventHold, ClientHash: "holder", Hold: holds.Hold{HoldID: "h" + sp.ID.String(), ClinicID: r.clinic.ID,
			AppointmentTypeID: r.clinic.Types[0].ID, SpecialistID: sp.ID, Start: p.Start, End: p.End, ExpiresAt: now.Add(10 * time.Minute)}}
		if err := r.holds.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		seq++
		r.waitSeq(t, seq)
		free, retry := v.Room(p.Start, "anyone", now)
		if want := 1 - i; free != want || (want == 0) != (retry > 0) {
			t.Fatalf("room %d (retry %s) with %d of 2 specialists held, want %d", free, retry, i+1, want)
		}
	}
	if free, _ := v.Room(p.Start, "holder", now); free != 1 {
		t.Fatalf("the holder's own room %d, want 1 (its re-click goes to Redis)", free)
	}
	if free, _ := v.Room(p.Start, "anyone", now.Add(2*time.Minute)); free != 1 {
		t.Fatalf("room %d in a view past its time, want 1", free)
	}
	r.s.DropAll(DropFailover)
	if free, _ := v.Room(p.Start, "anyone", now); free != 1 {
		t.Fatalf("room %d in a dropped view, want 1", free)
	}
}
