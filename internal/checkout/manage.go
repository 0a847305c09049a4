package checkout

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/assignment"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
)

// Appointment is the booking a manage token opens. The id must be the
// token's booking: a token opens one booking and nothing else.
//
// Errors: NOT_FOUND (for a wrong token as for a wrong id, so neither can be probed).
func (s *Service) Appointment(ctx context.Context, id uuid.UUID, token string) (booking.Booking, error) {
	if token == "" {
		return booking.Booking{}, apperr.New(apperr.Unauthorized, apperr.CodeTokenRequired, "This needs the private link's token (Authorization: Bearer, or ?token=).")
	}
	b, err := s.bookings.ByManageToken(ctx, token)
	if err != nil {
		return booking.Booking{}, err
	}
	if b.ID != id {
		return booking.Booking{}, apperr.NotFoundf("", "This link is not valid (any more).")
	}
	return b, nil
}

// CancelAppointment cancels the token's booking. Cancelling again is
// harmless. A cancel inside the type's change deadline goes through too,
// marked late (booking.Booking.LateCancel).
func (s *Service) CancelAppointment(ctx context.Context, id uuid.UUID, token, reason string) (booking.Booking, error) {
	b, err := s.Appointment(ctx, id, token)
	if err != nil {
		return booking.Booking{}, err
	}
	late := false
	if b.Status == booking.StatusConfirmed {
		if late, err = s.lateCancel(ctx, b); err != nil {
			return booking.Booking{}, err
		}
	}
	b, _, err = s.bookings.Cancel(ctx, booking.CancelRequest{BookingID: b.ID, ClinicID: b.ClinicID, Actor: "patient", Reason: reason, Late: late})
	return b, err
}

// RescheduleAppointment moves the token's booking to start, keeping its
// specialist when they are free then and otherwise choosing as a hold would.
// version is the If-Match the client sent.
//
// Errors: NOT_FOUND, CONCURRENCY_CONFLICT (412), BOOKING_NOT_ACTIVE (409),
// CHANGE_DEADLINE (409: inside the type's change deadline),
// INVALID_ARGUMENT (slotStartDate), SLOT_HELD (423), SLOT_TAKEN (409).
func (s *Service) RescheduleAppointment(ctx context.Context, id uuid.UUID, token string, version int32, start time.Time) (booking.Booking, error) {
	b, err := s.Appointment(ctx, id, token)
	if err != nil {
		return booking.Booking{}, err
	}
	if b.Version != version {
		return booking.Booking{}, booking.ErrVersionMismatch(b.Version)
	}
	if b.Status != booking.StatusConfirmed {
		return booking.Booking{}, apperr.New(apperr.Conflict, apperr.CodeBookingNotActive, "This booking was cancelled or moved and cannot be rescheduled.")
	}
	if err := s.checkMovable(ctx, b); err != nil {
		return booking.Booking{}, err
	}
	if start.IsZero() {
		return booking.Booking{}, apperr.Invalidf("slotStartDate", "slotStartDate is required (RFC 3339).")
	}
	start = start.UTC()
	// Its own time is busy with itself: a move by 15 minutes within its own
	// half hour must not be refused, so the engine treats it as free.
	res, err := s.daySlots(ctx, b.AppointmentTypeID, uuid.Nil, start, &b)
	if isNotFound(err) {
		return booking.Booking{}, apperr.NotFoundf("", "This booking's appointment type is gone.")
	}
	if err != nil {
		return booking.Booking{}, err
	}
	cands, err := s.candidatesIn(ctx, res, uuid.Nil, start, b.ID)
	if err != nil {
		return booking.Booking{}, err
	}
	cands, heldFor, err := s.notHeld(ctx, res, cands, b.ClientID, start)
	if err != nil {
		return booking.Booking{}, err
	}
	if len(cands) == 0 {
		return booking.Booking{}, apperr.SlotHeld(heldFor)
	}
	specialist := cands[0].ID
	for _, c := range cands {
		if c.ID == b.SpecialistID {
			specialist = c.ID
		}
	}
	return s.bookings.Reschedule(ctx, booking.RescheduleRequest{
		BookingID: b.ID, ClinicID: b.ClinicID, Start: start, SpecialistID: specialist,
		Actor: "patient", ExpectVersion: version,
	})
}

// notHeld drops the candidates another client's live hold overlaps at
// start, for a move that books without a hold of its own; heldFor is how
// long the longest of those holds has left.
func (s *Service) notHeld(ctx context.Context, res slots.Result, cands []assignment.Candidate, clientID string, start time.Time) ([]assignment.Candidate, time.Duration, error) {
	active, err := s.holds.Active(ctx, res.Stored.ClinicID)
	if err != nil {
		return nil, 0, unavailable(err)
	}
	typ := slots.TypeOf(res.Stored)
	var free []assignment.Candidate
	var heldFor time.Duration
	for _, c := range cands {
		if h, blocked := overlappingHold(active, c.ID, clientID, start, start.Add(typ.Duration), typ); blocked {
			heldFor = maxDuration(heldFor, h.ExpiresAt.Sub(s.now()))
			continue
		}
		free = append(free, c)
	}
	return free, heldFor, nil
}

// overlappingHold finds a live hold of another client that blocks the
// specialist for [start, end) with the type's buffers.
func overlappingHold(active []holds.Hold, specialist uuid.UUID, clientID string, start, end time.Time, t availability.AppointmentType) (holds.Hold, bool) {
	for _, h := range active {
		if h.SpecialistID != specialist || h.ClientID == clientID {
			continue
		}
		if h.Start.Add(-h.BufferBefore).Before(end.Add(t.BufferAfter)) && start.Add(-t.BufferBefore).Before(h.End.Add(h.BufferAfter)) {
			return h, true
		}
	}
	return holds.Hold{}, false
}
