package outbox

// What staff and the metrics read of the outbox.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// Status is one message as staff see it on a booking's page.
type Status struct {
	ID       uuid.UUID
	Kind     string
	Status   string // queued, sending, sent, retrying, failed, cancelled, held
	SendAt   time.Time
	Sent     *time.Time // when the mail server accepted it
	Attempts int
	Error    string // the last failed attempt's answer; why it was held back
}

// Undeliverable says the mail server refused the message for good.
func (s Status) Undeliverable() bool { return s.Status == "failed" }

// The role table's actions for what staff read here: a booking's
// messages are part of its page on the calendar; the kept copies of the
// development outbox hold patients' data, as a search's answers do.
const (
	ActStatus = staff.ActCalendar
	ActCopies = staff.ActSearch
)

// ForBooking lists the messages about a booking of u's clinic, oldest
// first. Errors: FORBIDDEN.
func (o *Outbox) ForBooking(ctx context.Context, u staff.User, bookingID uuid.UUID) ([]Status, error) {
	if err := u.May(ActStatus); err != nil {
		return nil, err
	}
	rows, err := db.New(o.pool).MessageListByBooking(ctx, db.MessageListByBookingParams{
		ClinicID: u.ClinicID, BookingID: uuid.NullUUID{UUID: bookingID, Valid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	out := make([]Status, len(rows))
	for i, r := range rows {
		out[i] = Status{
			ID: r.ID, Kind: r.Kind, Status: r.Status, SendAt: r.SendAt, Sent: r.AcceptedAt,
			Attempts: int(r.Attempts), Error: r.LastError,
		}
	}
	return out, nil
}

// Copy is a message kept for the development outbox page.
type Copy struct {
	MessageID uuid.UUID
	Recipient string
	Subject   string
	Created   time.Time
	Raw       []byte // the whole message (RFC 5322); empty in lists
}

// Copies lists the kept messages of u's clinic, newest first.
// Errors: FORBIDDEN.
func (o *Outbox) Copies(ctx context.Context, u staff.User) ([]Copy, error) {
	if err := u.May(ActCopies); err != nil {
		return nil, err
	}
	rows, err := db.New(o.pool).OutboxCopyList(ctx, u.ClinicID)
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	out := make([]Copy, len(rows))
	for i, r := range rows {
		out[i] = Copy{MessageID: r.MessageID, Recipient: r.Recipient, Subject: r.Subject, Created: r.CreatedAt}
	}
	return out, nil
}

// CopyOf is one kept message of u's clinic.
//
// Errors: FORBIDDEN, NOT_FOUND.
func (o *Outbox) CopyOf(ctx context.Context, u staff.User, messageID uuid.UUID) (Copy, error) {
	if err := u.May(ActCopies); err != nil {
		return Copy{}, err
	}
	r, err := db.New(o.pool).OutboxCopyGet(ctx, db.OutboxCopyGetParams{MessageID: messageID, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Copy{}, apperr.NotFoundf("", "No such message.")
	}
	if err != nil {
		return Copy{}, fmt.Errorf("read outbox: %w", err)
	}
	return Copy{MessageID: r.MessageID, Recipient: r.Recipient, Subject: r.Subject, Created: r.CreatedAt, Raw: r.Raw}, nil
}

// Backlog is how many messages are due and not yet sent (or given up),
// and how long the oldest of them has waited.
func (o *Outbox) Backlog(ctx context.Context) (waiting int64, oldest time.Duration, err error) {
	r, err := db.New(o.pool).MessageBacklog(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("outbox backlog: %w", err)
	}
	if r.Waiting == 0 {
		return 0, 0, nil
	}
	return r.Waiting, max(time.Since(r.Oldest), 0), nil
}

// Outcomes of attempts, for metrics; "handled" is a lookup's only one.
var Outcomes = []string{"sent", "retried", "failed", "cancelled", "held", "handled"}

// Counts is the number of attempts of this process by kind and outcome.
func (o *Outbox) Counts() map[[2]string]int64 { return o.stats.snapshot() }

// HeldCounts is the number of messages this process held back, by the
// scope of the cap they met (ScopeClinic, ScopeServer).
func (o *Outbox) HeldCounts() map[string]int64 {
	o.stats.mu.Lock()
	defer o.stats.mu.Unlock()
	out := make(map[string]int64, len(o.stats.byScope))
	for k, v := range o.stats.byScope {
		out[k] = v
	}
	return out
}

type stats struct {
	mu      sync.Mutex
	n       map[[2]string]int64
	byScope map[string]int64
}

func newStats() *stats { return &stats{n: map[[2]string]int64{}, byScope: map[string]int64{}} }

func (s *stats) held(scope string) {
	s.mu.Lock()
	s.byScope[scope]++
	s.mu.Unlock()
}

// count counts an outcome. A lookup is counted once, as handled, when its
// job ends, whether or not the address had bookings (and so a list was
// sent): the metric must not tell one from the other.
func (s *stats) count(kind, outcome string) {
	if kind == KindLookup {
		if outcome == "retried" {
			return
		}
		outcome = "handled"
	}
	s.mu.Lock()
	s.n[[2]string{kind, outcome}]++
	s.mu.Unlock()
}

func (s *stats) snapshot() map[[2]string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[[2]string]int64, len(s.n))
	for k, v := range s.n {
		out[k] = v
	}
	return out
}
