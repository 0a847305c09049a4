package checkout

// What follows every committed booking change: live events, the spent hold, cooldowns.

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/holds"
)

// OnBookingChange publishes every committed booking change to the live
// streams, spends the hold a booking came from (starting the cooldown the
// booking asked for), and keeps cooldowns in step; main wires it with
// booking.Service.Observe, so staff bookings are published too.
func (s *Service) OnBookingChange(ctx context.Context, ch booking.Change) {
	ev := func(kind string, b booking.Booking) holds.Event {
		return holds.Event{Type: kind, Hold: asHold(b, "")}
	}
	publish := func(e holds.Event) {
		if err := s.holds.Publish(ctx, e); err != nil {
			s.logger.Warn("publish booking event", "type", e.Type, "err", err)
		}
	}
	switch ch.Kind {
	case booking.ChangeConfirm:
		if ch.HoldID != "" {
			// The hold is spent: it goes, the booking is announced and the
			// cooldown it starts begins, in one step (after the commit, as
			// every observer runs).
			if err := s.holds.ConsumeBookedCooling(ctx, spentHold(ch), ch.Booking.ID, ch.Cooldown); err != nil {
				s.logger.Warn("consume hold after booking", "err", err)
			}
			return
		}
		publish(ev(holds.EventConfirm, ch.Booking))
	case booking.ChangeCancel:
		publish(ev(holds.EventCancel, ch.Booking))
		// A patient's own cancel keeps the client's cooldown for a while,
		// as it keeps the patient's (booking.CancelKeepsCooldown); staff's
		// lifts it.
		keep := time.Duration(0)
		if ch.Actor == booking.ActorPatient {
			keep = booking.CancelKeepsCooldown
		}
		if err := s.holds.ShortenCooldown(ctx, ch.Booking.ClinicID, ch.Booking.ID, keep); err != nil {
			s.logger.Warn("shorten cooldown", "err", err)
		}
	case booking.ChangeReschedule:
		if ch.Previous != nil {
			publish(ev(holds.EventCancel, *ch.Previous))
			if err := s.holds.MoveCooldown(ctx, ch.Booking.ClinicID, ch.Previous.ID, ch.Booking.ID); err != nil {
				s.logger.Warn("move cooldown", "err", err)
			}
		}
		publish(ev(holds.EventConfirm, ch.Booking))
	}
}

// asHold is the booking as the hold (holdID) it is or came from.
func asHold(b booking.Booking, holdID string) holds.Hold {
	return holds.Hold{
		HoldID: holdID, ClientID: b.ClientID, ClinicID: b.ClinicID,
		AppointmentTypeID: b.AppointmentTypeID, SpecialistID: b.SpecialistID,
		Start: b.Start, End: b.End,
	}
}

// spentHold is the hold a new booking came from, as the booking
// describes it.
func spentHold(ch booking.Change) holds.Hold { return asHold(ch.Booking, ch.HoldID) }

// FollowBooking is the observer of committed booking changes that does
// the slots service's part (slots.Service.OnBookingChange) and then this
// service's (OnBookingChange): for a booking from a hold, the spent hold's
// step is sent with the slots' script in one round trip to Redis, which
// runs the script first, so the booking is announced after its days'
// counters moved on.
func (s *Service) FollowBooking(ctx context.Context, ch booking.Change) {
	if ch.Kind != booking.ChangeConfirm || ch.HoldID == "" {
		s.slots.OnBookingChange(ctx, ch)
		s.OnBookingChange(ctx, ch)
		return
	}
	spend := func(pipe redis.Pipeliner) func() {
		done := s.holds.QueueConsumeBookedCooling(ctx, pipe, spentHold(ch), ch.Booking.ID, ch.Cooldown)
		return func() {
			if err := done(); err != nil {
				s.logger.Warn("consume hold after booking", "err", err)
			}
		}
	}
	if !s.slots.OnBookingChangeThen(ctx, ch, spend) {
		s.OnBookingChange(ctx, ch)
	}
}
