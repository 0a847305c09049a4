package outbox

// What staff see and do of the messages the cap held back.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// heldShown is how far back staff are shown held-back messages: the
// cap's own day, and the days after, for whoever comes in next.
const heldShown = 7 * 24 * time.Hour

// ActSendHeld is the role table's action for sending a held-back message
// anyway: it overrides a limit that protects a stranger's inbox and the
// server's sender, which is the clinic's call, an admin's.
const ActSendHeld = staff.ActSettings

// Held is a message the cap held back, as staff see it.
type Held struct {
	ID        uuid.UUID
	BookingID uuid.UUID // uuid.Nil: none (a lookup, a waitlist e-mail)
	Kind      string
	Recipient string
	Reason    string
	At        time.Time
}

// Held lists the messages of u's clinic held back in the last week,
// newest first. Errors: FORBIDDEN.
func (o *Outbox) Held(ctx context.Context, u staff.User) ([]Held, error) {
	if err := u.May(ActCopies); err != nil {
		return nil, err
	}
	rows, err := db.New(o.pool).MessageListHeld(ctx, db.MessageListHeldParams{ClinicID: u.ClinicID, Since: o.now().Add(-heldShown)})
	if err != nil {
		return nil, fmt.Errorf("list held messages: %w", err)
	}
	out := make([]Held, len(rows))
	for i, r := range rows {
		out[i] = Held{ID: r.ID, BookingID: r.BookingID.UUID, Kind: r.Kind, Recipient: r.Recipient, Reason: r.LastError, At: r.UpdatedAt}
	}
	return out, nil
}

// AnyHeld says whether the clinic held a message back in the last week
// (the staff header then links to the outbox page).
func (o *Outbox) AnyHeld(ctx context.Context, clinicID uuid.UUID) (bool, error) {
	held, err := db.New(o.pool).MessageHeldExists(ctx, db.MessageHeldExistsParams{ClinicID: clinicID, Since: o.now().Add(-heldShown)})
	if err != nil {
		return false, fmt.Errorf("held messages: %w", err)
	}
	return held, nil
}

// SendHeld sends a held-back message of u's clinic anyway, now, as
// staff's own (it is not counted, and not held back again), audited.
// What it tells is looked up when it goes out, as for every message: a
// confirmation of a booking cancelled since goes nowhere.
//
// Errors: FORBIDDEN, NOT_FOUND (no message of the clinic held back).
func (o *Outbox) SendHeld(ctx context.Context, u staff.User, id uuid.UUID) error {
	if err := u.May(ActSendHeld); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		now := o.now()
		if _, err := q.MessageRelease(ctx, db.MessageReleaseParams{ID: id, ClinicID: u.ClinicID, SendAt: now.UTC()}); errors.Is(err, pgx.ErrNoRows) {
			return apperr.NotFoundf("", "No such held-back message.")
		} else if err != nil {
			return fmt.Errorf("release message: %w", err)
		}
		res, err := o.river.InsertTx(ctx, tx, sendArgs{MessageID: id}, &river.InsertOpts{Queue: o.cfg.Queue})
		if err != nil {
			return fmt.Errorf("enqueue message: %w", err)
		}
		if err := q.MessageSetJob(ctx, db.MessageSetJobParams{ID: id, JobID: pgtype.Int8{Int64: res.Job.ID, Valid: true}}); err != nil {
			return fmt.Errorf("enqueue message: %w", err)
		}
		return audit.Write(ctx, q, audit.Entry{ClinicID: u.ClinicID, Actor: u.Actor(), Action: "message.send_held",
			Entity: "message", EntityID: id.String()})
	})
}
