package privacy

// Erasure on request: one patient's details removed from every row that
// holds them, in one transaction, then from Redis; the ledger keeps a
// keyed hash of who was erased.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// Erased counts what an erasure did. It names no patient.
type Erased struct {
	Bookings  int64 `json:"bookings"`  // bookings that lost the patient's details
	Cancelled int64 `json:"cancelled"` // future bookings cancelled (their times freed)
	Messages  int64 `json:"messages"`  // e-mails deleted (with their stored copies)
	Jobs      int64 `json:"jobs"`      // the queue's jobs of those e-mails, deleted
	Places    int64 `json:"places"`    // waitlist places deleted
	Links     int64 `json:"links"`     // manage links deleted
	Answers   int64 `json:"answers"`   // stored idempotent answers deleted
	Audit     int64 `json:"audit"`     // audit rows stripped of the patient's details
	Sessions  int64 `json:"sessions"`  // browser sessions deleted or cleaned
	RedisKeys int64 `json:"redisKeys"` // Redis keys deleted
}

// Zero says whether the erasure found nothing.
func (e Erased) Zero() bool { return e == Erased{} }

// Erase erases the patient with this e-mail address or phone number
// (either may be empty, not both) at u's clinic: their future bookings
// are cancelled without a word to them (the times are freed, and the
// waitlist may offer them), and their details are removed from every
// row, session and Redis key that holds them. One audit row "patient.erase"
// says who did it and how much went; the ledger keeps the keyed hashes.
//
// Errors: FORBIDDEN (only admins), INVALID_ARGUMENT naming "email" when
// neither is given, NOT_FOUND when nothing is held about the patient.
func (s *Service) Erase(ctx context.Context, u staff.User, email, phone string) (Erased, error) {
	if err := u.May(ActErase); err != nil {
		return Erased{}, err
	}
	p, err := PatientOf(ctx, db.New(s.cfg.Pool), u.ClinicID, email, phone)
	if err != nil {
		return Erased{}, err
	}
	return s.erase(ctx, u.Actor(), p, nil)
}

// EraseByCommand is Erase for the operator at the command line, who
// names the clinic.
func (s *Service) EraseByCommand(ctx context.Context, clinicID uuid.UUID, email, phone string) (Erased, error) {
	p, err := PatientOf(ctx, db.New(s.cfg.Pool), clinicID, email, phone)
	if err != nil {
		return Erased{}, err
	}
	return s.erase(ctx, staff.ActorCLI, p, nil)
}

// erase erases p. A replay passes the ledger's entry: only what was made
// up to its time goes (a patient may come back after an erasure), and no
// new entry is written.
func (s *Service) erase(ctx context.Context, actor string, p Patient, replayed *Entry) (Erased, error) {
	now := time.Now().UTC()
	var until time.Time
	entry := s.cfg.Ledger.entryFor(p, now)
	if replayed != nil {
		entry, until = *replayed, replayed.At
	}
	var (
		n       Erased
		f       found
		changes []booking.Change
	)
	err := pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		n, changes = Erased{}, nil
		q := db.New(tx)
		var err error
		if err = q.PrivacyPatientLock(ctx, db.PrivacyPatientLockParams{ClinicID: p.ClinicID.String(), EmailKey: p.EmailKey, PhoneKey: p.PhoneKey}); err != nil {
			return fmt.Errorf("lock patient: %w", err)
		}
		if f, err = s.find(ctx, q, p, until); err != nil {
			return err
		}
		if f.empty() {
			if replayed != nil {
				return record(ctx, q, entry) // nothing of theirs came back
			}
			return apperr.NotFoundf("email", "Nothing is held about a patient with this e-mail address or phone number.")
		}
		// The places go first: a time the cancels free must not be held
		// for the patient's own place.
		if err := s.erasePlaces(ctx, tx, q, f, &n); err != nil {
			return err
		}
		if changes, err = s.cancelFuture(ctx, tx, actor, f, now); err != nil {
			return err
		}
		n.Cancelled = int64(len(changes))
		if err := s.eraseRows(ctx, tx, q, p, f, now, &n); err != nil {
			return err
		}
		if err := record(ctx, q, entry); err != nil {
			return err
		}
		if err := audit.Write(ctx, q, audit.Entry{ClinicID: p.ClinicID, Actor: actor, Action: "patient.erase",
			Entity: "erasure", EntityID: entry.ID.String(), After: n}); err != nil {
			return err
		}
		// The file before the commit: an erasure committed is always in
		// it. One whose commit then fails is in it all the same, and is
		// applied at the next start: what the admin asked for.
		if replayed == nil {
			return s.cfg.Ledger.append(entry)
		}
		return nil
	})
	if apperr.As(err) != nil {
		return Erased{}, err
	}
	if err != nil {
		return Erased{}, fmt.Errorf("erase patient: %w", err)
	}
	if f.empty() {
		return n, nil
	}
	s.afterCommit(ctx, p, f, changes, &n)
	return n, nil
}

// cancelFuture cancels f's confirmed bookings still to come, in tx,
// without writing to the patient. The changes are told once tx commits.
func (s *Service) cancelFuture(ctx context.Context, tx pgx.Tx, actor string, f found, now time.Time) ([]booking.Change, error) {
	var changes []booking.Change
	for _, b := range f.bookings {
		if b.Status != booking.StatusConfirmed || !b.SlotStart.After(now) {
			continue
		}
		ch, changed, err := s.cfg.Bookings.CancelIn(ctx, tx, booking.CancelRequest{
			BookingID: b.ID, ClinicID: b.ClinicID, Actor: actor, Quiet: true,
		})
		if err != nil {
			return nil, fmt.Errorf("cancel a future booking: %w", err)
		}
		if changed {
			// Observers see the booking as the erasure leaves it.
			ch.Booking.Patient, ch.Booking.ClientID, ch.Booking.CancelReason = booking.Patient{Name: Anonymous}, "", ""
			changes = append(changes, ch)
		}
	}
	return changes, nil
}

// erasePlaces deletes f's waitlist places with their links, offers and
// the offers' e-mails (cascade), and the other messages about them and
// f's lookups, in tx. A live offer's follow-up runs at once: the time
// goes to the next patient.
func (s *Service) erasePlaces(ctx context.Context, tx pgx.Tx, q *db.Queries, f found, n *Erased) error {
	jobs, err := q.PrivacyOpenOfferJobs(ctx, f.placeIDs())
	if err != nil {
		return fmt.Errorf("offers of the patient's places: %w", err)
	}
	for _, j := range jobs {
		if err := s.cfg.Outbox.RunJobNow(ctx, tx, j.Int64); err != nil {
			return err
		}
	}
	if n.Messages, n.Jobs, err = s.deleteMessages(ctx, tx, q, f); err != nil {
		return err
	}
	if n.Places, err = q.PrivacyPlacesDelete(ctx, f.placeIDs()); err != nil {
		return fmt.Errorf("delete waitlist places: %w", err)
	}
	return nil
}

// eraseRows removes p's details from f's bookings (privacy.Scrub: with
// their messages, links, answers, jobs and audit rows), from the audit
// rows of f's places and from the sessions, in tx.
func (s *Service) eraseRows(ctx context.Context, tx pgx.Tx, q *db.Queries, p Patient, f found, now time.Time, n *Erased) error {
	details := f.details()
	sessions, err := s.sessionsCarrying(ctx, q, p, details)
	if err != nil {
		return err
	}
	sc, err := Scrub(ctx, tx, p.ClinicID, f.bookingIDs(), now)
	if err != nil {
		return err
	}
	n.Bookings, n.Links, n.Answers = sc.Bookings, sc.Links, sc.Idempotency
	n.Messages += sc.Messages
	n.Jobs += sc.Jobs
	n.Audit = sc.Audit
	placeAudit, err := q.PrivacyPlacesAuditScrub(ctx, db.PrivacyPlacesAuditScrubParams{ClinicID: p.ClinicID, EntryIds: ids(f.placeIDs())})
	if err != nil {
		return fmt.Errorf("audit rows of the places: %w", err)
	}
	n.Audit += placeAudit
	m, err := eraseSessions(ctx, q, sessions, details)
	n.Sessions = int64(m)
	return err
}

// deleteMessages deletes the messages about f's places and f's lookups
// (those about its bookings go with Scrub), with their stored copies
// (cascade) and their jobs.
func (s *Service) deleteMessages(ctx context.Context, tx pgx.Tx, q *db.Queries, f found) (msgs, jobs int64, err error) {
	var doomed []uuid.UUID
	for _, m := range f.messages {
		if !m.BookingID.Valid && !m.PreviousID.Valid {
			doomed = append(doomed, m.ID)
		}
	}
	if len(doomed) == 0 {
		return 0, 0, nil
	}
	// Jobs first: they are found through the messages' ids.
	tag, err := tx.Exec(ctx, deleteJobsOf, ids(doomed))
	if err != nil {
		return 0, 0, fmt.Errorf("delete the messages' jobs: %w", err)
	}
	deleted, err := q.PrivacyMessagesDelete(ctx, doomed)
	if err != nil {
		return 0, 0, fmt.Errorf("delete messages: %w", err)
	}
	return int64(len(deleted)), tag.RowsAffected(), nil
}

// deleteJobsOf deletes the queue's jobs of some messages (by the job's
// argument, which holds the message's id), as Scrub does for a booking's:
// a running one is left to its worker, which finds its message gone.
const deleteJobsOf = `
DELETE FROM river_job j
WHERE j.state <> 'running' AND j.kind = 'send_message' AND j.args->>'message_id' = ANY($1::text[])`

// afterCommit tells the booking's observers of the cancels (the times are
// published free), cleans Redis and has the clinic's pages drawn again.
func (s *Service) afterCommit(ctx context.Context, p Patient, f found, changes []booking.Change, n *Erased) {
	ctx = context.WithoutCancel(ctx)
	s.cfg.Bookings.Tell(ctx, changes...)
	keys, err := s.eraseRedis(ctx, p, f)
	if err != nil {
		// The keys that could not go expire within the hour (see
		// docs/privacy.md); the rows are erased.
		s.cfg.Log.Warn("erase patient: redis", "err", err)
	}
	n.RedisKeys = keys
	s.cfg.Changed(ctx, p.ClinicID)
}

func ids(us []uuid.UUID) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	return out
}

// MarshalText keeps Erased printable in one line for the command line.
func (e Erased) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}
