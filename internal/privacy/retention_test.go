package privacy_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/testkit"
)

// freshPool is a migrated database of the test's own: a run over every
// clinic with a clock a year ahead would reach the other tests' clinics.
func freshPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := postgres.ConnectMigrated(ctx, testkit.FreshDB(t), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// clinicReport is the run's report of h's clinic.
func clinicReport(t *testing.T, rep privacy.Report, h *held) privacy.ClinicReport {
	t.Helper()
	for _, c := range rep.Clinics {
		if c.Slug == h.clinic.Slug {
			return c
		}
	}
	t.Fatalf("no report of %s in %+v", h.clinic.Slug, rep)
	return privacy.ClinicReport{}
}

func anonymised(t *testing.T, h *held, id uuid.UUID) bool {
	t.Helper()
	return h.count(t, `SELECT count(*) FROM bookings WHERE id = $1 AND anonymised_at IS NOT NULL`, id) == 1
}

// place puts a waitlist place of h's clinic whose last day is last.
func (h *held) place(t *testing.T, last time.Time, state string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	h.exec(t, `INSERT INTO waitlist_entries (id, clinic_id, appointment_type_id, from_date, to_date, patient_name, patient_email, state, confirmed_at)
		VALUES ($1, $2, $3, $4::date - 7, $4::date, 'Wanda Waiting', $6, $5, now())`,
		id, h.clinic.ID, h.clinic.Types[0].ID, last.Format(time.DateOnly), state, "wanda-"+id.String()+"@example.org")
	return id
}

func TestRetentionRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := freshPool(t)
	a, b, c := newHeldOn(t, pool), newHeldOn(t, pool), newHeldOn(t, pool)
	b.exec(t, `UPDATE clinics SET retention_months = 3 WHERE id = $1`, b.clinic.ID)
	c.exec(t, `UPDATE clinics SET retention_months = 24 WHERE id = $1`, c.clinic.ID)
	a1 := a.book(t, "Anna Old", "anna.old@example.org", "")
	a2 := a.book(t, "Anton Recent", "anton.recent@example.org", "")
	b1 := b.book(t, "Bruno Short", "bruno@example.org", "")
	c1 := c.book(t, "Clara Long", "clara@example.org", "")

	// The clock stands where clinic a's year (12 months in its zone) ended
	// a minute before a2's end: a1 ended 31 minutes past it, a2 is one
	// minute inside it.
	now := a2.End.Add(-time.Minute).In(a.loc).AddDate(0, 12, 0)
	clock := &testkit.Clock{}
	clock.Set(now)
	r := privacy.NewRetention(pool, privacy.RetentionConfig{Now: clock.Now})

	// Clinic a's mail: one stored copy a minute past the 30 days, one a
	// minute inside; a mail server's answer quoting the address; a list of
	// bookings sent on request; two finished jobs either side of the
	// period.
	mailCutoff := now.AddDate(0, 0, -30)
	a.exec(t, `UPDATE outbox_copies SET created_at = $2 WHERE message_id = (SELECT id FROM messages WHERE booking_id = $1 AND kind = 'confirmation')`, a2.ID, mailCutoff.Add(-time.Minute))
	a.exec(t, `UPDATE outbox_copies SET created_at = $2 WHERE message_id = (SELECT id FROM messages WHERE booking_id = $1 AND kind = 'reminder')`, a2.ID, mailCutoff.Add(time.Minute))
	a.exec(t, `UPDATE messages SET status = 'failed', last_error = '550 anton.recent@example.org unknown', updated_at = $2 WHERE booking_id = $1 AND kind = 'confirmation'`, a2.ID, mailCutoff.Add(-time.Minute))
	a.exec(t, `INSERT INTO messages (id, clinic_id, kind, recipient, status, send_at, updated_at) VALUES
		($1, $3, 'lookup', 'anton.recent@example.org', 'sent', $4, $4), ($2, $3, 'lookup', 'anton.recent@example.org', 'sent', $5, $5)`,
		uuid.New(), uuid.New(), a.clinic.ID, mailCutoff.Add(-time.Minute), mailCutoff.Add(time.Minute))
	a.exec(t, `UPDATE river_job SET state = 'completed', attempt = 1, attempted_at = $2, finalized_at = $2
		WHERE id = (SELECT job_id FROM messages WHERE booking_id = $1 AND kind = 'confirmation')`, a2.ID, mailCutoff.Add(-time.Minute))
	a.exec(t, `UPDATE river_job SET state = 'completed', attempt = 1, attempted_at = $2, finalized_at = $2
		WHERE id = (SELECT job_id FROM messages WHERE booking_id = $1 AND kind = 'reminder')`, a2.ID, mailCutoff.Add(time.Minute))

	// Waitlist places: last days yesterday (ended, and still waiting),
	// today, and yesterday with a time offered now.
	today := now.In(a.loc)
	gone := a.place(t, today.AddDate(0, 0, -1), "lapsed")
	a.exec(t, `INSERT INTO messages (id, clinic_id, kind, recipient, status, send_at, entry_id) VALUES ($1, $2, 'waitlist_joined', 'wanda-gone@example.org', 'sent', now(), $3)`,
		uuid.New(), a.clinic.ID, gone)
	a.exec(t, `INSERT INTO outbox_copies (message_id, clinic_id, recipient, subject, raw, created_at)
		SELECT id, clinic_id, recipient, 'Waitlist', 'x', $2 FROM messages WHERE entry_id = $1`, gone, now)
	a.place(t, today.AddDate(0, 0, -1), "waiting")
	kept := a.place(t, today, "waiting")
	offered := a.place(t, today.AddDate(0, 0, -1), "offered")

	a.exec(t, `INSERT INTO sessions (token, data, expiry) VALUES ($1, 'x', $3), ($2, 'x', $4)`,
		uuid.NewString(), uuid.NewString(), now.Add(-time.Minute), now.Add(time.Minute))

	rep, err := r.Run(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("BookingsPastThePeriodOnly", func(t *testing.T) {
		if !anonymised(t, a, a1.ID) || anonymised(t, a, a2.ID) {
			t.Errorf("clinic a: a1 anonymised %v (want true), a2 one minute inside %v (want false)", anonymised(t, a, a1.ID), anonymised(t, a, a2.ID))
		}
		if got := clinicReport(t, rep, a).Scrubbed; got.Bookings != 1 || got.Messages != 2 || got.Audit != 1 {
			t.Errorf("clinic a scrubbed %+v, want 1 booking with its 2 messages and 1 audit row", got)
		}
	})
	t.Run("EachClinicsOwnPeriod", func(t *testing.T) {
		if !anonymised(t, b, b1.ID) || clinicReport(t, rep, b).Scrubbed.Bookings != 1 {
			t.Error("clinic b's 3 months: its year-old booking is not anonymised")
		}
		if anonymised(t, c, c1.ID) || clinicReport(t, rep, c).Scrubbed.Bookings != 0 {
			t.Error("clinic c's 24 months: its year-old booking was anonymised")
		}
	})
	t.Run("MailPastThePeriod", func(t *testing.T) {
		got := clinicReport(t, rep, a)
		if got.Copies != 1 || got.Errors != 1 || got.Loose != 1 || got.Jobs != 1 {
			t.Errorf("clinic a's mail: copies %d, errors %d, lookups %d, jobs %d; want 1 each", got.Copies, got.Errors, got.Loose, got.Jobs)
		}
		if n := a.count(t, `SELECT count(*) FROM messages WHERE clinic_id = $1 AND last_error <> ''`, a.clinic.ID); n != 0 {
			t.Errorf("%d mail server's answers left", n)
		}
		if n := a.count(t, `SELECT count(*) FROM outbox_copies c JOIN messages m ON m.id = c.message_id WHERE m.booking_id = $1 AND m.kind = 'reminder'`, a2.ID); n != 1 {
			t.Errorf("the copy inside the period is gone")
		}
		if n := a.count(t, `SELECT count(*) FROM messages WHERE clinic_id = $1 AND kind = 'lookup'`, a.clinic.ID); n != 1 {
			t.Errorf("%d lookups left, want the recent one", n)
		}
	})
	t.Run("WaitlistPlacesPastTheirLastDay", func(t *testing.T) {
		got := clinicReport(t, rep, a)
		if got.Places != 2 || got.PlaceMessages != 1 || got.PlaceCopies != 1 {
			t.Errorf("places %d, messages %d, copies %d; want 2, 1, 1", got.Places, got.PlaceMessages, got.PlaceCopies)
		}
		left := a.count(t, `SELECT count(*) FROM waitlist_entries WHERE clinic_id = $1 AND id = ANY($2)`, a.clinic.ID, []uuid.UUID{kept, offered})
		if n := a.count(t, `SELECT count(*) FROM waitlist_entries WHERE clinic_id = $1`, a.clinic.ID); n != 2 || left != 2 {
			t.Errorf("places left %d, want today's and the offered one", n)
		}
	})
	t.Run("ExpiredSessions", func(t *testing.T) {
		if rep.Sessions != 1 {
			t.Errorf("sessions deleted %d, want 1", rep.Sessions)
		}
	})
	t.Run("SecondRunDoesNothing", func(t *testing.T) {
		again, err := r.Run(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, cr := range again.Clinics {
			for _, k := range cr.Counts() {
				if k.N != 0 {
					t.Errorf("second run at %s: %s %d", cr.Slug, k.Kind, k.N)
				}
			}
		}
		for _, k := range again.Counts() {
			if k.N != 0 {
				t.Errorf("second run: %s %d", k.Kind, k.N)
			}
		}
	})
	t.Run("OneClinicBySlug", func(t *testing.T) {
		clock.Set(now.Add(2 * time.Minute)) // a2 is past too
		one, err := r.Run(ctx, c.clinic.Slug)
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Clinics) != 1 || one.Clinics[0].Slug != c.clinic.Slug || anonymised(t, a, a2.ID) {
			t.Errorf("a run for clinic c reported %+v, a2 anonymised %v", one.Clinics, anonymised(t, a, a2.ID))
		}
		next, err := r.Run(ctx, a.clinic.Slug)
		if err != nil {
			t.Fatal(err)
		}
		if next.Clinics[0].Scrubbed.Bookings != 1 || !anonymised(t, a, a2.ID) {
			t.Errorf("two minutes on, a2 is not anonymised: %+v", next.Clinics[0].Scrubbed)
		}
		_, err = r.Run(ctx, "no-such-clinic")
		testkit.WantCode(t, err, apperr.CodeNotFound, "unknown slug")
	})
	t.Run("StatsCountEveryRun", func(t *testing.T) {
		totals := map[string]int64{}
		r.Stats().Each(func(c privacy.Count) { totals[c.Kind] += c.N })
		// The runs of one clinic leave the server's records alone.
		if totals["bookings"] != 3 || totals["waitlist_places"] != 2 || totals["sessions"] != 1 {
			t.Errorf("stats %v, want 3 bookings, 2 places, 1 session", totals)
		}
	})
}
