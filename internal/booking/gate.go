package booking

// The step-by-step gate: one statement at a time, so that every way a
// booking can be refused is told apart.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/idempotency"
)

// lockPatient takes the patient's lock on the type (BookingPatientLock)
// for the rest of the transaction. Every path takes it before its insert,
// so two bookings never wait for each other's lock and row at once.
func lockPatient(ctx context.Context, q *db.Queries, p db.BookingInsertParams) error {
	if err := q.BookingPatientLock(ctx, db.BookingPatientLockParams{
		AppointmentTypeID: p.AppointmentTypeID, EmailKey: p.PatientEmailKey, PhoneKey: p.PatientPhoneKey,
	}); err != nil {
		return fmt.Errorf("lock patient: %w", err)
	}
	return nil
}

// lockSpecialist takes the specialist's booking lock (BookingSpecialistLock)
// for the rest of the transaction: every path takes it after the patient's
// lock and before it changes a booking row, so two bookings of one
// specialist never wait for each other's rows.
func lockSpecialist(ctx context.Context, q *db.Queries, id uuid.UUID) error {
	if err := q.BookingSpecialistLock(ctx, id); err != nil {
		return fmt.Errorf("lock specialist: %w", err)
	}
	return nil
}

// checkCooldown refuses a patient's booking p (inserted as id) within the
// type's cooldown of another. Run under lockPatient, it sees a booking
// that a concurrent request committed: the check is a later statement
// than the lock.
func checkCooldown(ctx context.Context, q *db.Queries, p db.BookingInsertParams, id uuid.UUID) error {
	until, err := cooldownUntil(ctx, q, p.AppointmentTypeID, p.PatientEmailKey, p.PatientPhoneKey, id)
	if err != nil {
		return err
	}
	rem := time.Until(until)
	if rem <= 0 {
		return nil
	}
	t, err := q.AppointmentTypeGet(ctx, p.AppointmentTypeID)
	if err != nil {
		return fmt.Errorf("load appointment type: %w", err)
	}
	return apperr.Cooldown(t.Name, rem)
}

// bookStepByStep is the gate in a transaction of single statements, which
// tells every way a booking can be refused apart.
func (s *Service) bookStepByStep(ctx context.Context, req BookRequest, token string, hash []byte) (Confirmation, error) {
	var b Booking
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := db.New(tx)
		params, err := validate(ctx, q, req)
		if err != nil {
			return err
		}
		if err := verificationStands(ctx, q, req, params.ClinicID); err != nil {
			return err
		}
		patient := req.Actor == ActorPatient
		if patient {
			if err := lockPatient(ctx, q, params); err != nil {
				return err
			}
		}
		if err := lockSpecialist(ctx, q, params.SpecialistID); err != nil {
			return err
		}
		params.ManageTokenHash = hash
		params.Language = language(req.Language)
		ch := Change{Kind: ChangeConfirm, Booking: pending(params, uuid.Nil), HoldID: req.HoldID, Actor: req.Actor, Offer: req.WaitlistOffer, Cooldown: req.Cooldown}
		if err := s.before(ctx, tx, ch); err != nil {
			return err
		}
		b, err = insert(ctx, q, params)
		if err != nil {
			return err
		}
		// After the insert, so a lost slot is told as such first.
		if patient {
			if err := checkCooldown(ctx, q, params, b.ID); err != nil {
				return err
			}
		}
		if err := writeAudit(ctx, q, b.ClinicID, req.Actor, "booking.create", b.ID, nil, &b, ""); err != nil {
			return err
		}
		ch.Booking = b
		if err := s.after(ctx, tx, ch); err != nil {
			return err
		}
		if r := req.Remember; r != nil {
			status, body, err := r.Encode(Confirmation{Booking: b, ManageToken: token})
			if err != nil {
				return err
			}
			rec, err := idempotency.Save(ctx, tx, r.Key, idempotency.Record{Status: status, Body: body})
			if err != nil {
				return err
			}
			if rec != nil {
				return &idempotency.ReplayError{Record: rec}
			}
		}
		return nil
	})
	if err != nil {
		return Confirmation{}, err
	}
	return Confirmation{Booking: b, ManageToken: token}, nil
}

// pending is the booking p will insert, as the hooks' Before step sees
// it: without its id, its version and its time of making, which the
// insert gives it.
func pending(p db.BookingInsertParams, rescheduledFrom uuid.UUID) Booking {
	return Booking{
		ClinicID: p.ClinicID, AppointmentTypeID: p.AppointmentTypeID, SpecialistID: p.SpecialistID,
		Start: p.SlotStart.UTC(), End: p.SlotEnd.UTC(), Status: StatusConfirmed,
		Patient:  Patient{Name: p.PatientName, Email: p.PatientEmail, Phone: p.PatientPhone},
		ClientID: p.ClientID, RescheduledFrom: rescheduledFrom, Language: p.Language,
	}
}

// insert runs the gate: zero rows, a unique violation and an exclusion
// violation are all the same lost race to the user.
func insert(ctx context.Context, q *db.Queries, p db.BookingInsertParams) (Booking, error) {
	row, err := q.BookingInsert(ctx, p)
	if err != nil {
		if lostRoom(err) {
			return Booking{}, roomTaken()
		}
		if errors.Is(err, pgx.ErrNoRows) || isSQLState(err, "23505", "23P01") {
			return Booking{}, apperr.SlotTaken()
		}
		return Booking{}, fmt.Errorf("insert booking: %w", err)
	}
	return fromRow(row), nil
}

func validate(ctx context.Context, q *db.Queries, req BookRequest) (db.BookingInsertParams, error) {
	if req.AppointmentTypeID == uuid.Nil {
		return db.BookingInsertParams{}, apperr.Invalidf("appointmentTypeId", "appointmentTypeId is required")
	}
	row, err := q.BookingTargetGet(ctx, db.BookingTargetGetParams{AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID})
	at := row.AppointmentType
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && req.ClinicID != uuid.Nil && at.ClinicID != req.ClinicID) {
		return db.BookingInsertParams{}, apperr.NotFoundf("appointmentTypeId", "No such appointment type.")
	}
	if err != nil {
		return db.BookingInsertParams{}, fmt.Errorf("load appointment type and specialist: %w", err)
	}
	switch {
	case req.SpecialistID == uuid.Nil:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "specialistId is required")
	case !row.SpecialistFound || !row.SameClinic:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "No such specialist at this clinic.")
	case !row.SpecialistActive:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "This specialist is not taking bookings.")
	case !row.Performs:
		return db.BookingInsertParams{}, apperr.Invalidf("specialistId", "This specialist does not perform %s.", at.Name)
	}

	start, end := req.Start.UTC(), req.End.UTC()
	duration := time.Duration(at.DurationMin) * time.Minute
	switch {
	case start.IsZero():
		return db.BookingInsertParams{}, apperr.Invalidf("slotStartDate", "slotStartDate is required")
	case !start.Truncate(time.Minute).Equal(start):
		return db.BookingInsertParams{}, apperr.Invalidf("slotStartDate", "slotStartDate must be on a whole minute")
	case req.End.IsZero():
		end = start.Add(duration)
	case !end.After(start):
		return db.BookingInsertParams{}, apperr.Invalidf("slotEndDate", "slotEndDate must be after slotStartDate")
	case end.Sub(start) != duration:
		return db.BookingInsertParams{}, apperr.Invalidf("slotEndDate",
			"%s takes %d minutes, but the slot given is %d minutes long", at.Name, at.DurationMin, int(end.Sub(start)/time.Minute))
	}

	p := req.Patient
	if !req.storedPatient {
		if p, err = ValidatePatientAs(req.Actor, req.Patient); err != nil {
			return db.BookingInsertParams{}, err
		}
	}
	emailKey, phoneKey := keys(p, row.ClinicCountry)
	return db.BookingInsertParams{
		ClinicID:          at.ClinicID,
		AppointmentTypeID: at.ID,
		SpecialistID:      req.SpecialistID,
		SlotStart:         start,
		SlotEnd:           end,
		PatientName:       p.Name,
		PatientEmail:      p.Email,
		PatientPhone:      p.Phone,
		PatientEmailKey:   emailKey,
		PatientPhoneKey:   phoneKey,
		ClientID:          req.ClientID,
		ResourceID:        uuid.NullUUID{UUID: req.ResourceID, Valid: req.ResourceID != uuid.Nil},
	}, nil
}
