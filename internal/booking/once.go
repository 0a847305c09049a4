package booking

// The one-statement path of the gate: the common booking written by one
// statement (in one round trip, or in the transaction its e-mails join).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/identity"
)

// bookAtOnce runs the gate as one statement (BookingCreate) instead of
// six, for a request that names its clinic and its end, as one made from a
// hold does: with transaction hooks that have no Before step, in one
// batch with what their Queue steps queued (bookInBatch); otherwise by
// itself (bookInSteps). The booking, its audit row and the stored answer
// are built here first, so the statement only has to write them.
// done is false when nothing was written, for whatever reason (a field
// that is wrong, the type or specialist not bookable, the slot taken, a
// record under the idempotency key): the step-by-step gate then decides,
// with its own errors, so both paths answer alike.
func (s *Service) bookAtOnce(ctx context.Context, req BookRequest, token string, hash []byte) (c Confirmation, done bool, err error) {
	start, end := req.Start.UTC(), req.End.UTC()
	patient, perr := ValidatePatientAs(req.Actor, req.Patient)
	if req.ClinicID == uuid.Nil || req.AppointmentTypeID == uuid.Nil || req.SpecialistID == uuid.Nil || perr != nil ||
		start.IsZero() || !start.Truncate(time.Minute).Equal(start) || !end.After(start) ||
		(req.Remember != nil && req.Remember.Key.ClinicID != req.ClinicID) {
		return Confirmation{}, false, nil
	}
	// Only a phone number without its country code needs the clinic's
	// country, which costs a round trip of its own.
	region := identity.DefaultRegion
	if identity.NeedsRegion(patient.Phone) {
		if region, err = clinicRegion(ctx, db.New(s.pool), req.ClinicID); err != nil {
			return Confirmation{}, false, err
		}
	}
	emailKey, phoneKey := keys(patient, region)
	b := Booking{
		ID: uuid.New(), ClinicID: req.ClinicID, AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID,
		ResourceID: req.ResourceID, Start: start, End: end, Status: StatusConfirmed, Patient: patient, ClientID: req.ClientID,
		// As PostgreSQL keeps it, so the stored answer and the audit row
		// read like the row.
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
		Version:   1,
		Language:  language(req.Language),
	}
	c = Confirmation{Booking: b, ManageToken: token}
	row, err := audit.Row(auditEntry(req.Actor, "booking.create", nil, &b, ""))
	if err != nil {
		return c, false, err
	}
	p := db.BookingCreateParams{
		ID: b.ID, ClinicID: b.ClinicID, AppointmentTypeID: b.AppointmentTypeID, SpecialistID: b.SpecialistID,
		SlotStart: start, SlotEnd: end, PatientName: patient.Name, PatientEmail: patient.Email, PatientPhone: patient.Phone,
		PatientEmailKey: emailKey, PatientPhoneKey: phoneKey, CancelKeepsSec: int32(CancelKeepsCooldown / time.Second),
		ClientID: req.ClientID, ManageTokenHash: hash, CreatedAt: b.CreatedAt, Actor: row.Actor, AuditAfter: row.After,
		ResourceID: uuid.NullUUID{UUID: req.ResourceID, Valid: req.ResourceID != uuid.Nil},
	}
	if r := req.Remember; r != nil {
		status, body, err := r.Encode(c)
		if err != nil {
			return c, false, err
		}
		p.Remember = true
		p.Principal, p.Route, p.IdempotencyKey, p.RequestHash = r.Key.Principal, r.Key.Route, r.Key.Key, r.Key.RequestHash
		p.StatusCode, p.Body = int32(status), body
	}
	p.Language = b.Language
	ch := Change{Kind: ChangeConfirm, Booking: b, HoldID: req.HoldID, Actor: req.Actor, Offer: req.WaitlistOffer, Cooldown: req.Cooldown}
	p.CheckCooldown = req.Actor == ActorPatient
	var n int64
	if s.batched() {
		n, err = s.bookInBatch(ctx, p, ch)
	} else {
		n, err = s.bookInSteps(ctx, p, ch)
	}
	switch {
	case errors.Is(err, errNotWritten), isSQLState(err, "23505", "23P01"):
		return c, false, nil
	case err != nil && n == 1:
		return c, false, err
	case err != nil:
		return c, false, fmt.Errorf("insert booking: %w", err)
	}
	return c, n == 1, nil
}

// bookInSteps writes the booking of p by its one statement: alone, in one
// round trip, without transaction hooks; with them, in a transaction
// (begin, the locks and the hooks' Before steps when there are any, the
// statement, their After steps, commit). n is the count of bookings the
// statement wrote.
func (s *Service) bookInSteps(ctx context.Context, p db.BookingCreateParams, ch Change) (n int64, err error) {
	err = s.atomically(ctx, func(q conn, tx pgx.Tx) error {
		if tx != nil && s.hasBefore() {
			// The Before steps run under the locks the step-by-step path
			// holds for them, taken in its order: the patient's (a
			// patient's booking), then the specialist's. The statement
			// takes them again, which a transaction holding them does at
			// once. Without a Before step, the statement takes them alone.
			tq := db.New(tx)
			if p.CheckCooldown {
				if err := lockPatient(ctx, tq, db.BookingInsertParams{AppointmentTypeID: p.AppointmentTypeID, PatientEmailKey: p.PatientEmailKey, PatientPhoneKey: p.PatientPhoneKey}); err != nil {
					return err
				}
			}
			if err := lockSpecialist(ctx, tq, p.SpecialistID); err != nil {
				return err
			}
			if err := s.before(ctx, tx, ch); err != nil {
				return err
			}
		}
		var err error
		if p.CheckCooldown {
			n, err = createAsPatient(ctx, q, p)
		} else {
			n, err = db.New(q).BookingCreate(ctx, p)
		}
		if err != nil {
			return err
		}
		if n != 1 {
			// Nothing written: what the Before steps wrote goes too (the
			// step-by-step path runs them again).
			return errNotWritten
		}
		return s.after(ctx, tx, ch)
	})
	return n, err
}

// errNotWritten rolls back the one-statement path's transaction when its
// statement wrote nothing.
var errNotWritten = errors.New("booking: not written")

// conn is what the one-statement gate runs on: the pool, or a transaction
// when transaction hooks write with it.
type conn = db.DBTX

// atomically runs f on the pool, in one round trip, when there are no
// transaction hooks (tx is nil); with them, in a transaction they join.
// Either is run again if PostgreSQL aborted it as a deadlock's victim.
func (s *Service) atomically(ctx context.Context, f func(q conn, tx pgx.Tx) error) error {
	if len(s.hooks) == 0 {
		return retried(ctx, func() error { return f(s.pool, nil) })
	}
	return s.inTx(ctx, func(tx pgx.Tx) error { return f(tx, tx) })
}

// createAsPatient runs BookingCreate after BookingPatientLock, in one
// round trip: a batch runs as one implicit transaction (or inside the
// explicit one q is), so the lock is held until the booking commits, and
// the insert, a later statement, sees every booking that the lock's
// previous holder committed.
func createAsPatient(ctx context.Context, q conn, p db.BookingCreateParams) (int64, error) {
	b := &pgx.Batch{}
	queued := db.New(queue{b})
	_ = queued.BookingPatientLock(ctx, db.BookingPatientLockParams{AppointmentTypeID: p.AppointmentTypeID, EmailKey: p.PatientEmailKey, PhoneKey: p.PatientPhoneKey})
	_, _ = queued.BookingCreate(ctx, p)
	br := q.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return 0, err
	}
	var n int64
	if err := br.QueryRow().Scan(&n); err != nil {
		_ = br.Close()
		return 0, err
	}
	// Closing reads the end of the implicit transaction: the booking counts
	// only once it committed.
	return n, br.Close()
}
