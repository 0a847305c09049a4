package public

import (
	"context"
	"time"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
)

// Claim takes a hold for a patient, from the API or a page. A claim of a
// time the live view of its week shows held by others is refused from the
// view; a claim of a time another claim from this instance is under way
// for waits for that one's answer first, and is then refused from the view
// if that one took the time. Any other claim goes to Redis, and a hold it
// gets is in this instance's views before the answer leaves. A claim
// refused from the view is told SLOT_HELD even when the client is also in
// its booking cooldown or at its quota of holds: the time is held either
// way, and a claim of a free time still meets both in Redis. limit, when
// not nil, is the caller's rate limit, asked once the view has not
// refused the claim.
func (s *Public) Claim(ctx context.Context, req checkout.HoldRequest, limit func() error) (holds.Hold, error) {
	if err := checkout.ValidateClientID(req.ClientID); err != nil {
		return holds.Hold{}, err
	}
	viewed, err := s.heldInView(ctx, req)
	if err != nil {
		return holds.Hold{}, err
	}
	if limit != nil {
		if err := limit(); err != nil {
			return holds.Hold{}, err
		}
	}
	if viewed {
		leave, err := s.claims.Enter(ctx, req, func() error { _, err := s.heldInView(ctx, req); return err })
		if err != nil {
			return holds.Hold{}, err
		}
		defer leave() // after the hold is in the views
	}
	h, err := s.deps.Checkout.Hold(ctx, req)
	if err == nil {
		s.deps.Views.Applied(holdEvent(h, req.ClientID))
	}
	return h, err
}

// claimLineWait is the longest a claim waits behind another of its time.
const claimLineWait = 250 * time.Millisecond

// heldInView refuses a claim (SLOT_HELD) from the live view of its week,
// when this instance keeps one and it shows every specialist who could
// take the time held by another client: the claim would be refused, and
// is, without a round trip to Redis (in a rush most claims are of times
// just taken). A nil error: the claim is to be asked of Redis; viewed
// says whether there was a view to ask.
func (s *Public) heldInView(ctx context.Context, req checkout.HoldRequest) (viewed bool, err error) {
	// From memory only: this runs before the rate limit, so an unknown
	// type must not cost a query.
	clinicID, known := s.deps.Slots.KnownClinicOfType(req.AppointmentTypeID)
	if !known {
		return false, nil
	}
	loc, err := s.deps.Slots.Zone(ctx, clinicID)
	if err != nil {
		return false, nil
	}
	monday := availability.DateOf(req.Start, loc).WeekStart()
	v := s.deps.Views.Get(grid.View{AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID, From: monday, To: monday.AddDays(6)})
	if v == nil {
		return false, nil
	}
	if retry, held := v.HeldByOthers(req.Start.UTC(), holds.ClientHash(req.ClientID), time.Now()); held {
		return true, apperr.SlotHeld(retry)
	}
	return true, nil
}

// holdEvent is the event of a hold this process claimed for clientID, as
// the claim publishes it.
func holdEvent(h holds.Hold, clientID string) holds.Event {
	return holds.Event{Type: holds.EventHold, Hold: h, ClientHash: holds.ClientHash(clientID)}
}
