package liveview

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// For a type that needs the clinic's one room, Room lets one claim of a
// time through however many specialists are free, and none (a claim may
// be refused from the view) once another client's hold of any type and
// specialist holds the room then.
//
// Guards the view's room count: without it Room answers 2 and then 2
// again, and the losers of the room go to Redis.
func TestViewRoomCountsTheRoomsFreeOfOthersHolds(t *testing.T) {
	t.Parallel()
	r := newRigOf(t, 10, 2)
	ctx := context.Background()
	var room uuid.UUID
	db := testkit.DB(t)
	if err := db.QueryRow(ctx, `INSERT INTO resources (clinic_id, name, kind) VALUES ($1, 'Sono 1', 'ultrasound') RETURNING id`, r.clinic.ID).Scan(&room); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO appointment_type_resources (clinic_id, appointment_type_id, resource_kind) VALUES ($1, $2, 'ultrasound')`,
		r.clinic.ID, r.clinic.Types[0].ID); err != nil {
		t.Fatal(err)
	}
	v := r.keep(t, r.week(0))
	sn, _ := v.Snapshot()
	p := sn.Positions()[0]
	now := r.clock()
	if free, _ := v.Room(p.Start, "anyone", now); free != 1 {
		t.Fatalf("room %d with two specialists and one room free, want 1", free)
	}
	ev := holds.Event{Type: holds.EventHold, ClientHash: "holder", Hold: holds.Hold{HoldID: "h-room", ClinicID: r.clinic.ID,
		AppointmentTypeID: uuid.New(), SpecialistID: uuid.New(), ResourceID: room, Start: p.Start, End: p.End, ExpiresAt: now.Add(10 * time.Minute)}}
	if err := r.holds.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	r.waitSeq(t, 1)
	if free, retry := v.Room(p.Start, "anyone", now); free != 0 || retry <= 0 {
		t.Fatalf("room %d (retry %s) with the one room held by another specialist's patient, want 0", free, retry)
	}
	if free, _ := v.Room(p.Start, "holder", now); free != 1 {
		t.Fatalf("the holder's own room %d, want 1", free)
	}
	if got := sn.Bookable(); len(got) == 0 {
		t.Fatal("no bookable slot before the hold")
	}
	after, _ := v.Snapshot()
	for _, sl := range after.Bookable() {
		if sl.Start.Equal(p.Start) {
			t.Fatalf("the held room's time is bookable: %+v", sl)
		}
	}
}
