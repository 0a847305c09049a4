package outbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

// After a clinic's time zone changes, its e-mails give times in the new
// zone: a booking confirmed at 10:00 Berlin time is cancelled, after the
// clinic moved to New York's zone, at the same instant told in New York's
// wall-clock time. Fails if an e-mail's zone comes from anywhere but the
// clinic as it is when the e-mail is composed (fixed at booking, or
// cached).
func TestEmailsAfterAZoneChangeNameTheNewZone(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	start := r.at(3, 10, 0)
	b := r.book(t, start, "ada@example.org")
	first := testkit.ParseReceived(t, r.smtp.WaitFor(t, 1, 20*time.Second)[0])
	if !strings.Contains(first.Text, "10:00") {
		t.Fatalf("the confirmation does not name 10:00:\n%s", first.Text)
	}

	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.pool.Exec(context.Background(), `UPDATE clinics SET timezone = 'America/New_York' WHERE id = $1`, r.clinic.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.bookings.Cancel(context.Background(), booking.CancelRequest{BookingID: b.ID, Actor: booking.ActorPatient}); err != nil {
		t.Fatal(err)
	}
	got := testkit.ParseReceived(t, r.smtp.WaitFor(t, 2, 20*time.Second)[1])
	want := start.In(ny).Format("15:04")
	if !strings.Contains(got.Text, want) || strings.Contains(got.Text, "10:00") ||
		!strings.Contains(got.Text, "New York time") || strings.Contains(got.Text, "Berlin time") {
		t.Fatalf("the cancellation after the zone change does not give the time as %s New York time:\n%s", want, got.Text)
	}
}
