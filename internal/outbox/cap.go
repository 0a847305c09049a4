package outbox

// The cap on e-mails strangers can aim at one address.
//
// Anyone may book with any address, cancel with the link that booking
// gave them, look bookings up or join a waitlist: each sends an e-mail to
// the address typed. Without a cap, a script doing that in a loop turns
// the clinic's mail server on a stranger's inbox. So a message a public
// request caused takes a place under its recipient's cap when it is sent;
// past the cap it is held back: recorded, shown to staff, not sent and
// not retried. Messages staff cause, reminders and waitlist offers are
// neither counted nor held back: the patient is owed them.
//
// The places live in the messages themselves (recipient_key, counted_at),
// counted under a PostgreSQL advisory lock of the recipient's key: every
// worker of every process takes its place one at a time, and the cap
// needs nothing the outbox does not need already. PostgreSQL away, no
// place can be taken and the message waits for its retry, as it would
// for the mail server: the cap never fails open.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/identity"
)

// Causes of messages: who made the outbox write one.
const (
	// CausePublic is a request anyone may make (an online booking, cancel
	// or move, a lookup, a waitlist join): counted and capped.
	CausePublic = "public"
	// CauseStaff is a staff member's change: never capped.
	CauseStaff = "staff"
	// CauseSchedule is the system's own timing (a reminder, a waitlist
	// offer): never capped.
	CauseSchedule = "schedule"
)

// Defaults of the cap: public messages to one address a day, from one
// clinic, and across the server (every clinic sends from one MAIL_FROM,
// whose standing with the receiving mail servers they share).
const (
	DefaultPerRecipient = 6
	serverTimesClinic   = 3
	capWindow           = 24 * time.Hour
)

// Cap is how many public messages one address may get in a day.
type Cap struct {
	// PerClinic counts one clinic's; 0: DefaultPerRecipient.
	PerClinic int
	// Server counts every clinic's together; 0: three times PerClinic.
	Server int
}

func (c Cap) withDefaults() Cap {
	if c.PerClinic <= 0 {
		c.PerClinic = DefaultPerRecipient
	}
	if c.Server <= 0 {
		c.Server = serverTimesClinic * c.PerClinic
	}
	return c
}

// Scopes of the cap a held-back message met, for metrics.
const (
	ScopeClinic = "clinic"
	ScopeServer = "server"
)

// Scopes lists them, for metrics.
var Scopes = []string{ScopeClinic, ScopeServer}

// staffActor starts the actor of every change a staff member makes
// (staff.User.Actor).
const staffActor = "staff:"

// causeOf is the cause of a booking change's notice made by actor. Only
// a staff member's is not public: an actor nobody named is a stranger.
func causeOf(actor string) string {
	if strings.HasPrefix(actor, staffActor) {
		return CauseStaff
	}
	return CausePublic
}

// defaultCause is the cause of a message written without one: a
// waitlist offer comes of the list's own turn, and its withdrawal of the
// clinic's closing the day; anything else another package writes answers
// a stranger's request until it says otherwise.
func defaultCause(kind string) string {
	switch kind {
	case KindWaitlistOffer, KindWaitlistWithdrawn, KindReminder:
		return CauseSchedule
	}
	return CausePublic
}

// place takes m's place under the cap of its recipient to, the address
// it is about to be sent to. It returns the scope of the cap m met ("":
// none, m may go). A message that is not public, or took its place on
// an earlier attempt, needs none.
func (o *Outbox) place(ctx context.Context, m db.Message, to string) (string, error) {
	if m.Cause != CausePublic || m.CountedAt != nil {
		return "", nil
	}
	key := identity.EmailKey(to)
	now := o.now()
	var scope string
	err := pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		if err := q.MessageCapLock(ctx, key); err != nil {
			return err
		}
		n, err := q.MessageCapCount(ctx, db.MessageCapCountParams{ClinicID: m.ClinicID, RecipientKey: key, Since: now.Add(-capWindow)})
		if err != nil {
			return err
		}
		switch {
		case int(n.Clinic) >= o.cap.PerClinic:
			scope = ScopeClinic
			return nil
		case int(n.Server) >= o.cap.Server:
			scope = ScopeServer
			return nil
		}
		return q.MessageCapTake(ctx, db.MessageCapTakeParams{ID: m.ID, RecipientKey: key, CountedAt: now})
	})
	if err != nil {
		return "", fmt.Errorf("count e-mails to the recipient: %w", err)
	}
	return scope, nil
}

// holdBack records m as held back by the cap of scope, for staff to see.
func (o *Outbox) holdBack(ctx context.Context, m db.Message, scope string) error {
	o.stats.count(m.Kind, "held")
	o.stats.held(scope)
	reason := fmt.Sprintf("Held back: this address got %d e-mails that online requests to this clinic caused in the last 24 hours (MAILS_PER_RECIPIENT).", o.cap.PerClinic)
	if scope == ScopeServer {
		reason = fmt.Sprintf("Held back: this address got %d e-mails that online requests to the clinics of this server caused in the last 24 hours (MAILS_PER_RECIPIENT_SERVER).", o.cap.Server)
	}
	o.log.Info("message held back", "message", m.ID, "kind", m.Kind, "cap", scope)
	if err := db.New(o.pool).MessageHold(context.WithoutCancel(ctx), db.MessageHoldParams{ID: m.ID, Reason: reason}); err != nil {
		return fmt.Errorf("hold message back: %w", err)
	}
	return nil
}
