package outbox

// Writing messages, in the transaction of the change they tell of.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/riverqueue/river"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// message is a message to write.
type message = db.MessageInsertParams

// Enqueue writes the messages a booking change sends, in its transaction
// tx, once the booking is written (a booking.TxHook's After step):
// a new booking's confirmation and reminder; a move's change notice
// and the new time's reminder, the old reminder cancelled; a
// cancellation's notice, its reminder cancelled (a quiet one's reminder
// only). A booking without an e-mail address sends nothing.
func (o *Outbox) Enqueue(ctx context.Context, tx pgx.Tx, ch booking.Change) error {
	q := db.New(tx)
	b := ch.Booking
	var msgs []message
	switch {
	case ch.Series.ID != uuid.Nil:
		var err error
		if msgs, err = o.seriesPart(ctx, tx, q, ch); err != nil || ch.Quiet {
			return err
		}
	case ch.Kind == booking.ChangeConfirm:
		var err error
		if msgs, err = o.confirmation(ctx, q, ch); err != nil {
			return err
		}
	case ch.Kind == booking.ChangeCancel:
		if err := o.cancelPending(ctx, tx, q, b.ID); err != nil {
			return err
		}
		if ch.Quiet {
			return nil // the patient is being erased: nothing more is sent
		}
		m := o.about(b, KindCancellation, o.now(), causeOf(ch.Actor))
		m.Reason = staffReason(ch)
		msgs = append(msgs, m)
	case ch.Kind == booking.ChangeReschedule:
		if ch.Previous != nil {
			if err := o.cancelPending(ctx, tx, q, ch.Previous.ID); err != nil {
				return err
			}
		}
		m := o.about(b, KindChange, o.now(), causeOf(ch.Actor))
		m.Reason = staffReason(ch)
		if ch.Previous != nil {
			m.PreviousID = uuid.NullUUID{UUID: ch.Previous.ID, Valid: true}
		}
		msgs = append(msgs, m)
		r, ok, err := o.reminder(ctx, q, b)
		if err != nil {
			return err
		}
		if ok {
			msgs = append(msgs, r)
		}
	default:
		return fmt.Errorf("outbox: unknown change %q", ch.Kind)
	}
	if b.Patient.Email == "" {
		return nil
	}
	return o.write(ctx, tx, msgs)
}

// Queue writes a new booking's messages as Enqueue does, for a booking
// written in one batch (a booking.TxHook's Queue step): their jobs at
// once, in tx, before the booking's locks are taken, and their rows on
// later, sent with the booking's insert and ahead of it (a row's booking
// is checked at the commit). Any other change is ErrNotQueued: Enqueue
// writes it.
func (o *Outbox) Queue(ctx context.Context, tx pgx.Tx, later db.DBTX, ch booking.Change) error {
	if ch.Kind != booking.ChangeConfirm || ch.Series.ID != uuid.Nil {
		return booking.ErrNotQueued
	}
	msgs, err := o.confirmation(ctx, db.New(tx), ch)
	if err != nil || ch.Booking.Patient.Email == "" {
		return err
	}
	return o.writeTo(ctx, tx, later, msgs)
}

// confirmation is what a new booking sends: its confirmation, and its
// reminder when the type sends one.
func (o *Outbox) confirmation(ctx context.Context, q *db.Queries, ch booking.Change) ([]message, error) {
	b := ch.Booking
	msgs := []message{o.about(b, KindConfirmation, b.CreatedAt, causeOf(ch.Actor))}
	r, ok, err := o.reminder(ctx, q, b)
	if err != nil {
		return nil, err
	}
	if ok {
		msgs = append(msgs, r)
	}
	return msgs, nil
}

// staffReason is the reason a notice gives: the one a staff member
// wrote. What anyone else typed (through a manage link, the public API)
// is never put in an e-mail: it would carry a stranger's words, links
// among them, from the clinic's own address to whatever address they
// booked with.
func staffReason(ch booking.Change) string {
	if causeOf(ch.Actor) != CauseStaff {
		return ""
	}
	return ch.Reason
}

func (o *Outbox) about(b booking.Booking, kind string, at time.Time, cause string) message {
	return message{
		ID: uuid.New(), ClinicID: b.ClinicID, BookingID: uuid.NullUUID{UUID: b.ID, Valid: true},
		Kind: kind, Recipient: b.Patient.Email, Language: b.Language, SendAt: at.UTC(), Cause: cause,
	}
}

// reminder is b's reminder, at the type's time before the start; none when
// the type sends none or that time has passed already.
func (o *Outbox) reminder(ctx context.Context, q *db.Queries, b booking.Booking) (message, bool, error) {
	lead, err := o.reminderLead(ctx, q, b.AppointmentTypeID)
	if err != nil {
		return message{}, false, err
	}
	if lead <= 0 {
		return message{}, false, nil
	}
	at := b.Start.Add(-lead)
	if !at.After(o.now()) {
		return message{}, false, nil
	}
	return o.about(b, KindReminder, at, CauseSchedule), true, nil
}

// cancelPending cancels the messages of a booking, cancelled or moved,
// that have not gone out, and their jobs: its reminder, and a confirmation
// or change notice still waiting for a retry.
func (o *Outbox) cancelPending(ctx context.Context, tx pgx.Tx, q *db.Queries, bookingID uuid.UUID) error {
	jobs, err := q.MessageCancelPending(ctx, uuid.NullUUID{UUID: bookingID, Valid: true})
	if err != nil {
		return fmt.Errorf("cancel pending messages: %w", err)
	}
	for _, id := range jobs {
		if !id.Valid {
			continue
		}
		if _, err := o.river.JobCancelTx(ctx, tx, id.Int64); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("cancel message job: %w", err)
		}
	}
	return nil
}

// write inserts the queue's jobs, then the rows that name them, in tx.
func (o *Outbox) write(ctx context.Context, tx pgx.Tx, msgs []message) error {
	return o.writeTo(ctx, tx, tx, msgs)
}

// writeTo inserts the queue's jobs in tx, then the rows that name them
// on rows: tx itself, or a batch to be sent later in tx.
func (o *Outbox) writeTo(ctx context.Context, tx pgx.Tx, rows db.DBTX, msgs []message) error {
	if len(msgs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(msgs))
	for i, m := range msgs {
		opts := &river.InsertOpts{Queue: o.cfg.Queue}
		if m.SendAt.After(o.now()) {
			opts.ScheduledAt = m.SendAt
		}
		params[i] = river.InsertManyParams{Args: sendArgs{MessageID: m.ID}, InsertOpts: opts}
	}
	res, err := o.river.InsertManyTx(ctx, tx, params)
	if err != nil {
		return fmt.Errorf("enqueue messages: %w", err)
	}
	msgRows := make([]db.MessageInsertParams, len(msgs))
	for i, m := range msgs {
		msgRows[i] = m
		if m.Cause == "" {
			msgRows[i].Cause = defaultCause(m.Kind)
		}
		msgRows[i].JobID = pgtype.Int8{Int64: res[i].Job.ID, Valid: true}
	}
	var ierr error
	db.New(rows).MessageInsert(ctx, msgRows).Exec(func(_ int, err error) {
		if err != nil && ierr == nil {
			ierr = err
		}
	})
	if ierr != nil {
		return fmt.Errorf("write messages: %w", ierr)
	}
	return nil
}

// RequestLookup enqueues the list of an address's coming bookings at a
// clinic. It is written whether or not the address has any, so that
// asking takes the same path either way; the worker sends nothing (and
// forgets the address) when there are none.
func (o *Outbox) RequestLookup(ctx context.Context, clinicID uuid.UUID, email, language string) error {
	m := message{
		ID: uuid.New(), ClinicID: clinicID, Kind: KindLookup, Recipient: email, Language: language, SendAt: o.now().UTC(),
		Cause: CausePublic,
	}
	return pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error { return o.write(ctx, tx, []message{m}) })
}

// leadTTL is how long a type's reminder lead time is kept in memory: a
// booking made within it of an admin's change may still take the old one.
const leadTTL = 5 * time.Second

type lead struct {
	d    time.Duration
	read time.Time
}

// reminderLead is how long before its start a booking of the type is
// reminded (0: never), from memory when read less than leadTTL ago: it is
// asked on every booking, inside its transaction.
func (o *Outbox) reminderLead(ctx context.Context, q *db.Queries, typeID uuid.UUID) (time.Duration, error) {
	o.leadsMu.Lock()
	l, ok := o.leads[typeID]
	o.leadsMu.Unlock()
	if ok && time.Since(l.read) < leadTTL {
		return l.d, nil
	}
	t, err := q.AppointmentTypeGet(ctx, typeID)
	if err != nil {
		return 0, fmt.Errorf("load appointment type: %w", err)
	}
	l = lead{d: time.Duration(t.ReminderMin) * time.Minute, read: time.Now()}
	o.leadsMu.Lock()
	o.leads[typeID] = l
	o.leadsMu.Unlock()
	return l.d, nil
}
