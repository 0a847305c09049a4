package outbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// A mail server that defers twice and then accepts gets the message
// exactly once.
func TestTemporaryRefusalsDeliverOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	r.smtp.RefuseNext(2, 451, "4.3.0 try again later")
	b := r.book(t, r.at(3, 10, 0), "ada@example.org")
	r.smtp.WaitFor(t, 1, 20*time.Second)
	m := r.waitStatus(t, r.messages(t, b.ID)[0].ID, "sent")
	if m.Attempts != 3 || r.smtp.Attempts() != 3 {
		t.Fatalf("%d attempts recorded, %d seen by the server; want 3", m.Attempts, r.smtp.Attempts())
	}
	// A retry after the accepted send (the job not completed) fails this.
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}

// A permanent refusal ends the tries at once, and the message says why.
func TestPermanentRefusalStops(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	r.smtp.RefuseNext(1, 550, "5.1.1 mailbox unavailable")
	b := r.book(t, r.at(3, 10, 0), "nobody@example.org")
	m := r.waitStatus(t, r.messages(t, b.ID)[0].ID, "failed")
	if !strings.Contains(m.LastError, "550") {
		t.Fatalf("failed with %q, want the server's 550", m.LastError)
	}
	// A 550 retried like a 451 fails this.
	r.drained(t)
	if n := r.smtp.Attempts(); n != 1 {
		t.Fatalf("%d attempts after a 550, want 1", n)
	}
	if state := r.jobState(t, m.JobID.Int64); state != "cancelled" {
		t.Fatalf("job is %s, want cancelled", state)
	}
}

// Reminders go out when the queue's clock reaches their time, not before;
// a booking made within the reminder's lead time gets none.
func TestReminderByClock(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{ownDB: true})
	start := r.at(3, 10, 0)
	b := r.book(t, start, "ada@example.org")
	r.smtp.WaitFor(t, 1, 20*time.Second)
	reminder := r.messages(t, b.ID)[1]
	if reminder.Kind != "reminder" {
		t.Fatalf("second message is %s", reminder.Kind)
	}
	soon := r.book(t, time.Now().Add(2*time.Hour).Truncate(time.Minute), "bea@example.org")
	if ms := r.messages(t, soon.ID); kinds(ms) != "confirmation:queued" && kinds(ms) != "confirmation:sending" && kinds(ms) != "confirmation:sent" {
		t.Fatalf("a booking two hours ahead has: %s", kinds(ms))
	}
	r.smtp.WaitFor(t, 2, 20*time.Second)
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 2 {
		t.Fatalf("%d e-mails before the reminder's time, want 2", n)
	}

	// A second before the reminder's time, a witness's reminder due half an
	// hour earlier goes out (so the queue has looked at this clock) and
	// Ada's does not; at its time it does. Fails if a reminder goes out
	// ahead of its send_at (scheduled early, or run before its time).
	witness := r.book(t, start.Add(-30*time.Minute), "cy@example.org")
	r.smtp.WaitFor(t, 3, 20*time.Second)
	due := start.Add(-24 * time.Hour)
	r.clock.Set(due.Add(-time.Second))
	r.waitStatus(t, r.messages(t, witness.ID)[1].ID, "sent")
	if m := r.messages(t, b.ID)[1]; m.Status != "queued" {
		t.Fatalf("Ada's reminder is %s a second before its time, want queued", m.Status)
	}
	if n := len(r.smtp.Messages()); n != 4 {
		t.Fatalf("%d e-mails a second before the reminder's time, want 4 (three confirmations, the witness's reminder)", n)
	}

	r.clock.Set(due)
	got := testkit.ParseReceived(t, r.smtp.WaitFor(t, 5, 30*time.Second)[4])
	if got.To != "ada@example.org" || !strings.Contains(got.Text, "10:00") {
		t.Fatalf("reminder to %s:\n%s", got.To, got.Text)
	}
	r.waitStatus(t, reminder.ID, "sent")
}

// Without a mail server the message is kept whole for the outbox page.
func TestWithoutMailServerKeepsCopy(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{noSMTP: true})
	b := r.book(t, r.at(3, 10, 0), "ada@example.org")
	m := r.waitStatus(t, r.messages(t, b.ID)[0].ID, "sent")
	reader := staff.User{ClinicID: r.clinic.ID, Role: staff.RoleReception}
	copies, err := r.outbox.Copies(context.Background(), reader)
	if err != nil || len(copies) != 1 || copies[0].MessageID != m.ID {
		t.Fatalf("copies %+v, %v", copies, err)
	}
	c, err := r.outbox.CopyOf(context.Background(), reader, m.ID)
	if err != nil || !strings.Contains(string(c.Raw), "BEGIN:VCALENDAR") && !strings.Contains(string(c.Raw), "text/calendar") {
		t.Fatalf("copy without its calendar: %v", err)
	}
	if len(r.smtp.Messages()) != 0 {
		t.Fatal("sent although no mail server is configured")
	}
}

// "Find my booking": a known address gets one list with a link per
// booking; an unknown one gets nothing, and is not kept.
func TestLookup(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	r.book(t, r.at(3, 10, 0), "ada@example.org")
	ctx := context.Background()
	second := r.request(r.at(4, 11, 0), "ada@example.org")
	second.Actor = "staff:" + uuid.NewString() // the type's cooldown binds patients only
	if _, err := r.bookings.Book(ctx, second); err != nil {
		t.Fatal(err)
	}
	r.smtp.WaitFor(t, 2, 20*time.Second)
	if err := r.outbox.RequestLookup(ctx, r.clinic.ID, "Ada@Example.org", "en"); err != nil {
		t.Fatal(err)
	}
	if err := r.outbox.RequestLookup(ctx, r.clinic.ID, "stranger@example.org", "en"); err != nil {
		t.Fatal(err)
	}
	got := testkit.ParseReceived(t, r.smtp.WaitFor(t, 3, 20*time.Second)[2])
	if links := manageLink.FindAllString(got.Text, -1); len(links) != 2 {
		t.Fatalf("list with %d links:\n%s", len(links), got.Text)
	}
	r.settle(t)
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 3 {
		t.Fatalf("%d e-mails, want 3 (nothing to the stranger)", n)
	}
	if n := r.count(t, `SELECT count(*) FROM messages WHERE recipient = 'stranger@example.org'`); n != 0 {
		t.Fatalf("the unknown address is kept in %d rows", n)
	}
}
