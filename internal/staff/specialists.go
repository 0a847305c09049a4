package staff

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// SpecialistInput is the specialist form.
type SpecialistInput struct {
	Name     string
	Priority int
	Active   bool
	Version  int32 // for edits: the version the form was opened at
}

func (in *SpecialistInput) validate() error {
	var err error
	in.Name, err = textfield.SpecialistName.Check(in.Name)
	switch {
	case err != nil:
		return err
	case in.Name == "":
		return apperr.Invalidf("name", "A specialist needs a name.")
	case in.Priority < -1000 || in.Priority > 1000:
		return apperr.Invalidf("priority", "Priority is a whole number from -1000 to 1000.")
	}
	return nil
}

// Specialist is one of a clinic's specialists as staff manage them.
type Specialist struct {
	ID, ClinicID uuid.UUID
	Name         string
	Priority     int32
	Active       bool
	Version      int32
}

func specialistFromRow(r db.Specialist) Specialist {
	return Specialist{ID: r.ID, ClinicID: r.ClinicID, Name: r.Name, Priority: r.Priority, Active: r.Active, Version: r.Version}
}

// Specialists lists the clinic's specialists.
//
// Errors: FORBIDDEN.
func (s *Service) Specialists(ctx context.Context, u User) ([]Specialist, error) {
	if err := u.May(ActSpecialists); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).SpecialistListByClinic(ctx, u.ClinicID)
	return fromRows(rows, err, specialistFromRow)
}

// Specialist is one of the clinic's specialists.
//
// Errors: FORBIDDEN, NOT_FOUND (also for another clinic's).
func (s *Service) Specialist(ctx context.Context, u User, id uuid.UUID) (Specialist, error) {
	if err := u.May(ActSpecialists); err != nil {
		return Specialist{}, err
	}
	return s.specialist(ctx, u.ClinicID, id)
}

// specialist is one of the clinic's specialists, for a caller that has
// checked its own action.
func (s *Service) specialist(ctx context.Context, clinicID, id uuid.UUID) (Specialist, error) {
	sp, err := db.New(s.pool).SpecialistGetInClinic(ctx, db.SpecialistGetInClinicParams{ID: id, ClinicID: clinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Specialist{}, notFound("specialist")
	}
	return specialistFromRow(sp), err
}

// CreateSpecialist adds a specialist (ActSpecialistsEdit).
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (name, priority).
func (s *Service) CreateSpecialist(ctx context.Context, u User, in SpecialistInput) (Specialist, error) {
	if err := u.May(ActSpecialistsEdit); err != nil {
		return Specialist{}, err
	}
	if err := in.validate(); err != nil {
		return Specialist{}, err
	}
	var sp db.Specialist
	err := s.tx(ctx, u, func(q *db.Queries) error {
		var err error
		sp, err = q.SpecialistInsert(ctx, db.SpecialistInsertParams{ClinicID: u.ClinicID, Name: in.Name, Priority: int32(in.Priority), Active: in.Active})
		if err != nil {
			return err
		}
		return audit(ctx, q, u, "specialist.create", "specialist", sp.ID.String(), nil, sp, "")
	})
	return specialistFromRow(sp), err
}

// UpdateSpecialist edits name, priority and active (ActSpecialistsEdit). Deactivating
// keeps their bookings; FutureBookings lists them for staff to handle.
//
// Errors: FORBIDDEN, NOT_FOUND, INVALID_ARGUMENT, CONCURRENCY_CONFLICT (412, with the current row).
func (s *Service) UpdateSpecialist(ctx context.Context, u User, id uuid.UUID, in SpecialistInput) (Specialist, error) {
	if err := u.May(ActSpecialistsEdit); err != nil {
		return Specialist{}, err
	}
	if err := in.validate(); err != nil {
		return Specialist{}, err
	}
	var sp db.Specialist
	err := s.tx(ctx, u, func(q *db.Queries) error {
		before, err := q.SpecialistLockInClinic(ctx, db.SpecialistLockInClinicParams{ID: id, ClinicID: u.ClinicID})
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("specialist")
		}
		if err != nil {
			return err
		}
		sp, err = q.SpecialistUpdate(ctx, db.SpecialistUpdateParams{
			ID: id, ClinicID: u.ClinicID, Name: in.Name, Priority: int32(in.Priority), Active: in.Active, Version: in.Version,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return Stale(specialistFromRow(before))
		}
		if err != nil {
			return err
		}
		return audit(ctx, q, u, "specialist.update", "specialist", id.String(), before, sp, "")
	})
	return specialistFromRow(sp), err
}

// FutureBooking is a confirmed booking still to come, as the page of an
// inactive specialist lists it for staff to move or cancel.
type FutureBooking struct {
	ID                    uuid.UUID
	SlotStart, SlotEnd    time.Time
	PatientName, TypeName string
}

func futureBookingFromRow(r db.BookingListFutureBySpecialistRow) FutureBooking {
	return FutureBooking{ID: r.ID, SlotStart: r.SlotStart, SlotEnd: r.SlotEnd, PatientName: r.PatientName, TypeName: r.TypeName}
}

// FutureBookings are a specialist's confirmed bookings from now on; none
// for another clinic's specialist.
//
// Errors: FORBIDDEN.
func (s *Service) FutureBookings(ctx context.Context, u User, id uuid.UUID) ([]FutureBooking, error) {
	if err := u.May(ActSpecialists); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).BookingListFutureBySpecialist(ctx, db.BookingListFutureBySpecialistParams{SpecialistID: id, ClinicID: u.ClinicID})
	return fromRows(rows, err, futureBookingFromRow)
}
