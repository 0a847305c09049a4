package outbox_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

var manageLink = regexp.MustCompile(`http://clinic\.test/manage/([A-Za-z0-9_-]+)`)

// A booking sends one confirmation: the manage link in it opens the
// booking, the .ics starts at the booked instant; its reminder waits for
// the type's time before the start.
func TestConfirmationOnceWithCalendarAndReminder(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	start := r.at(3, 10, 0)
	b := r.book(t, start, "ada@example.org")

	got := testkit.ParseReceived(t, r.smtp.WaitFor(t, 1, 20*time.Second)[0])
	if got.To != "ada@example.org" || !strings.Contains(got.Subject, "10:00") {
		t.Fatalf("confirmation to %q, subject %q", got.To, got.Subject)
	}
	ics := string(got.Attachments["appointment.ics"])
	if want := "DTSTART:" + start.UTC().Format("20060102T150405Z"); !strings.Contains(ics, want) {
		t.Fatalf(".ics without %s:\n%s", want, ics)
	}
	m := manageLink.FindStringSubmatch(got.Text)
	if m == nil {
		t.Fatalf("no manage link in:\n%s", got.Text)
	}
	opened, err := r.bookings.ByManageToken(context.Background(), m[1])
	if err != nil || opened.ID != b.ID {
		t.Fatalf("the e-mail's link opens %v, %v; want booking %s", opened.ID, err, b.ID)
	}

	r.settle(t)
	ms := r.messages(t, b.ID)
	if kinds(ms) != "confirmation:sent reminder:queued" {
		t.Fatalf("messages: %s", kinds(ms))
	}
	if ms[0].AcceptedAt == nil || ms[0].Attempts != 1 {
		t.Fatalf("confirmation accepted at %v after %d attempts", ms[0].AcceptedAt, ms[0].Attempts)
	}
	if want := start.Add(-24 * time.Hour); !ms[1].SendAt.Equal(want) {
		t.Fatalf("reminder at %s, want %s", ms[1].SendAt, want)
	}
	if at := r.jobScheduledAt(t, ms[1].JobID.Int64); !at.Equal(start.Add(-24 * time.Hour)) {
		t.Fatalf("reminder job scheduled at %s", at)
	}
	// A second send (the job run twice, or enqueued twice) fails this.
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
}

// Patients racing for one slot: one booking, one confirmation; the
// bookings that lost rolled back with their e-mails.
func TestLostRaceSendsNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	start := r.at(4, 11, 0)
	const racers = 8
	reqs := make([]booking.BookRequest, racers)
	for i := range racers {
		reqs[i] = r.request(start, "racer"+string(rune('a'+i))+"@example.org")
	}
	var (
		mu    sync.Mutex
		won   []uuid.UUID
		taken int
	)
	testkit.Together(racers, func(i int) {
		c, err := r.bookings.Book(context.Background(), reqs[i])
		mu.Lock()
		defer mu.Unlock()
		switch ae := apperr.As(err); {
		case err == nil:
			won = append(won, c.Booking.ID)
		case ae != nil && ae.Code == apperr.CodeSlotTaken:
			taken++
		default:
			t.Errorf("book: %v", err)
		}
	})
	if len(won) != 1 || taken != racers-1 {
		t.Fatalf("%d won, %d lost; want 1 and %d", len(won), taken, racers-1)
	}
	r.smtp.WaitFor(t, 1, 20*time.Second)
	r.settle(t)
	// A lost race's e-mail left behind (enqueued outside the booking's
	// transaction) fails this.
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 1 {
		t.Fatalf("%d e-mails, want 1", n)
	}
	if n := r.count(t, `SELECT count(*) FROM messages WHERE clinic_id = $1 AND kind = 'confirmation'`, r.clinic.ID); n != 1 {
		t.Fatalf("%d confirmations written, want 1", n)
	}
}

// A move by staff sends one change notice with both times and the reason;
// the reminder follows the new time.
func TestMoveSendsChangeAndMovesReminder(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	old := r.book(t, r.at(3, 10, 0), "ada@example.org")
	r.smtp.WaitFor(t, 1, 20*time.Second)
	newStart := r.at(5, 14, 30)
	nb, err := r.bookings.Reschedule(context.Background(), booking.RescheduleRequest{
		BookingID: old.ID, Start: newStart, Actor: "staff:" + uuid.NewString(), Reason: "Dr. Weber is away",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := testkit.ParseReceived(t, r.smtp.WaitFor(t, 2, 20*time.Second)[1])
	for _, want := range []string{"10:00", "14:30", "Dr. Weber is away"} {
		if !strings.Contains(got.Text, want) {
			t.Fatalf("change notice without %q:\n%s", want, got.Text)
		}
	}
	if m := manageLink.FindStringSubmatch(got.Text); m == nil {
		t.Fatal("change notice without a manage link")
	} else if b, err := r.bookings.ByManageToken(context.Background(), m[1]); err != nil || b.ID != nb.ID {
		t.Fatalf("its link opens %v, %v; want the new booking", b.ID, err)
	}
	r.settle(t)
	oldMs := r.messages(t, old.ID)
	if kinds(oldMs) != "confirmation:sent reminder:cancelled change:sent" {
		t.Fatalf("old booking's messages: %s", kinds(oldMs))
	}
	if state := r.jobState(t, oldMs[1].JobID.Int64); state != "cancelled" {
		t.Fatalf("old reminder's job is %s", state)
	}
	newMs := r.messages(t, nb.ID)
	if kinds(newMs) != "change:sent reminder:queued" || !newMs[1].SendAt.Equal(newStart.Add(-24*time.Hour)) {
		t.Fatalf("new booking's messages: %s, reminder at %s", kinds(newMs), newMs[len(newMs)-1].SendAt)
	}
	// A reminder or confirmation of the old booking sent after the move
	// fails this.
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 2 {
		t.Fatalf("%d e-mails, want 2", n)
	}
}

// A cancellation sends its notice (with staff's reason; a patient's own
// gives none) and takes the reminder away.
func TestCancelSendsNoticeAndDropsReminder(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	byStaff := r.book(t, r.at(3, 9, 0), "ada@example.org")
	byPatient := r.book(t, r.at(3, 12, 0), "bea@example.org")
	r.smtp.WaitFor(t, 2, 20*time.Second)
	ctx := context.Background()
	if _, _, err := r.bookings.Cancel(ctx, booking.CancelRequest{BookingID: byStaff.ID, Actor: "staff:" + uuid.NewString(), Reason: "Clinic closed"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.bookings.Cancel(ctx, booking.CancelRequest{BookingID: byPatient.ID, Actor: booking.ActorPatient, Reason: "private note"}); err != nil {
		t.Fatal(err)
	}
	all := r.smtp.WaitFor(t, 4, 20*time.Second)
	byTo := map[string]testkit.ParsedMail{}
	for _, m := range all[2:] {
		p := testkit.ParseReceived(t, m)
		byTo[p.To] = p
	}
	if !strings.Contains(byTo["ada@example.org"].Text, "Clinic closed") {
		t.Fatalf("staff's cancellation without its reason:\n%s", byTo["ada@example.org"].Text)
	}
	if strings.Contains(byTo["bea@example.org"].Text, "private note") {
		t.Fatal("a patient's own cancellation repeats their reason")
	}
	r.settle(t)
	for _, b := range []booking.Booking{byStaff, byPatient} {
		ms := r.messages(t, b.ID)
		if kinds(ms) != "confirmation:sent reminder:cancelled cancellation:sent" {
			t.Fatalf("messages: %s", kinds(ms))
		}
		if state := r.jobState(t, ms[1].JobID.Int64); state != "cancelled" {
			t.Fatalf("reminder's job is %s", state)
		}
	}
}
