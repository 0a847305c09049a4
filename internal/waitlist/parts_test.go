package waitlist_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/waitlist"
)

// The parts of the day change at 12:00 and 17:00 local time; asking for
// none means any time.
func TestPartOf(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, time.November, 24, h, m, 0, 0, loc) }
	for _, tt := range []struct {
		at   time.Time
		want string
	}{
		{at(0, 0), waitlist.Morning}, {at(11, 59), waitlist.Morning},
		{at(12, 0), waitlist.Afternoon}, {at(16, 59), waitlist.Afternoon},
		{at(17, 0), waitlist.Evening}, {at(23, 59), waitlist.Evening},
	} {
		if got := waitlist.PartOf(tt.at); got != tt.want {
			t.Errorf("PartOf(%s) = %s, want %s", tt.at.Format("15:04"), got, tt.want)
		}
		if !waitlist.InParts(tt.at, nil) || !waitlist.InParts(tt.at, []string{tt.want}) {
			t.Errorf("%s is not in its own part or in any time", tt.at.Format("15:04"))
		}
	}
	if waitlist.InParts(at(12, 0), []string{waitlist.Morning, waitlist.Evening}) {
		t.Error("12:00 is in the morning or the evening")
	}
}

// A freed time is offered only to a patient who asked for its part of the
// day: an afternoon-only patient who joined first is passed over for an
// 11:30 opening and offered the 12:00 one, which is the afternoon's first
// minute (the database's match follows PartOf's boundaries).
func TestFreedTimeIsOfferedOnlyInThePartsAskedFor(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	morning, noon := r.at(3, 11, 30), r.at(3, 12, 0)
	early, late := r.book(t, morning, "early@example.org"), r.book(t, noon, "late@example.org")
	join := func(email string, part string) waitlist.Entry {
		t.Helper()
		day := morning.In(r.loc).Format(time.DateOnly)
		e, _, err := r.waitlist.Join(ctx, waitlist.JoinRequest{
			ClinicID: r.clinic.ID, AppointmentTypeID: r.clinic.Types[0].ID, From: day, To: day, Times: []string{part},
			Patient: booking.Patient{Name: "Waiting Patient", Email: email}, ClientID: "c-" + email, Language: "en",
		})
		if err != nil {
			t.Fatalf("join %s: %v", email, err)
		}
		r.confirm(t, e.ID)
		time.Sleep(2 * time.Millisecond) // joined in this order
		return e
	}
	pm, am := join("pm@example.org", waitlist.Afternoon), join("am@example.org", waitlist.Morning)

	r.cancel(t, early.Booking)
	opening, _ := r.opening(t, morning.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, pm.ID) + "|" + r.offersOf(t, am.ID); got != "|open" {
		t.Fatalf("offers of the 11:30 opening (afternoon|morning): %q, want the morning patient's only", got)
	}

	r.cancel(t, late.Booking)
	opening, _ = r.opening(t, noon.UTC())
	if err := r.waitlist.Step(ctx, opening, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if got := r.offersOf(t, pm.ID); got != "open" {
		t.Fatalf("offers of the 12:00 opening to the afternoon patient: %q, want open", got)
	}
}
