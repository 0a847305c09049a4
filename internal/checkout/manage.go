package checkout

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/holds"
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

// CancelAppointment cancels the token's booking. Cancelling again is harmless.
func (s *Service) CancelAppointment(ctx context.Context, id uuid.UUID, token, reason string) (booking.Booking, error) {
	b, err := s.Appointment(ctx, id, token)
	if err != nil {
		return booking.Booking{}, err
	}
	b, _, err = s.bookings.Cancel(ctx, booking.CancelRequest{BookingID: b.ID, ClinicID: b.ClinicID, Actor: "patient", Reason: reason})
	return b, err
}

// RescheduleAppointment moves the token's booking to start, keeping its
// specialist when they are free then and otherwise choosing as a hold would.
// version is the If-Match the client sent.
//
// Errors: NOT_FOUND, CONCURRENCY_CONFLICT (412), BOOKING_NOT_ACTIVE (409),
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

// OnBookingChange publishes every committed booking change to the live
// streams, spends the hold a booking came from, and keeps cooldowns in
// step; main wires it with booking.Service.Observe, so staff bookings are
// published too.
func (s *Service) OnBookingChange(ctx context.Context, ch booking.Change) {
	// The booking as the hold (holdID) it is or came from.
	asHold := func(b booking.Booking, holdID string) holds.Hold {
		return holds.Hold{
			HoldID: holdID, ClientID: b.ClientID, ClinicID: b.ClinicID,
			AppointmentTypeID: b.AppointmentTypeID, SpecialistID: b.SpecialistID,
			Start: b.Start, End: b.End,
		}
	}
	ev := func(kind string, b booking.Booking) holds.Event {
		return holds.Event{Type: kind, Hold: asHold(b, "")}
	}
	publish := func(e holds.Event) {
		if err := s.holds.Publish(ctx, e); err != nil {
			s.logger.Warn("publish booking event", "type", e.Type, "err", err)
		}
	}
	switch ch.Kind {
	case "confirm":
		if ch.HoldID != "" {
			// The hold is spent: it goes, and the booking is announced, in
			// one step (after the commit, as every observer runs).
			if err := s.holds.ConsumeBooked(ctx, asHold(ch.Booking, ch.HoldID)); err != nil {
				s.logger.Warn("consume hold after booking", "err", err)
			}
			return
		}
		publish(ev(holds.EventConfirm, ch.Booking))
	case "cancel":
		publish(ev(holds.EventCancel, ch.Booking))
		if err := s.holds.ClearCooldown(ctx, ch.Booking.ClinicID, ch.Booking.ID); err != nil {
			s.logger.Warn("clear cooldown", "err", err)
		}
	case "reschedule":
		if ch.Previous != nil {
			publish(ev(holds.EventCancel, *ch.Previous))
			if err := s.holds.MoveCooldown(ctx, ch.Booking.ClinicID, ch.Previous.ID, ch.Booking.ID); err != nil {
				s.logger.Warn("move cooldown", "err", err)
			}
		}
		publish(ev(holds.EventConfirm, ch.Booking))
	}
}
