package liveview

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clinic/booking/internal/holds"
)

// What a live grid's update costs before its cells are rendered, when a
// hold comes: reading the week again (its slot lists and the clinic's
// holds, from Redis) against applying the hold's event to the snapshot
// kept in memory. Streams wait for this on every change:
//
//	go test -run '^$' -bench LiveGridUpdate -benchtime 2000x ./internal/liveview/
func BenchmarkLiveGridUpdate(b *testing.B) {
	r := newRigOf(b, 10, 2)
	ctx := context.Background()
	v := r.week(1)
	sn, err := r.grid.LiveSnapshot(ctx, v)
	if err != nil {
		b.Fatal(err)
	}
	at := sn.Positions()[3]
	h := holds.Hold{HoldID: "h-bench", ClinicID: r.clinic.ID, AppointmentTypeID: v.AppointmentTypeID,
		SpecialistID: r.clinic.Specialists[0].ID, Start: at.Start, End: at.End, ExpiresAt: time.Now().Add(time.Hour)}
	// Twenty live holds of other clients around the clinic, as in a rush.
	for i := range 20 {
		o := h
		o.HoldID, o.Start, o.End = fmt.Sprintf("h-other-%d", i), sn.Positions()[10+i].Start, sn.Positions()[10+i].End
		if sn, _ = sn.Apply(holds.Event{Type: holds.EventHold, Hold: o, ClientHash: holds.ClientHash("c" + o.HoldID)}); sn == nil {
			b.Fatal("a hold was not applied")
		}
	}
	ev := holds.Event{Type: holds.EventHold, Hold: h, ClientHash: holds.ClientHash("client")}
	b.Run("ReadAgain", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.grid.LiveSnapshot(ctx, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("InMemory", func(b *testing.B) {
		for b.Loop() {
			next, ok := sn.Apply(ev)
			if !ok {
				b.Fatal("not applied")
			}
			next.Lapsed(time.Now())
		}
	})
}
