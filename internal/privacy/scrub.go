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

// scrubJobs deletes the queue's jobs of the bookings' messages ($2), by
// the message's job id ($1) and by the job's argument (a held message
// released by staff got a job of its own), through the arguments' index.
// The queue's tables are River's, outside the schema the query generator
// reads, hence the statement here. A job a worker is running is left to
// it: its message is gone, so it ends without sending, and its row, which
// holds only the message's id, goes with the finished jobs after the
// clinic's mail period.
const scrubJobs = `
DELETE FROM river_job
WHERE state <> 'running' AND id IN (
    SELECT unnest($1::bigint[])
    UNION
    SELECT j.id FROM unnest($2::text[]) AS m (id)
    JOIN river_job j ON j.args @> jsonb_build_object('message_id', m.id) AND j.kind = 'send_message')`

// Scrub removes the patients' details from the bookings ids of the
// clinic, in tx (the caller's: it commits or rolls back the whole), with a
// fixed number of statements for any number of bookings. Ids of another
// clinic's bookings are ignored. The bookings stay locked until tx ends.
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
	ids, err := q.ScrubBookingsLock(ctx, db.ScrubBookingsLockParams{ClinicID: clinicID, Ids: ids})
	if err != nil || len(ids) == 0 {
		return s, wrapScrub("bookings", err)
	}
	msgs, err := q.ScrubMessagesOf(ctx, db.ScrubMessagesOfParams{ClinicID: clinicID, Ids: ids})
	if err != nil {
		return s, wrapScrub("messages", err)
	}
	msgIDs, msgTexts, jobIDs := make([]uuid.UUID, len(msgs)), make([]string, len(msgs)), []int64{}
	for i, m := range msgs {
		msgIDs[i], msgTexts[i] = m.ID, m.ID.String()
		if m.JobID.Valid {
			jobIDs = append(jobIDs, m.JobID.Int64)
		}
	}
	if s.Copies, err = q.ScrubMessageCopies(ctx, msgIDs); err != nil {
		return s, wrapScrub("e-mail copies", err)
	}
	tag, err := tx.Exec(ctx, scrubJobs, jobIDs, msgTexts)
	if err != nil {
		return s, wrapScrub("jobs", err)
	}
	s.Jobs = tag.RowsAffected()
	if s.Messages, err = q.ScrubMessages(ctx, msgIDs); err != nil {
		return s, wrapScrub("messages", err)
	}
	if s.Links, err = q.ScrubBookingLinks(ctx, ids); err != nil {
		return s, wrapScrub("manage links", err)
	}
	if s.Idempotency, err = q.ScrubIdempotencyKeys(ctx, db.ScrubIdempotencyKeysParams{ClinicID: clinicID, Ids: ids}); err != nil {
		return s, wrapScrub("idempotent answers", err)
	}
	texts := make([]string, len(ids))
	for i, id := range ids {
		texts[i] = id.String()
	}
	if s.Audit, err = q.ScrubAuditRows(ctx, db.ScrubAuditRowsParams{ClinicID: clinicID, Ids: texts}); err != nil {
		return s, wrapScrub("audit rows", err)
	}
	if s.Bookings, err = q.ScrubBookings(ctx, db.ScrubBookingsParams{Placeholder: Anonymous, Now: now.UTC(), Ids: ids}); err != nil {
		return s, wrapScrub("bookings", err)
	}
	return s, nil
}

func wrapScrub(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("scrub: %s: %w", what, err)
}
