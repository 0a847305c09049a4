package privacy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/testkit"
)

// held is a clinic whose bookings have every kind of copy of their
// patients' details: messages with stored copies and queued jobs, manage
// links, idempotent answers, audit rows with a cancel reason.
type held struct {
	pool     *pgxpool.Pool
	clinic   testkit.Clinic
	bookings *booking.Service
	loc      *time.Location
	next     time.Time // the next free start
}

func newHeld(t *testing.T) *held {
	t.Helper()
	return newHeldOn(t, testkit.DB(t))
}

// newHeldOn makes the clinic in the database behind pool.
func newHeldOn(t *testing.T, pool *pgxpool.Pool) *held {
	t.Helper()
	h := &held{pool: pool, clinic: testkit.NewClinic(t, pool, testkit.ClinicOptions{})}
	h.loc = testkit.Zone(t, h.clinic.Timezone)
	// Without workers the outbox only writes: every message stays queued
	// with its job, as mail not yet sent would.
	ob, err := outbox.New(pool, outbox.Config{PublicURL: "http://clinic.test", Queue: "mail_" + strings.ReplaceAll(uuid.NewString(), "-", "")})
	if err != nil {
		t.Fatal(err)
	}
	h.bookings = booking.New(pool, booking.Options{TxHooks: []booking.TxHook{{Name: "e-mails", After: ob.Enqueue}}})
	h.next = testkit.NextWeekday(time.Now(), h.loc, time.Tuesday, 9, 0).AddDate(0, 0, 7)
	return h
}

// book books the patient at the next free time, with an idempotency key,
// and gives the booking a stored copy of each e-mail and a manage link.
func (h *held) book(t *testing.T, name, email, phone string) booking.Booking {
	t.Helper()
	ctx := context.Background()
	start := h.next
	h.next = h.next.Add(30 * time.Minute)
	c, err := h.bookings.Book(ctx, booking.BookRequest{
		AppointmentTypeID: h.clinic.Types[0].ID, SpecialistID: h.clinic.Specialists[0].ID, Start: start,
		Patient: booking.Patient{Name: name, Email: email, Phone: phone}, ClientID: "client-" + name,
		Actor: "staff:someone", ClinicID: h.clinic.ID, Language: "de",
		Remember: &booking.Remember{
			Key: idempotency.Key{ClinicID: h.clinic.ID, Principal: "client-" + name, Route: "book:x", Key: uuid.NewString(), RequestHash: []byte{1}},
			Encode: func(c booking.Confirmation) (int, []byte, error) {
				b, err := json.Marshal(c.Booking)
				return 201, b, err
			},
		},
	})
	if err != nil {
		t.Fatalf("book %s: %v", name, err)
	}
	h.exec(t, `INSERT INTO outbox_copies (message_id, clinic_id, recipient, subject, raw)
		SELECT id, clinic_id, recipient, 'Your booking', convert_to('To: ' || recipient || ' Dear ' || $2, 'UTF8')
		FROM messages WHERE booking_id = $1`, c.Booking.ID, name)
	h.exec(t, `INSERT INTO booking_links (token_hash, booking_id, clinic_id)
		SELECT decode(md5(random()::text) || md5(random()::text), 'hex'), id, clinic_id FROM bookings WHERE id = $1`, c.Booking.ID)
	return c.Booking
}

func (h *held) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := h.pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (h *held) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := h.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// scrub scrubs ids in a transaction of its own.
func (h *held) scrub(t *testing.T, ids ...uuid.UUID) privacy.Scrubbed {
	t.Helper()
	var s privacy.Scrubbed
	err := pgx.BeginFunc(context.Background(), h.pool, func(tx pgx.Tx) error {
		var err error
		s, err = privacy.Scrub(context.Background(), tx, h.clinic.ID, ids, time.Now())
		return err
	})
	if err != nil {
		t.Fatalf("scrub: %v", err)
	}
	return s
}

// traces counts the places that still hold text (a name, an address, a
// number) in the clinic's rows the scrub reaches.
func (h *held) traces(t *testing.T, text string) int {
	t.Helper()
	like := "%" + text + "%"
	return h.count(t, `SELECT
		(SELECT count(*) FROM bookings WHERE clinic_id = $1 AND (patient_name || patient_email || patient_phone
			|| patient_email_key || patient_phone_key || client_id || cancel_reason) ILIKE $2)
	  + (SELECT count(*) FROM messages WHERE clinic_id = $1 AND (recipient || reason || coalesce(recipient_key, '')) ILIKE $2)
	  + (SELECT count(*) FROM outbox_copies WHERE clinic_id = $1 AND (recipient || convert_from(raw, 'UTF8')) ILIKE $2)
	  + (SELECT count(*) FROM idempotency_keys WHERE clinic_id = $1 AND (principal || convert_from(body, 'UTF8')) ILIKE $2)
	  + (SELECT count(*) FROM audit_log WHERE clinic_id = $1 AND (coalesce(before::text, '') || coalesce(after::text, '') || reason) ILIKE $2)`,
		h.clinic.ID, like)
}

// wantTraces fails the test unless each text is held somewhere: the
// test's data is incomplete otherwise.
func (h *held) wantTraces(t *testing.T, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if h.traces(t, text) == 0 {
			t.Fatalf("before the scrub, nothing holds %q: the test's data is incomplete", text)
		}
	}
}

// jobsOf counts the send jobs of the booking's messages.
func (h *held) jobsOf(t *testing.T, id uuid.UUID) int {
	t.Helper()
	return h.count(t, `SELECT count(*) FROM river_job WHERE kind = 'send_message'
		AND args->>'message_id' IN (SELECT id::text FROM messages WHERE booking_id = $1)`, id)
}

func TestScrub(t *testing.T) {
	t.Parallel()
	h := newHeld(t)
	ctx := context.Background()
	a1 := h.book(t, "Agathe Scrubbed", "agathe.scrubbed@example.org", "+49 170 1111111")
	a2 := h.book(t, "Agathe Scrubbed", "agathe.scrubbed@example.org", "+49 170 1111111")
	kept := h.book(t, "Berta Kept", "berta.kept@example.org", "+49 170 2222222")
	if _, _, err := h.bookings.Cancel(ctx, booking.CancelRequest{BookingID: a2.ID, ClinicID: h.clinic.ID, Actor: "staff:someone", Reason: "Agathe is ill"}); err != nil {
		t.Fatal(err)
	}
	// A send under way: its job is left to its worker.
	h.exec(t, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now()
		WHERE id = (SELECT job_id FROM messages WHERE booking_id = $1 AND kind = 'confirmation')`, a1.ID)
	h.wantTraces(t, "Agathe", "agathe.scrubbed", "1111111", "Berta", "berta.kept")
	keptJobs := h.jobsOf(t, kept.ID)
	running := h.count(t, `SELECT job_id FROM messages WHERE booking_id = $1 AND kind = 'confirmation'`, a1.ID)

	got := h.scrub(t, a1.ID, a2.ID, uuid.New())

	t.Run("CountsEveryKind", func(t *testing.T) {
		// a1: confirmation, reminder; a2: the same and its cancellation,
		// which has no stored copy (the copies were made at booking). One
		// of a1's jobs is running.
		want := privacy.Scrubbed{Bookings: 2, Messages: 5, Copies: 4, Jobs: 4, Links: 2, Idempotency: 2, Audit: 3}
		if got != want {
			t.Fatalf("scrubbed %+v, want %+v", got, want)
		}
	})
	t.Run("NoTraceOfThePatient", func(t *testing.T) {
		for _, text := range []string{"Agathe", "agathe.scrubbed", "1111111", "client-Agathe"} {
			if n := h.traces(t, text); n != 0 {
				t.Errorf("%d rows still hold %q", n, text)
			}
		}
		if n := h.count(t, `SELECT count(*) FROM booking_links WHERE booking_id = ANY($1)`, []uuid.UUID{a1.ID, a2.ID}); n != 0 {
			t.Errorf("%d manage links left", n)
		}
	})
	t.Run("BookingKeepsItsFacts", func(t *testing.T) {
		var name, email, lang, status string
		var hash []byte
		var start time.Time
		var anonymised *time.Time
		err := h.pool.QueryRow(ctx, `SELECT patient_name, patient_email, language, status, manage_token_hash, slot_start, anonymised_at
			FROM bookings WHERE id = $1`, a2.ID).Scan(&name, &email, &lang, &status, &hash, &start, &anonymised)
		if err != nil {
			t.Fatal(err)
		}
		if name != privacy.Anonymous || email != "" || lang != "" || hash != nil || anonymised == nil {
			t.Errorf("scrubbed booking: name %q email %q language %q hash %x anonymised %v", name, email, lang, hash, anonymised)
		}
		if status != booking.StatusCancelled || !start.Equal(a2.Start) {
			t.Errorf("scrubbed booking: status %s start %v, want cancelled at %v", status, start, a2.Start)
		}
	})
	t.Run("AuditKeepsWhoDidWhat", func(t *testing.T) {
		rows := testkit.AuditRows(t, h.pool, "booking", a2.ID.String())
		if testkit.CountAction(rows, "booking.create") != 1 || testkit.CountAction(rows, "booking.cancel") != 1 {
			t.Fatalf("audit rows of the scrubbed booking: %+v", rows)
		}
		for _, r := range rows {
			if r.Actor != "staff:someone" || r.Reason != "" {
				t.Errorf("audit row %s: actor %q reason %q", r.Action, r.Actor, r.Reason)
			}
			if r.After != nil && !strings.Contains(string(r.After), `"status"`) {
				t.Errorf("audit row %s lost the booking's status: %s", r.Action, r.After)
			}
		}
	})
	t.Run("RunningJobLeftToItsWorker", func(t *testing.T) {
		if n := h.count(t, `SELECT count(*) FROM river_job WHERE id = $1 AND state = 'running'`, running); n != 1 {
			t.Errorf("the running job was deleted")
		}
	})
	t.Run("OtherPatientUntouched", func(t *testing.T) {
		for _, text := range []string{"Berta", "berta.kept", "2222222"} {
			if h.traces(t, text) == 0 {
				t.Errorf("the other patient's %q is gone", text)
			}
		}
		if n := h.jobsOf(t, kept.ID); n != keptJobs || n == 0 {
			t.Errorf("the other patient's jobs: %d, want %d", n, keptJobs)
		}
	})
	t.Run("SecondScrubChangesNothing", func(t *testing.T) {
		if again := h.scrub(t, a1.ID, a2.ID); !again.Zero() {
			t.Errorf("second scrub: %+v", again)
		}
	})
	t.Run("OtherClinicsBookingsIgnored", func(t *testing.T) {
		other := newHeld(t)
		if s := other.scrub(t, kept.ID); !s.Zero() {
			t.Errorf("another clinic's scrub of this clinic's booking: %+v", s)
		}
		if h.traces(t, "Berta") == 0 {
			t.Error("another clinic's scrub reached this clinic's booking")
		}
	})
}

// Two scrubs of the same bookings at once (the daily run and an erasure)
// take turns on the bookings' locks: neither fails, and between them they
// remove each row once.
func TestScrubTwiceAtOnce(t *testing.T) {
	t.Parallel()
	h := newHeld(t)
	var ids []uuid.UUID
	for i := range 6 {
		ids = append(ids, h.book(t, "Zoe Twice", "zoe.twice@example.org", "+49 170 333333"+string(rune('0'+i))).ID)
	}
	// In opposite orders, so that row-by-row locking would deadlock.
	rev := make([]uuid.UUID, len(ids))
	for i, id := range ids {
		rev[len(ids)-1-i] = id
	}
	var got [2]privacy.Scrubbed
	errs := testkit.Race(2, func(i int) error {
		return pgx.BeginFunc(context.Background(), h.pool, func(tx pgx.Tx) error {
			var err error
			got[i], err = privacy.Scrub(context.Background(), tx, h.clinic.ID, [][]uuid.UUID{ids, rev}[i], time.Now())
			return err
		})
	})
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("scrubs at once: %v", errs)
	}
	var sum privacy.Scrubbed
	sum.Add(got[0])
	sum.Add(got[1])
	if want := (privacy.Scrubbed{Bookings: 6, Messages: 12, Copies: 12, Jobs: 12, Links: 6, Idempotency: 6, Audit: 6}); sum != want {
		t.Errorf("between them %+v (%+v and %+v), want %+v", sum, got[0], got[1], want)
	}
	if n := h.traces(t, "zoe.twice"); n != 0 {
		t.Errorf("%d rows still hold the address", n)
	}
}
