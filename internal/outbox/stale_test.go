package outbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/testkit"
)

// A change notice a mail server deferred is not delivered after the
// booking moved again: the patient's last e-mail names their time.
func TestDeferredChangeNoticeOfAMovedBookingIsDropped(t *testing.T) {
	t.Parallel()
	// Retries a minute apart: the deferred notice cannot come back before
	// the second move, however slow the machine; the test then brings its
	// retry forward (runDue). Fails if a deferred notice's retry does not
	// drop a notice its booking has outlived.
	r := newRig(t, rigOptions{retry: outbox.Retry{Base: time.Minute, Max: time.Minute, Attempts: 5}})
	a := r.book(t, r.at(3, 10, 0), "ada@example.org")
	r.smtp.WaitFor(t, 1, 20*time.Second)
	ctx := context.Background()
	r.smtp.RefuseNext(1, 451, "4.3.0 try again later")
	b, err := r.bookings.Reschedule(ctx, booking.RescheduleRequest{BookingID: a.ID, Start: r.at(4, 11, 0), Actor: booking.ActorPatient})
	if err != nil {
		t.Fatal(err)
	}
	deferred := r.waitStatus(t, r.messages(t, b.ID)[0].ID, "retrying")
	if _, err := r.bookings.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.ID, Start: r.at(5, 15, 0), Actor: booking.ActorPatient}); err != nil {
		t.Fatal(err)
	}
	got := testkit.ParseReceived(t, r.smtp.WaitFor(t, 2, 20*time.Second)[1])
	if !strings.Contains(got.Text, "15:00") {
		t.Fatalf("the notice of the last move does not name 15:00:\n%s", got.Text)
	}
	r.settle(t)
	r.runDue(t, deferred.JobID.Int64)
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 2 {
		t.Fatalf("%d e-mails, want 2 (the confirmation and the last move's notice)", n)
	}
	if ms := r.messages(t, b.ID); !strings.Contains(kinds(ms), "change:cancelled") {
		t.Fatalf("the deferred notice is %s", kinds(ms))
	}
}

// A confirmation a mail server deferred is not delivered after the
// booking was cancelled: the cancellation is the last word.
func TestDeferredConfirmationOfACancelledBookingIsDropped(t *testing.T) {
	t.Parallel()
	// As above: retries a minute apart, the retry brought forward by hand.
	r := newRig(t, rigOptions{retry: outbox.Retry{Base: time.Minute, Max: time.Minute, Attempts: 5}})
	r.smtp.RefuseNext(1, 451, "4.3.0 try again later")
	a := r.book(t, r.at(3, 10, 0), "ada@example.org")
	deferred := r.waitStatus(t, r.messages(t, a.ID)[0].ID, "retrying")
	if _, _, err := r.bookings.Cancel(context.Background(), booking.CancelRequest{BookingID: a.ID, Actor: booking.ActorPatient}); err != nil {
		t.Fatal(err)
	}
	got := testkit.ParseReceived(t, r.smtp.WaitFor(t, 1, 20*time.Second)[0])
	r.settle(t)
	r.runDue(t, deferred.JobID.Int64)
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 1 {
		t.Fatalf("%d e-mails after a cancel, want only the cancellation", n)
	}
	if kinds(r.messages(t, a.ID)) != "confirmation:cancelled reminder:cancelled cancellation:sent" {
		t.Fatalf("messages: %s (last e-mail %q)", kinds(r.messages(t, a.ID)), got.Subject)
	}
}

// A reminder that comes due only after its appointment began (the queue
// was stopped, say) is not sent.
func TestReminderAfterTheStartIsDropped(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{ownDB: true})
	start := r.at(3, 10, 0)
	b := r.book(t, start, "ada@example.org")
	r.smtp.WaitFor(t, 1, 20*time.Second)
	reminder := r.messages(t, b.ID)[1]
	r.clock.Set(start.Add(time.Hour))
	r.waitStatus(t, reminder.ID, "cancelled")
	if n := len(r.smtp.Messages()); n != 1 {
		t.Fatalf("%d e-mails, want only the confirmation", n)
	}
}

// When PostgreSQL cannot record that the mail server took a message, the
// job gives up instead of sending it again.
func TestAcceptedButNotRecordedIsNotSentAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{ownDB: true})
	outbox.SetRecordFor(r.outbox, 300*time.Millisecond)
	ctx := context.Background()
	if _, err := r.pool.Exec(ctx, `
CREATE FUNCTION refuse_sent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'sent' AND NEW.kind = 'confirmation' THEN
    RAISE EXCEPTION 'the database is away';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER refuse_sent BEFORE UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION refuse_sent();`); err != nil {
		t.Fatal(err)
	}
	b := r.book(t, r.at(3, 10, 0), "ada@example.org")
	r.smtp.WaitFor(t, 1, 20*time.Second)
	m := r.messages(t, b.ID)[0]
	deadline := time.Now().Add(20 * time.Second)
	for r.jobState(t, m.JobID.Int64) != "cancelled" {
		if time.Now().After(deadline) {
			t.Fatalf("job is %s, want cancelled", r.jobState(t, m.JobID.Int64))
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 1 {
		t.Fatalf("%d copies sent, want 1", n)
	}
	if got := r.waitStatus(t, m.ID, "sending"); got.Attempts != 1 {
		t.Fatalf("%d attempts", got.Attempts)
	}
}
