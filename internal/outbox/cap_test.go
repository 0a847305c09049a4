package outbox_test

// The cap on e-mails public requests cause to one address: counted when
// sent, by every worker at once; past it held back, never sent; staff's
// mail and reminders never held back; one clinic's and the server's.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// capClinic is a clinic with n types without a cooldown, whose reminders
// come lead minutes before the start (0: the types' default day). A loop
// of bookings with one address is the point: each booking takes a type of
// its own, so that no rule of the cooldown stops the loop before the cap.
func capClinic(t *testing.T, r *rig, lead, n int) testkit.Clinic {
	t.Helper()
	types := make([]db.AppointmentTypeInsertParams, n)
	for i := range types {
		types[i] = db.AppointmentTypeInsertParams{Name: fmt.Sprintf("Consultation %d", i+1), DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60}
		if lead > 0 {
			types[i].ReminderMin = pgtype.Int4{Int32: int32(lead), Valid: true}
		}
	}
	return testkit.NewClinic(t, r.pool, testkit.ClinicOptions{Specialists: 1, Types: types})
}

// bookAt books the n-th slot of clinic c (slot) with its n-th type (of
// those there are) for email, as actor.
func (r *rig) bookAt(t *testing.T, c testkit.Clinic, n int, email, actor string) booking.Booking {
	t.Helper()
	conf, err := r.bookings.Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: c.Types[n%len(c.Types)].ID, SpecialistID: c.Specialists[0].ID, Start: slot(c, n),
		Patient: booking.Patient{Name: "Vic Tim", Email: email}, Actor: actor, Language: "en",
	})
	if err != nil {
		t.Fatalf("book slot %d: %v", n, err)
	}
	return conf.Booking
}

// slot is the n-th half hour (n below 80) of the clinic's opening hours
// from the next Monday on, 9:00 to 17:00.
func slot(c testkit.Clinic, n int) time.Time {
	loc, _ := time.LoadLocation(c.Timezone)
	const perDay = 16
	day := testkit.NextWeekday(time.Now(), loc, time.Monday, 9, 0).AddDate(0, 0, n/perDay)
	return day.Add(time.Duration(n%perDay) * 30 * time.Minute)
}

// delivered are the e-mails the SMTP server accepted for email, in any
// spelling of it.
func delivered(r *rig, email string) []testkit.Received {
	var out []testkit.Received
	for _, m := range r.smtp.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, email) {
				out = append(out, m)
			}
		}
	}
	return out
}

// messagesAt are the rows of a booking's messages at clinic c.
func (r *rig) messagesAt(t *testing.T, c testkit.Clinic, bookingID uuid.UUID) []db.Message {
	t.Helper()
	rows, err := db.New(r.pool).MessageListByBooking(context.Background(), db.MessageListByBookingParams{
		ClinicID: c.ID, BookingID: uuid.NullUUID{UUID: bookingID, Valid: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func (r *rig) statuses(t *testing.T, clinicID uuid.UUID, email string) map[string]int {
	t.Helper()
	rows, err := r.pool.Query(context.Background(), `SELECT status, count(*) FROM messages
		WHERE clinic_id = $1 AND lower(recipient) = lower($2) GROUP BY status`, clinicID, email)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

// The e-mail bombing loop (book with the victim's address, cancel with
// the booking's own rights, again and again, all at once, in several
// spellings of the address) gets the victim at most the default cap of
// e-mails; the rest are held back, counted by the metric, never sent.
// Eight workers count at once: fails if the count and the place are not
// taken under one lock.
func TestCapHoldsBackTheBookCancelLoop(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{workers: 8, cap: &outbox.Cap{}})
	const cycles = 12
	c := capClinic(t, r, 0, cycles)
	victim := "victim-" + uuid.NewString()[:8] + "@example.org"
	spellings := []string{victim, strings.ToUpper(victim), " " + victim}
	testkit.Together(cycles, func(i int) {
		ctx := context.Background()
		conf, err := r.bookings.Book(ctx, booking.BookRequest{
			AppointmentTypeID: c.Types[i].ID, SpecialistID: c.Specialists[0].ID, Start: slot(c, i),
			Patient: booking.Patient{Name: "Vic Tim", Email: strings.TrimSpace(spellings[i%len(spellings)])}, Actor: booking.ActorPatient, Language: "en",
		})
		if err != nil {
			t.Errorf("cycle %d: book: %v", i, err)
			return
		}
		if _, _, err := r.bookings.Cancel(ctx, booking.CancelRequest{BookingID: conf.Booking.ID, Actor: booking.ActorPatient}); err != nil {
			t.Errorf("cycle %d: cancel: %v", i, err)
		}
	})
	r.drained(t)

	if n := len(delivered(r, victim)); n != outbox.DefaultPerRecipient {
		t.Fatalf("the victim got %d e-mails, want %d", n, outbox.DefaultPerRecipient)
	}
	st := r.statuses(t, c.ID, victim)
	if st["sent"] != outbox.DefaultPerRecipient || st["held"] == 0 || st["queued"]+st["sending"]+st["retrying"] != 0 {
		t.Fatalf("messages by status: %v", st)
	}
	if got := r.outbox.HeldCounts()[outbox.ScopeClinic]; got != int64(st["held"]) {
		t.Errorf("the metric counts %d held back, the rows %d", got, st["held"])
	}
	var reason string
	if err := r.pool.QueryRow(context.Background(), `SELECT last_error FROM messages WHERE clinic_id = $1 AND status = 'held' LIMIT 1`, c.ID).Scan(&reason); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reason, "MAILS_PER_RECIPIENT") || strings.Contains(reason, "@") {
		t.Errorf("a held message's reason reads %q", reason)
	}
	// Held back is final: the queue does not run it again.
	time.Sleep(300 * time.Millisecond)
	r.drained(t)
	if n := len(delivered(r, victim)); n != outbox.DefaultPerRecipient {
		t.Fatalf("the victim got %d e-mails after a while, want %d", n, outbox.DefaultPerRecipient)
	}
}

// Past the cap, a booking staff make and its cancellation (with the
// reason staff gave), and a patient's reminder, still go out; another
// address is not held back by the victim's count.
func TestCapNeverHoldsStaffMailOrReminders(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{ownDB: true, cap: &outbox.Cap{PerClinic: 1}})
	first := slot(r.clinic, 0)
	// The reminder comes a minute or two from now.
	c := capClinic(t, r, int(time.Until(first)/time.Minute)-1, 4)
	email := "capped-" + uuid.NewString()[:8] + "@example.org"
	withReminder := r.bookAt(t, c, 0, email, booking.ActorPatient) // the one place
	r.smtp.WaitFor(t, 1, 20*time.Second)
	held := r.bookAt(t, c, 1, email, booking.ActorPatient)
	r.waitStatus(t, r.messagesAt(t, c, held.ID)[0].ID, "held")

	desk := "staff:desk@clinic.test"
	byStaff := r.bookAt(t, c, 2, email, desk)
	r.smtp.WaitFor(t, 2, 20*time.Second) // a cancel would take the confirmation back
	if _, _, err := r.bookings.Cancel(context.Background(), booking.CancelRequest{BookingID: byStaff.ID, Actor: desk, Reason: "Dr. Weber is away"}); err != nil {
		t.Fatal(err)
	}
	other := "other-" + uuid.NewString()[:8] + "@example.org"
	r.bookAt(t, c, 3, other, booking.ActorPatient)
	r.smtp.WaitFor(t, 4, 20*time.Second)

	reminder := r.messagesAt(t, c, withReminder.ID)[1]
	if reminder.Kind != "reminder" {
		t.Fatalf("the second message is a %s", reminder.Kind)
	}
	r.clock.Set(reminder.SendAt)
	r.waitStatus(t, reminder.ID, "sent")
	r.drained(t)

	var texts []string
	for _, m := range delivered(r, email) {
		p := testkit.ParseReceived(t, m)
		texts = append(texts, p.Subject)
		if strings.Contains(p.Subject, "cancelled") && !strings.Contains(p.Text, "Dr. Weber is away") {
			t.Errorf("staff's cancellation lacks their reason:\n%s", p.Text)
		}
	}
	if len(texts) != 4 {
		t.Fatalf("the capped address got %d e-mails, want 4 (its one public confirmation, staff's booking and cancel, the reminder): %q", len(texts), texts)
	}
	if n := len(delivered(r, other)); n != 1 {
		t.Errorf("another address got %d e-mails, want 1", n)
	}
}

// One address's e-mails from every clinic of the server count together:
// past the server's cap a clinic that sent it nothing yet holds back too.
func TestCapAcrossClinics(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{cap: &outbox.Cap{PerClinic: 3, Server: 4}})
	a, b := capClinic(t, r, 0, 3), capClinic(t, r, 0, 3)
	email := "both-" + uuid.NewString()[:8] + "@example.org"
	for i := range 3 {
		r.bookAt(t, a, i, email, booking.ActorPatient)
	}
	r.smtp.WaitFor(t, 3, 20*time.Second)
	var last booking.Booking
	for i := range 3 {
		last = r.bookAt(t, b, i, email, booking.ActorPatient)
	}
	r.waitStatus(t, r.messagesAt(t, b, last.ID)[0].ID, "held")
	r.drained(t)
	if n := len(delivered(r, email)); n != 4 {
		t.Fatalf("the address got %d e-mails from two clinics, want the server's cap of 4", n)
	}
	if st := r.statuses(t, b.ID, email); st["sent"] != 1 || st["held"] != 2 {
		t.Fatalf("the second clinic's messages: %v", st)
	}
	if n := r.outbox.HeldCounts()[outbox.ScopeServer]; n != 2 {
		t.Errorf("the metric counts %d held back by the server's cap, want 2", n)
	}
	var reason string
	if err := r.pool.QueryRow(context.Background(), `SELECT last_error FROM messages WHERE clinic_id = $1 AND status = 'held' LIMIT 1`, b.ID).Scan(&reason); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reason, "MAILS_PER_RECIPIENT_SERVER") {
		t.Errorf("the reason %q does not name the server's cap", reason)
	}
}

// What the outbox is told of a change made by anyone but a staff member
// never carries the reason they typed; staff's reasons do.
func TestOnlyStaffReasonsAreWritten(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	ctx := context.Background()
	desk := staff.User{Email: "desk@clinic.test", ClinicID: r.clinic.ID, Role: staff.RoleStaff}.Actor()
	for i, actor := range []string{booking.ActorPatient, "", "api", desk} {
		email := fmt.Sprintf("reason%d-%s@example.org", i, uuid.NewString()[:8])
		b := r.bookAt(t, r.clinic, 2*i, email, booking.ActorPatient)
		reason := "pay at https://evil.example/pay"
		if _, _, err := r.bookings.Cancel(ctx, booking.CancelRequest{BookingID: b.ID, Actor: actor, Reason: reason}); err != nil {
			t.Fatal(err)
		}
		ms := r.messages(t, b.ID)
		got := ms[len(ms)-1]
		byStaff := actor == desk
		if got.Kind != "cancellation" || (got.Reason == reason) != byStaff {
			t.Errorf("actor %q: the %s notice keeps the reason %q", actor, got.Kind, got.Reason)
		}
		if want := map[bool]string{true: outbox.CauseStaff, false: outbox.CausePublic}[byStaff]; got.Cause != want {
			t.Errorf("actor %q: cause %q, want %q", actor, got.Cause, want)
		}
	}
}

// A lookup is public: past the cap the list is held back like any other
// public e-mail. The metric by kind still counts every lookup as handled,
// so it tells nothing of whether an address had bookings.
func TestCapHoldsBackALookup(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{cap: &outbox.Cap{PerClinic: 1}})
	email := "looked-up-" + uuid.NewString()[:8] + "@example.org"
	b := r.bookAt(t, r.clinic, 0, email, booking.ActorPatient)
	r.waitStatus(t, r.messagesAt(t, r.clinic, b.ID)[0].ID, "sent")
	ctx := context.Background()
	if err := r.outbox.RequestLookup(ctx, r.clinic.ID, strings.ToUpper(email), "en"); err != nil {
		t.Fatal(err)
	}
	var id uuid.UUID
	if err := r.pool.QueryRow(ctx, `SELECT id FROM messages WHERE kind = 'lookup' AND clinic_id = $1`, r.clinic.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, id, "held")
	r.drained(t)
	if n := len(delivered(r, email)); n != 1 {
		t.Fatalf("the address got %d e-mails, want its one confirmation", n)
	}
	counts := r.outbox.Counts()
	if counts[[2]string{outbox.KindLookup, "handled"}] != 1 || counts[[2]string{outbox.KindLookup, "held"}] != 0 {
		t.Errorf("lookups by outcome: handled %d, held %d; want 1 and 0",
			counts[[2]string{outbox.KindLookup, "handled"}], counts[[2]string{outbox.KindLookup, "held"}])
	}
}
