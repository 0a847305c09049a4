package checkout

import (
	"context"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
)

// CancelSeriesFrom cancels the token's booking and every later session
// of its series, all in one transaction, with one e-mail to the patient.
// Each session cancelled inside its type's change deadline is marked late,
// as a single cancel is. A booking of no series is cancelled alone.
//
// Errors: those of Appointment and booking.Service.CancelSeriesFrom.
func (s *Service) CancelSeriesFrom(ctx context.Context, id uuid.UUID, token, reason string) ([]booking.Booking, error) {
	b, err := s.Appointment(ctx, id, token)
	if err != nil {
		return nil, err
	}
	return s.bookings.CancelSeriesFrom(ctx, booking.SeriesCancelRequest{
		BookingID: b.ID, ClinicID: b.ClinicID, Actor: booking.ActorPatient, Reason: reason, Late: func(one booking.Booking) (bool, error) {
			return s.lateCancel(ctx, one)
		},
	})
}
