package slots_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
)

// views records which clinics' live views were dropped.
type views []uuid.UUID

func (v *views) SetupChanged(clinicID uuid.UUID) { *v = append(*v, clinicID) }

// A change of zone retires the clinic's cached lists, drops this
// process's live views of it, tells its open pages through a calendar
// event, and forgets the bitmap days its bookings fell on in the old zone.
func TestSetupChangesOfAZone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sp := b.clinic.Specialists[0].ID
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	start, end := b.at(0, 10, 0), b.at(0, 10, 30)
	b.svc.Bitmap.Taken(ctx, london, b.clinic.ID, sp, start, end) // read into Redis
	b.svc.Bitmap.Mark(ctx, london, b.clinic.ID, sp, start, end)
	if taken, known := b.svc.Bitmap.Taken(ctx, london, b.clinic.ID, sp, start, end); !taken || !known {
		t.Fatalf("marked: taken=%v known=%v", taken, known)
	}
	gen := func() int64 {
		n, err := b.rdb.Get(ctx, slots.GenerationKey(b.clinic.ID)).Int64()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		return n
	}
	before := gen()
	sub := b.rdb.Subscribe(ctx, holds.ClinicChannel(b.clinic.ID))
	t.Cleanup(func() { _ = sub.Close() })
	if _, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	var seen views
	changes := slots.SetupChanges{Slots: b.svc, Views: &seen, Holds: holds.NewStore(b.rdb, 0, nil), Logger: quiet}
	changes.ZoneChanged(ctx, b.clinic.ID, clinics.SaveResult{
		ZoneChanged: true, OldZone: "Europe/London",
		Spans: []clinics.Span{{SpecialistID: sp, Start: start, End: end}},
	})

	if got := gen(); got != before+1 {
		t.Errorf("generation %d, want %d", got, before+1)
	}
	if len(seen) != 1 || seen[0] != b.clinic.ID {
		t.Errorf("live views dropped for %v, want the clinic's", seen)
	}
	msg, err := sub.ReceiveTimeout(ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ev holds.Event
	if m, ok := msg.(*redis.Message); !ok || json.Unmarshal([]byte(m.Payload), &ev) != nil || ev.Type != holds.EventCalendar || ev.ClinicID != b.clinic.ID {
		t.Errorf("published %#v, want a calendar event of the clinic", msg)
	}
	// Forgotten, the day is read again from the database, where nothing
	// is booked.
	if taken, _ := b.svc.Bitmap.Taken(ctx, london, b.clinic.ID, sp, start, end); taken {
		t.Error("the old zone's bitmap day outlived the change")
	}
}
