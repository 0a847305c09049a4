package practice

// A specialist's date overrides: the days they depart from their week.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// Override is a day on which a specialist departs from their week: closed,
// or working only from StartMin to EndMin (minutes from local midnight).
type Override struct {
	ID               int64
	SpecialistID     uuid.UUID
	Day              time.Time // the local day, as midnight UTC
	Closed           bool
	StartMin, EndMin int
	Note             string
}

func minutesOf(t pgtype.Time) int { return int(t.Microseconds / int64(time.Minute/time.Microsecond)) }

// Overrides are a specialist's overrides from the local day fromDay
// (midnight UTC) on, in order.
//
// Errors: FORBIDDEN, NOT_FOUND (apperr.CodeNotFound; also for another
// clinic's specialist).
func (s *Service) Overrides(ctx context.Context, u staff.User, specialistID uuid.UUID, fromDay time.Time) ([]Override, error) {
	if err := u.May(staff.ActOverrides); err != nil {
		return nil, err
	}
	if _, err := s.specialist(ctx, u.ClinicID, specialistID); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).OverrideListBySpecialist(ctx, db.OverrideListBySpecialistParams{SpecialistID: specialistID, FromDay: fromDay})
	if err != nil {
		return nil, fmt.Errorf("list overrides: %w", err)
	}
	out := make([]Override, len(rows))
	for i, o := range rows {
		out[i] = Override{ID: o.ID, SpecialistID: specialistID, Day: o.Day, Closed: o.Closed, StartMin: int(o.StartMin), EndMin: int(o.EndMin), Note: o.Note}
	}
	return out, nil
}

// Override is one override of the user's clinic.
//
// Errors: FORBIDDEN, NOT_FOUND (apperr.CodeNotFound; also for another
// clinic's).
func (s *Service) Override(ctx context.Context, u staff.User, id int64) (Override, error) {
	if err := u.May(staff.ActOverrides); err != nil {
		return Override{}, err
	}
	o, err := db.New(s.pool).OverrideGet(ctx, db.OverrideGetParams{ID: id, ClinicID: u.ClinicID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Override{}, staff.NotFound("override")
	}
	if err != nil {
		return Override{}, fmt.Errorf("get override: %w", err)
	}
	return Override{ID: o.ID, SpecialistID: o.SpecialistID, Day: o.Day, Closed: o.Closed, StartMin: minutesOf(o.StartLocal), EndMin: minutesOf(o.EndLocal), Note: o.Note}, nil
}
