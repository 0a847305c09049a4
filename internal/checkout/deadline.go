package checkout

// Change deadlines: a patient may move a booking online until the type's
// deadline (hours before its start; the clinic's default when the type
// has none). A cancel inside it still goes through, marked late. Staff
// change bookings through internal/desk and are never bound by it.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// ChangeDeadline is when b stops being movable online; the zero time
// when its type has no deadline.
//
// Errors: NOT_FOUND (the type is gone).
func (s *Service) ChangeDeadline(ctx context.Context, b booking.Booking) (time.Time, error) {
	hours, err := db.New(s.pool).ChangeDeadlineHours(ctx, b.AppointmentTypeID)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, apperr.NotFoundf("", "This booking's appointment type is gone.")
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("change deadline: %w", err)
	}
	if hours <= 0 {
		return time.Time{}, nil
	}
	return b.Start.Add(-time.Duration(hours) * time.Hour), nil
}

// InsideDeadline reports whether now is past deadline (a zero deadline
// never is).
func InsideDeadline(deadline, now time.Time) bool {
	return !deadline.IsZero() && !now.Before(deadline)
}

// ErrChangeDeadline refuses a patient's move inside the deadline; phone
// is the clinic's, for a call instead.
func ErrChangeDeadline(deadline time.Time, phone string) *apperr.Error {
	e := apperr.New(apperr.Conflict, apperr.CodeChangeDeadline,
		"This appointment can no longer be moved online. Please call the practice.")
	e.Details = map[string]any{"deadline": deadline.UTC().Format(time.RFC3339), "phone": phone}
	return e
}

// checkMovable refuses b's move by its patient inside its deadline.
func (s *Service) checkMovable(ctx context.Context, b booking.Booking) error {
	deadline, err := s.ChangeDeadline(ctx, b)
	if err != nil {
		return err
	}
	if !InsideDeadline(deadline, s.now()) {
		return nil
	}
	clinic, err := db.New(s.pool).ClinicGet(ctx, b.ClinicID)
	if err != nil {
		return fmt.Errorf("clinic of a booking: %w", err)
	}
	return ErrChangeDeadline(deadline, clinic.ContactPhone)
}

// lateCancel reports whether the patient's cancel of b now falls inside
// its deadline.
func (s *Service) lateCancel(ctx context.Context, b booking.Booking) (bool, error) {
	deadline, err := s.ChangeDeadline(ctx, b)
	if err != nil {
		return false, err
	}
	return InsideDeadline(deadline, s.now()), nil
}
