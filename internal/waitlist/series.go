package waitlist

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
)

// seriesBooked ends the patient's own waiting places for the type of a
// series just booked (its first session b), in the series' transaction:
// the patient has their times. A place under an offer keeps its offer,
// the time it holds theirs to take or to let lapse.
func (s *Openings) seriesBooked(ctx context.Context, tx pgx.Tx, b booking.Booking) error {
	q := db.New(tx)
	emailKey, phoneKey, err := booking.PatientKeys(ctx, q, b.ClinicID, b.Patient)
	if err != nil {
		return err
	}
	if emailKey == "" && phoneKey == "" {
		return nil
	}
	if _, err := q.SeriesWaitlistEnd(ctx, db.SeriesWaitlistEndParams{
		EndedAt: ptr(s.now().UTC()), BookingID: uuid.NullUUID{UUID: b.ID, Valid: true},
		ClinicID: b.ClinicID, AppointmentTypeID: b.AppointmentTypeID, EmailKey: emailKey, PhoneKey: phoneKey,
	}); err != nil {
		return fmt.Errorf("end waiting places of a series' patient: %w", err)
	}
	return nil
}
