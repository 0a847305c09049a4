package outbox

// Sending: the queue's worker.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/mail"
)

// errNothingToSend: the message need not go out any more (its booking was
// cancelled or moved before a reminder; a list with nothing in it).
var errNothingToSend = errors.New("nothing to send")

type sendWorker struct {
	river.WorkerDefaults[sendArgs]
	o *Outbox
}

// Work sends one message. The row says where it stands: a message sent,
// failed for good, cancelled or held back is done with. A public message
// takes its place under its recipient's cap before it is sent, or is
// held back (cap.go). An attempt is counted before the mail server is
// spoken to, and the server's acceptance is recorded before Work
// returns, so the queue can never run an accepted message again. (A
// process that dies between the server's "accepted" and that record
// sends the message again on its retry; the Message-ID stays the same,
// so receivers can tell the repeat.)
func (w *sendWorker) Work(ctx context.Context, job *river.Job[sendArgs]) error {
	o := w.o
	q := db.New(o.pool)
	m, err := q.MessageStart(ctx, job.Args.MessageID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start message: %w", err)
	}
	msg, err := o.compose(ctx, m)
	if errors.Is(err, errNothingToSend) {
		o.stats.count(m.Kind, "cancelled")
		return o.nothingToSend(ctx, m)
	}
	if err == nil {
		var scope string
		if scope, err = o.place(ctx, m, msg.To); err == nil && scope != "" {
			return o.holdBack(ctx, m, scope)
		}
	}
	if err == nil {
		err = o.deliver(ctx, m, msg)
	}
	switch {
	case err == nil:
		o.stats.count(m.Kind, "sent")
		return o.accepted(ctx, m)
	case mail.Permanent(err):
		o.stats.count(m.Kind, "failed")
		o.attemptFailed(ctx, m, "failed", err)
		return river.JobCancel(redacted{err})
	case job.Attempt >= job.MaxAttempts:
		o.stats.count(m.Kind, "failed")
		o.attemptFailed(ctx, m, "failed", err)
		return redacted{err}
	default:
		o.stats.count(m.Kind, "retried")
		o.attemptFailed(ctx, m, "retrying", err)
		return redacted{err}
	}
}

// redacted is an error the queue logs and keeps: the mail server's answer
// with every address in it masked.
type redacted struct{ err error }

func (r redacted) Error() string { return redact(r.err.Error()) }
func (r redacted) Unwrap() error { return r.err }

// deliver hands the message to the mail server, or, without one, keeps it
// for the outbox page.
func (o *Outbox) deliver(ctx context.Context, m db.Message, msg mail.Message) error {
	if o.cfg.Sender != nil {
		return o.cfg.Sender.Send(ctx, msg)
	}
	msg.From = o.cfg.From
	raw, err := mail.Preview(msg)
	if err != nil {
		return fmt.Errorf("render message: %w", err)
	}
	return db.New(o.pool).OutboxCopyInsert(ctx, db.OutboxCopyInsertParams{
		MessageID: m.ID, ClinicID: m.ClinicID, Recipient: msg.To, Subject: msg.Subject, Raw: raw,
	})
}

// accepted records that the mail server took the message. It insists,
// for up to recordFor: until the record is written, a retry of the job
// would send the message again. If PostgreSQL stays away longer, the job
// is cancelled rather than retried: the row stays "sending", which staff
// see, and the message, already accepted, is not sent twice.
func (o *Outbox) accepted(ctx context.Context, m db.Message) error {
	ctx = context.WithoutCancel(ctx)
	deadline := time.Now().Add(o.recordFor)
	wait := 100 * time.Millisecond
	for {
		try, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := db.New(o.pool).MessageAccepted(try, m.ID)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().Add(wait).After(deadline) {
			o.log.Error("message accepted by the mail server but not recorded; not retried", "message", m.ID, "kind", m.Kind, "err", err)
			return river.JobCancel(fmt.Errorf("record acceptance: %w", err))
		}
		time.Sleep(wait)
		wait = min(2*wait, 5*time.Second)
	}
}

func (o *Outbox) attemptFailed(ctx context.Context, m db.Message, status string, cause error) {
	o.log.Warn("message not sent", "message", m.ID, "kind", m.Kind, "attempt", m.Attempts, "status", status, "err", redact(cause.Error()))
	if err := db.New(o.pool).MessageAttemptFailed(context.WithoutCancel(ctx), db.MessageAttemptFailedParams{
		ID: m.ID, Status: status, LastError: errorText(cause),
	}); err != nil {
		// The job is retried all the same; only staff's view of the
		// attempt is behind (PostgreSQL away, say).
		o.log.Warn("record failed attempt", "message", m.ID, "err", err)
	}
}

// nothingToSend closes a message that need not go out. A list asked for
// an address with no bookings is deleted, so that the address is not kept.
func (o *Outbox) nothingToSend(ctx context.Context, m db.Message) error {
	q := db.New(o.pool)
	if m.Kind == KindLookup {
		return q.MessageDelete(ctx, m.ID)
	}
	return q.MessageCancel(ctx, m.ID)
}

// addresses finds e-mail addresses, which a mail server's answer often
// repeats: they are patient data, kept out of the log.
var addresses = regexp.MustCompile(`[^\s<>"'(),;:]+@[^\s<>"'(),;:]+`)

func redact(s string) string { return addresses.ReplaceAllString(s, "<address>") }

// errorText is what staff read of a failed attempt: the mail server's
// answer, cut to a line's length.
func errorText(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
