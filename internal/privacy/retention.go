package privacy

// Retention: what each clinic's periods leave behind is removed, once a
// day (retention_job.go) or when the operator asks (`clinic retention
// run`). A booking keeps its patient's details for the clinic's
// retention_months after its end; stored e-mails, the mail server's
// answers and the queue's finished jobs are kept for mail_retention_days;
// a waitlist place goes once its last day has passed.

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
)

// scrubBatch is how many bookings one transaction anonymises: a clinic's
// first run may meet years of bookings, which should not wait behind one
// long transaction (nor hold its locks).
const scrubBatch = 500

// Retention removes what is past the clinics' periods.
type Retention struct {
	pool  *pgxpool.Pool
	cfg   RetentionConfig
	stats *RetentionStats
}

// RetentionConfig is how retention runs.
type RetentionConfig struct {
	// Now is the time the periods are measured to; nil is the real clock.
	// Tests move it.
	Now func() time.Time
	// OrphanJobsAfter is how long the queue's finished jobs whose message
	// is gone (no clinic to ask) are kept; zero is 30 days.
	OrphanJobsAfter time.Duration
	Log             *slog.Logger
}

// NewRetention makes the retention of the database behind pool.
func NewRetention(pool *pgxpool.Pool, cfg RetentionConfig) *Retention {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.OrphanJobsAfter <= 0 {
		cfg.OrphanJobsAfter = 30 * 24 * time.Hour
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Retention{pool: pool, cfg: cfg, stats: newRetentionStats()}
}

// Stats are the counts of every run of this process, for metrics.
func (r *Retention) Stats() *RetentionStats { return r.stats }

// ClinicReport is what one run did at one clinic.
type ClinicReport struct {
	Slug string
	// Scrubbed: bookings past the retention period anonymised, with what
	// hung off them.
	Scrubbed Scrubbed
	// Past the mail period: stored e-mails deleted, mail servers' answers
	// cleared, messages about nothing else deleted, finished jobs deleted.
	Copies, Errors, Loose, Jobs int64
	// Waitlist places past their last day deleted, with their messages
	// and the messages' stored copies.
	Places, PlaceMessages, PlaceCopies int64
}

// Report is what one run did: each clinic's, and the server's own
// (expired sessions and idempotency records, finished jobs of messages
// that are gone).
type Report struct {
	Clinics                        []ClinicReport
	Sessions, Idempotency, Orphans int64
}

// Count is a number of rows of one kind a run changed; Anonymised says
// whether they were anonymised (kept without the patient's details)
// rather than deleted.
type Count struct {
	Kind       string
	Anonymised bool
	N          int64
}

// Counts lists c's changes by kind, every kind even when zero.
func (c ClinicReport) Counts() []Count {
	s := c.Scrubbed
	return []Count{
		{"bookings", true, s.Bookings},
		{"audit_rows", true, s.Audit},
		{"booking_messages", false, s.Messages},
		{"booking_message_copies", false, s.Copies},
		{"booking_message_jobs", false, s.Jobs},
		{"manage_links", false, s.Links},
		{"idempotent_answers", false, s.Idempotency},
		{"mail_copies", false, c.Copies},
		{"mail_errors", true, c.Errors},
		{"lookup_messages", false, c.Loose},
		{"finished_jobs", false, c.Jobs},
		{"waitlist_places", false, c.Places},
		{"waitlist_messages", false, c.PlaceMessages},
		{"waitlist_message_copies", false, c.PlaceCopies},
	}
}

// Counts lists the server's own changes by kind.
func (r Report) Counts() []Count {
	return []Count{
		{"sessions", false, r.Sessions},
		{"idempotency_records", false, r.Idempotency},
		{"orphan_jobs", false, r.Orphans},
	}
}

// Run removes what is past the periods of the clinic slug, or of every
// clinic and then the server's expired records when slug is empty.
// Running it again at once changes nothing.
//
// Errors: NOT_FOUND for a slug no clinic has.
func (r *Retention) Run(ctx context.Context, slug string) (Report, error) {
	now := r.cfg.Now()
	q := db.New(r.pool)
	clinics, err := q.RetentionClinics(ctx, db.RetentionClinicsParams{Now: now, Slug: pgtype.Text{String: slug, Valid: slug != ""}})
	if err != nil {
		return Report{}, fmt.Errorf("retention: clinics: %w", err)
	}
	if slug != "" && len(clinics) == 0 {
		return Report{}, apperr.NotFoundf("clinic", "No clinic has the slug %q.", slug)
	}
	var rep Report
	for _, c := range clinics {
		cr, err := r.runClinic(ctx, c, now)
		r.stats.add(cr.Counts())
		if err != nil {
			return rep, fmt.Errorf("retention of %s: %w", c.Slug, err)
		}
		rep.Clinics = append(rep.Clinics, cr)
	}
	if slug == "" {
		if err := r.runServer(ctx, now, &rep); err != nil {
			return rep, err
		}
		r.stats.add(rep.Counts())
	}
	r.cfg.Log.Info("retention run", "clinics", len(rep.Clinics), "bookings_anonymised", rep.total("bookings"),
		"took", time.Since(now).Round(time.Millisecond))
	return rep, nil
}

func (rep Report) total(kind string) int64 {
	var n int64
	for _, c := range rep.Clinics {
		for _, k := range c.Counts() {
			if k.Kind == kind {
				n += k.N
			}
		}
	}
	return n
}

// runClinic runs one clinic: its bookings in batches, each batch a
// transaction, then its mail and its waitlist.
func (r *Retention) runClinic(ctx context.Context, c db.RetentionClinicsRow, now time.Time) (ClinicReport, error) {
	cr := ClinicReport{Slug: c.Slug}
	for {
		var batch Scrubbed
		var n int
		err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
			ids, err := db.New(tx).RetentionDueBookings(ctx, db.RetentionDueBookingsParams{
				ClinicID: c.ID, Cutoff: c.BookingCutoff, Max: scrubBatch,
			})
			if err != nil {
				return fmt.Errorf("due bookings: %w", err)
			}
			n = len(ids)
			batch, err = Scrub(ctx, tx, c.ID, ids, now)
			return err
		})
		if err != nil {
			return cr, err
		}
		cr.Scrubbed.Add(batch)
		if n < scrubBatch {
			break
		}
	}
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		return mailPast(ctx, tx, c, &cr)
	})
	if err != nil {
		return cr, err
	}
	err = pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		return placesPast(ctx, tx, c, &cr)
	})
	return cr, err
}

// finishedJobsDelete deletes the queue's finished jobs of the clinic's
// messages and waitlist openings that ended before $2: their errors may
// quote a mail server's answer about an address. The queue's tables are
// River's, outside the schema the query generator reads.
const finishedJobsDelete = `
DELETE FROM river_job j
WHERE j.state IN ('completed', 'cancelled', 'discarded') AND j.finalized_at < $2
  AND ((j.kind = 'send_message' AND EXISTS (
          SELECT 1 FROM messages m WHERE m.clinic_id = $1 AND m.id::text = j.args->>'message_id'))
    OR (j.kind = 'waitlist_offer' AND EXISTS (
          SELECT 1 FROM waitlist_openings o WHERE o.clinic_id = $1 AND o.id::text = j.args->>'opening_id')))`

// orphanJobsDelete deletes finished jobs of messages that are gone, which
// no clinic's period reaches any more.
const orphanJobsDelete = `
DELETE FROM river_job j
WHERE j.state IN ('completed', 'cancelled', 'discarded') AND j.finalized_at < $1
  AND j.kind = 'send_message'
  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id::text = j.args->>'message_id')`

// mailPast removes what the clinic's mail period has passed.
func mailPast(ctx context.Context, tx pgx.Tx, c db.RetentionClinicsRow, cr *ClinicReport) error {
	q := db.New(tx)
	var err error
	tag, err := tx.Exec(ctx, finishedJobsDelete, c.ID, c.MailCutoff)
	if err != nil {
		return fmt.Errorf("finished jobs: %w", err)
	}
	cr.Jobs = tag.RowsAffected()
	if cr.Copies, err = q.RetentionCopiesDelete(ctx, db.RetentionCopiesDeleteParams{ClinicID: c.ID, Cutoff: c.MailCutoff}); err != nil {
		return fmt.Errorf("stored e-mails: %w", err)
	}
	if cr.Errors, err = q.RetentionMessageErrorsClear(ctx, db.RetentionMessageErrorsClearParams{ClinicID: c.ID, Cutoff: c.MailCutoff}); err != nil {
		return fmt.Errorf("mail errors: %w", err)
	}
	if cr.Loose, err = q.RetentionLooseMessagesDelete(ctx, db.RetentionLooseMessagesDeleteParams{ClinicID: c.ID, Cutoff: c.MailCutoff}); err != nil {
		return fmt.Errorf("lookup messages: %w", err)
	}
	return nil
}

// placesPast deletes the clinic's waitlist places whose last day has
// passed, with their messages.
func placesPast(ctx context.Context, tx pgx.Tx, c db.RetentionClinicsRow, cr *ClinicReport) error {
	q := db.New(tx)
	var err error
	if cr.PlaceCopies, err = q.RetentionPlaceCopiesDelete(ctx, db.RetentionPlaceCopiesDeleteParams{ClinicID: c.ID, Today: c.Today}); err != nil {
		return fmt.Errorf("waitlist e-mails: %w", err)
	}
	if cr.PlaceMessages, err = q.RetentionPlaceMessagesDelete(ctx, db.RetentionPlaceMessagesDeleteParams{ClinicID: c.ID, Today: c.Today}); err != nil {
		return fmt.Errorf("waitlist messages: %w", err)
	}
	if cr.Places, err = q.RetentionPlacesDelete(ctx, db.RetentionPlacesDeleteParams{ClinicID: c.ID, Today: c.Today}); err != nil {
		return fmt.Errorf("waitlist places: %w", err)
	}
	return nil
}

// runServer removes the server's expired records, which belong to no
// clinic's period.
func (r *Retention) runServer(ctx context.Context, now time.Time, rep *Report) error {
	q := db.New(r.pool)
	var err error
	if rep.Sessions, err = q.RetentionSessionsDelete(ctx, now); err != nil {
		return fmt.Errorf("retention: sessions: %w", err)
	}
	if rep.Idempotency, err = q.IdempotencyDeleteExpired(ctx); err != nil {
		return fmt.Errorf("retention: idempotency records: %w", err)
	}
	tag, err := r.pool.Exec(ctx, orphanJobsDelete, now.Add(-r.cfg.OrphanJobsAfter))
	if err != nil {
		return fmt.Errorf("retention: orphan jobs: %w", err)
	}
	rep.Orphans = tag.RowsAffected()
	return nil
}
