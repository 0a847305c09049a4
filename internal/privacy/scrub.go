package privacy

// The scrub: a set of bookings loses its patient's details everywhere they
// were copied, in the caller's transaction. Retention scrubs the bookings
// whose time has passed; erasure scrubs one patient's.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/db"
)

// Anonymous is the name an anonymised booking keeps. A booking's name is
// never empty (readers of bookings rely on it), so the details make way
// for this fixed word rather than for nothing; the booking's AnonymisedAt
// is what tells a scrubbed booking, not its name.
const Anonymous = "anonymised"

// Scrubbed counts what a scrub changed, by kind.
type Scrubbed struct {
	Bookings    int64 // bookings that lost their patient's details
	Messages    int64 // messages about them, deleted
	Copies      int64 // stored copies of those e-mails, deleted
	Jobs        int64 // the queue's jobs of those messages, deleted
	Links       int64 // manage links, deleted
	Idempotency int64 // stored answers telling of the bookings, deleted
	Audit       int64 // audit rows stripped of the patient's details
}

// Add adds o's counts to s.
func (s *Scrubbed) Add(o Scrubbed) {
	s.Bookings += o.Bookings
	s.Messages += o.Messages
	s.Copies += o.Copies
	s.Jobs += o.Jobs
	s.Links += o.Links
	s.Idempotency += o.Idempotency
	s.Audit += o.Audit
}

// Zero says whether nothing was changed.
func (s Scrubbed) Zero() bool { return s == Scrubbed{} }

// scrubJobs deletes the queue's jobs of the bookings' messages, by the
// message's job id and by the job's argument (a held message released by
// staff got a job of its own). The queue's tables are River's, outside the
// schema the query generator reads, hence the statement here. A job a
// worker is running is left to it: its message is gone, so it ends
// without sending, and its row, which holds only the message's id, goes
// with the finished jobs after the clinic's mail period.
const scrubJobs = `
DELETE FROM river_job j
WHERE j.state <> 'running'
  AND (j.id IN (SELECT m.job_id FROM messages m
                WHERE m.clinic_id = $1 AND m.job_id IS NOT NULL
                  AND (m.booking_id = ANY($2::uuid[]) OR m.previous_id = ANY($2::uuid[])))
    OR (j.kind = 'send_message' AND j.args->>'message_id' IN (
           SELECT m.id::text FROM messages m
           WHERE m.clinic_id = $1
             AND (m.booking_id = ANY($2::uuid[]) OR m.previous_id = ANY($2::uuid[])))))`

// Scrub removes the patients' details from the bookings ids of the
// clinic, in tx (the caller's: it commits or rolls back the whole), with a
// fixed number of statements for any number of bookings. Ids of another
// clinic's bookings are ignored.
//
// The bookings keep their id, clinic, time, type, specialist, status,
// attendance and times of making and cancelling, and lose the patient's
// name (to Anonymous), e-mail, phone, their identity keys, client id,
// language, cancel reason and manage token; now is their AnonymisedAt.
// Their messages (and those telling of a move away from them) are
// deleted with their stored copies and queued jobs; their manage links
// and the stored idempotent answers that tell of them are deleted; their
// audit rows keep actor, action, entity, time and the booking's own
// fields and lose the patient and the reasons. Scrubbing a booking twice
// changes nothing the second time.
func Scrub(ctx context.Context, tx pgx.Tx, clinicID uuid.UUID, ids []uuid.UUID, now time.Time) (Scrubbed, error) {
	var s Scrubbed
	if len(ids) == 0 {
		return s, nil
	}
	q := db.New(tx)
	var err error
	// The copies and the jobs first: both are found through the messages.
	if s.Copies, err = q.ScrubMessageCopies(ctx, db.ScrubMessageCopiesParams{ClinicID: clinicID, Ids: ids}); err != nil {
		return s, fmt.Errorf("scrub: e-mail copies: %w", err)
	}
	tag, err := tx.Exec(ctx, scrubJobs, clinicID, ids)
	if err != nil {
		return s, fmt.Errorf("scrub: jobs: %w", err)
	}
	s.Jobs = tag.RowsAffected()
	if s.Messages, err = q.ScrubMessages(ctx, db.ScrubMessagesParams{ClinicID: clinicID, Ids: ids}); err != nil {
		return s, fmt.Errorf("scrub: messages: %w", err)
	}
	if s.Links, err = q.ScrubBookingLinks(ctx, db.ScrubBookingLinksParams{ClinicID: clinicID, Ids: ids}); err != nil {
		return s, fmt.Errorf("scrub: manage links: %w", err)
	}
	if s.Idempotency, err = q.ScrubIdempotencyKeys(ctx, db.ScrubIdempotencyKeysParams{ClinicID: clinicID, Ids: ids}); err != nil {
		return s, fmt.Errorf("scrub: idempotent answers: %w", err)
	}
	texts := make([]string, len(ids))
	for i, id := range ids {
		texts[i] = id.String()
	}
	if s.Audit, err = q.ScrubAuditRows(ctx, db.ScrubAuditRowsParams{ClinicID: clinicID, Ids: texts}); err != nil {
		return s, fmt.Errorf("scrub: audit rows: %w", err)
	}
	if s.Bookings, err = q.ScrubBookings(ctx, db.ScrubBookingsParams{
		Placeholder: Anonymous, Now: now.UTC(), ClinicID: clinicID, Ids: ids,
	}); err != nil {
		return s, fmt.Errorf("scrub: bookings: %w", err)
	}
	return s, nil
}
