package booking

// Changes to a booking: cancel and reschedule, each in one transaction
// with its audit row.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// CancelRequest cancels one booking.
type CancelRequest struct {
	BookingID uuid.UUID
	ClinicID  uuid.UUID // when set, a booking of another clinic is not found
	Actor     string
	Reason    string
	// Quiet: the patient is not written to about it (their details are
	// being erased); the change's hooks are told so (Change.Quiet).
	Quiet bool
	// Late: the patient cancels inside the type's change deadline; the
	// booking is marked so for staff (Booking.LateCancel).
	Late bool
	// Series: the cancel is one part of a cancel of a series' sessions
	// (CancelSeriesFrom), told to the hooks (Change.Series).
	Series SeriesStep
}

// Cancel frees a booking's slot at once. Cancelling a booking that is
// already cancelled changes nothing and is not an error; changed says
// which. A booking that was moved is not cancelled in its successor's
// stead: the caller (a stale page, or a cancel that lost the race with
// the move) is told so. A cancel by the patient (Actor ActorPatient)
// keeps the booking in their cooldown for CancelKeepsCooldown at most; a
// cancel by staff takes it out at once.
//
// Errors: NOT_FOUND, INVALID_ARGUMENT (reason: see textfield.Reason),
// BOOKING_NOT_ACTIVE (409: the booking was moved).
func (s *Service) Cancel(ctx context.Context, req CancelRequest) (b Booking, changed bool, err error) {
	if req.Reason, err = textfield.Reason.Check(req.Reason); err != nil {
		return Booking{}, false, err
	}
	var ch Change
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		ch, changed, err = s.cancel(ctx, tx, req)
		b = ch.Booking
		return err
	})
	if err == nil && changed {
		s.notify(ctx, ch)
	}
	return b, changed, err
}

// CancelIn is Cancel inside the caller's transaction tx, for a change of
// which the cancel is one part. Nobody is told before tx commits: the
// caller hands the change it returns (changed) to Tell once it has.
//
// Errors: as Cancel's.
func (s *Service) CancelIn(ctx context.Context, tx pgx.Tx, req CancelRequest) (ch Change, changed bool, err error) {
	if req.Reason, err = textfield.Reason.Check(req.Reason); err != nil {
		return Change{}, false, err
	}
	return s.cancel(ctx, tx, req)
}

// Tell tells the observers of changes committed by the caller's own
// transaction (CancelIn).
func (s *Service) Tell(ctx context.Context, chs ...Change) {
	for _, ch := range chs {
		s.notify(ctx, ch)
	}
}

// cancel is Cancel's work in tx: the change, and whether there was one.
func (s *Service) cancel(ctx context.Context, tx pgx.Tx, req CancelRequest) (Change, bool, error) {
	q := db.New(tx)
	old, err := lockBooking(ctx, q, req.BookingID, req.ClinicID)
	if err != nil {
		return Change{}, false, err
	}
	if old.Status == StatusRescheduled {
		return Change{}, false, apperr.New(apperr.Conflict, apperr.CodeBookingNotActive, "This booking was moved to another time; cancel it there.")
	}
	if old.Status != StatusConfirmed {
		return Change{Kind: ChangeCancel, Booking: old}, false, nil
	}
	ch := Change{Kind: ChangeCancel, Booking: old, Actor: req.Actor, Reason: req.Reason, Quiet: req.Quiet, Series: req.Series}
	if err := s.before(ctx, tx, ch); err != nil {
		return Change{}, false, err
	}
	// The patient's own cancel keeps their cooldown for a while; staff's lifts it.
	b, err := setStatus(ctx, q, old.ID, StatusCancelled, req.Reason, true, req.Actor == ActorPatient)
	if err != nil {
		return Change{}, false, err
	}
	if req.Late {
		row, err := q.BookingMarkLateCancel(ctx, b.ID)
		if err != nil {
			return Change{}, false, fmt.Errorf("mark late cancel: %w", err)
		}
		b = fromRow(row)
	}
	if err := writeAudit(ctx, q, b.ClinicID, req.Actor, "booking.cancel", b.ID, &old, &b, req.Reason); err != nil {
		return Change{}, false, err
	}
	ch.Booking = b
	if err := s.after(ctx, tx, ch); err != nil {
		return Change{}, false, err
	}
	return ch, true, nil
}

// RescheduleRequest moves a confirmed booking to another start, and
// optionally another specialist of the same type.
type RescheduleRequest struct {
	BookingID    uuid.UUID
	ClinicID     uuid.UUID
	Start        time.Time
	SpecialistID uuid.UUID // uuid.Nil: the same specialist
	Actor        string
	Reason       string
	// ExpectVersion, when set, is the version the caller saw (If-Match);
	// checked under the row lock, so two reschedules cannot both pass.
	ExpectVersion int32
}

// Reschedule cancels the old booking and inserts the new one in one
// transaction: when the new slot is taken, nothing changes. The manage link
// moves to the new booking.
//
// Errors: NOT_FOUND, BOOKING_NOT_ACTIVE (409), INVALID_ARGUMENT (reason as
// for Cancel, or the new time), SLOT_TAKEN.
func (s *Service) Reschedule(ctx context.Context, req RescheduleRequest) (Booking, error) {
	var err error
	if req.Reason, err = textfield.Reason.Check(req.Reason); err != nil {
		return Booking{}, err
	}
	var nb, prev Booking
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := db.New(tx)
		old, err := lockBooking(ctx, q, req.BookingID, req.ClinicID)
		if err != nil {
			return err
		}
		if req.ExpectVersion != 0 && old.Version != req.ExpectVersion {
			return ErrVersionMismatch(old.Version)
		}
		if old.Status != StatusConfirmed {
			return apperr.New(apperr.Conflict, apperr.CodeBookingNotActive, "This booking was cancelled or moved and cannot be rescheduled.")
		}
		row, err := q.BookingGet(ctx, old.ID)
		if err != nil {
			return fmt.Errorf("load booking: %w", err)
		}
		specialist := req.SpecialistID
		if specialist == uuid.Nil {
			specialist = old.SpecialistID
		}
		params, err := validate(ctx, q, BookRequest{
			AppointmentTypeID: old.AppointmentTypeID,
			SpecialistID:      specialist,
			Start:             req.Start,
			Patient:           old.Patient,
			ClientID:          old.ClientID,
			Language:          old.Language,
			storedPatient:     true,
		})
		if err != nil {
			return err
		}
		// Before the old row changes: a booking of its time waits for this
		// transaction, which must not then wait for that one's lock.
		if err := lockSpecialist(ctx, q, specialist); err != nil {
			return err
		}
		if err := lockResources(ctx, q, old.ClinicID, old.AppointmentTypeID); err != nil {
			return err
		}
		next := pending(params, old.ID)
		if err := s.before(ctx, tx, Change{Kind: ChangeReschedule, Booking: next, Previous: &old, Actor: req.Actor, Reason: req.Reason}); err != nil {
			return err
		}
		if prev, err = setStatus(ctx, q, old.ID, StatusRescheduled, req.Reason, false, false); err != nil {
			return err
		}
		params.ManageTokenHash = row.ManageTokenHash
		params.RescheduledFrom = uuid.NullUUID{UUID: old.ID, Valid: true}
		params.Language = old.Language
		nb, err = insert(ctx, q, params)
		if err != nil {
			return err
		}
		if old.SeriesID != uuid.Nil {
			// A moved session keeps its place in its series.
			row, err := q.SeriesBookingMark(ctx, db.SeriesBookingMarkParams{SeriesID: uuid.NullUUID{UUID: old.SeriesID, Valid: true},
				SeriesPosition: pgtype.Int4{Int32: int32(old.SeriesPosition), Valid: true}, ID: nb.ID, ClinicID: nb.ClinicID})
			if err != nil {
				return fmt.Errorf("keep the series place: %w", err)
			}
			nb = fromRow(row)
		}
		if err := q.BookingLinksMove(ctx, db.BookingLinksMoveParams{FromID: old.ID, ToID: nb.ID}); err != nil {
			return fmt.Errorf("move manage links: %w", err)
		}
		if err := writeAudit(ctx, q, nb.ClinicID, req.Actor, "booking.reschedule", old.ID, &old, &nb, req.Reason); err != nil {
			return err
		}
		return s.after(ctx, tx, Change{Kind: ChangeReschedule, Booking: nb, Previous: &prev, Actor: req.Actor, Reason: req.Reason})
	})
	if err != nil {
		return Booking{}, err
	}
	s.notify(ctx, Change{Kind: ChangeReschedule, Booking: nb, Previous: &prev, Actor: req.Actor, Reason: req.Reason})
	return nb, nil
}

func lockBooking(ctx context.Context, q *db.Queries, id, clinicID uuid.UUID) (Booking, error) {
	row, err := q.BookingGetForUpdate(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && clinicID != uuid.Nil && row.ClinicID != clinicID) {
		return Booking{}, apperr.NotFoundf("bookingId", "No such booking.")
	}
	if err != nil {
		return Booking{}, fmt.Errorf("lock booking: %w", err)
	}
	return fromRow(row), nil
}

func setStatus(ctx context.Context, q *db.Queries, id uuid.UUID, status, reason string, keepToken, online bool) (Booking, error) {
	row, err := q.BookingSetStatus(ctx, db.BookingSetStatusParams{
		ID: id, Status: status, CancelReason: reason, KeepToken: keepToken, CancelledOnline: online,
	})
	if err != nil {
		return Booking{}, fmt.Errorf("set booking status: %w", err)
	}
	return fromRow(row), nil
}

func writeAudit(ctx context.Context, q *db.Queries, clinicID uuid.UUID, actor, action string, id uuid.UUID, before, after *Booking, reason string) error {
	e := auditEntry(actor, action, before, after, reason)
	e.ClinicID, e.EntityID = clinicID, id.String()
	return audit.Write(ctx, q, e)
}

// auditEntry is the audit entry of a booking change; the single-statement
// gate fills in the clinic and the booking's id itself.
func auditEntry(actor, action string, before, after *Booking, reason string) audit.Entry {
	return audit.Entry{Actor: actor, Action: action, Entity: "booking", Before: before, After: after, Reason: reason}
}
