package slots_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/slots"
)

// A booking committed on a primary that died before its answer came back
// was never announced: the cached lists do not know it. Once the server
// the lists are computed from has another name (a failover), none of the
// old lists is read again, in Redis or in this instance's memory.
func TestServerChangeRetiresCachedLists(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var server atomic.Value
	server.Store("primary-1")
	svc := slots.New(b.pool, b.rdb, slots.Options{Logger: quiet, Server: func() string { return server.Load().(string) }})
	// Booked behind the cache's back, as if its answer had been lost.
	unannounced := booking.NewService(b.pool)
	sp := b.clinic.Specialists[0].ID
	start := b.at(0, 10, 0)

	if sps := specialistsAt(free(t, svc, b.week()), start); !slices.Contains(sps, sp) {
		t.Fatalf("the specialist is not free at %s before the booking: %v", start, sps)
	}
	if _, err := unannounced.Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: b.clinic.Types[0].ID, SpecialistID: sp, Start: start,
		Patient: booking.Patient{Name: "Lost Answer", Email: "lost@example.org"},
	}); err != nil {
		t.Fatal(err)
	}
	if sps := specialistsAt(free(t, svc, b.week()), start); !slices.Contains(sps, sp) {
		t.Fatal("the list was not served from the cache: this test shows nothing")
	}

	server.Store("primary-2")
	svc.Retire()
	if sps := specialistsAt(free(t, svc, b.week()), start); slices.Contains(sps, sp) {
		t.Errorf("after the server changed, the specialist is still offered at %s", start)
	}
	// Another instance, which never held the list in memory, agrees.
	other := slots.New(b.pool, b.rdb, slots.Options{Logger: quiet, Server: func() string { return "primary-2" }})
	if sps := specialistsAt(free(t, other, b.week()), start); slices.Contains(sps, sp) {
		t.Errorf("another instance offers the booked specialist at %s", start)
	}
}
