package public

import (
	"context"
	"errors"
	"runtime/trace"
	"time"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/web/httpx"
)

// Claim takes a hold for a patient, from the API or a page. A claim of a
// time the live view of its week shows held by others is refused from the
// view; claims of a time from this instance go to Redis as many at once
// as the view shows specialists free there, the others waiting for their
// answers, and are then refused from the view if those took the time.
// Any other claim goes to Redis, and a hold it gets is in this instance's
// views before the answer leaves. A claim refused from the view is told
// SLOT_HELD even when the client is also in its booking cooldown or at
// its quota of holds: the time is held either way, and a claim of a free
// time still meets both in Redis. req.Limit, when not nil, is the
// caller's rate limit of holds per connection, counted once the claim is
// on its way to Redis, in the claim's own step: a claim the view refuses,
// at once or after its wait, is not counted.
func (s *Public) Claim(ctx context.Context, req checkout.HoldRequest) (holds.Hold, error) {
	if err := checkout.ValidateClientID(req.ClientID); err != nil {
		return holds.Hold{}, err
	}
	// Each step is a region of the runtime trace (free unless a trace is
	// being taken), so a trace of a rush shows where a slow claim waited.
	r := trace.StartRegion(ctx, "claim.view")
	v, clientHash := s.viewOf(ctx, req), holds.ClientHash(req.ClientID)
	room, err := roomIn(v, req, clientHash)
	r.End()
	if err != nil {
		return holds.Hold{}, err
	}
	if room > 0 {
		// The claims waiting for a time ask the view they found again
		// when one ahead leaves (the first of them, or all once the view
		// refuses the time): hundreds of them in a rush, so without the
		// store's lock.
		r = trace.StartRegion(ctx, "claim.line")
		leave, err := s.claims.EnterRoom(ctx, req, room, func() (int, error) { return roomIn(v, req, clientHash) })
		r.End()
		if err != nil {
			return holds.Hold{}, err
		}
		defer leave() // after the hold is in the views
	}
	r = trace.StartRegion(ctx, "claim.hold")
	h, err := s.deps.Checkout.Hold(ctx, req)
	r.End()
	if err == nil {
		trace.WithRegion(ctx, "claim.applied", func() { s.deps.Views.Applied(holdEvent(h, req.ClientID)) })
	}
	var over *holds.LimitedError
	if errors.As(err, &over) {
		return holds.Hold{}, httpx.Limited(req.Limit, over.RetryAfter, "holds", "connection")
	}
	return h, err
}

// claimLineWait is the longest a claim waits behind others of its time.
// It is longer than a claim ahead takes even when Redis is slow (its
// client waits up to two seconds for a pooled connection and one for an
// answer): with a shorter bound, every claim waiting would go to Redis
// exactly when Redis answers slowly, make it slower still, and in a rush
// be refused there as held nearly every time.
const claimLineWait = 2 * time.Second

// viewOf is the live view of req's week this instance keeps, or nil.
func (s *Public) viewOf(ctx context.Context, req checkout.HoldRequest) *liveview.View {
	// From memory only: this runs before the rate limit, so an unknown
	// type must not cost a query.
	clinicID, known := s.deps.Slots.KnownClinicOfType(req.AppointmentTypeID)
	if !known {
		return nil
	}
	loc, err := s.deps.Slots.Zone(ctx, clinicID)
	if err != nil {
		return nil
	}
	monday := availability.DateOf(req.Start, loc).WeekStart()
	return s.deps.Views.Get(grid.View{AppointmentTypeID: req.AppointmentTypeID, SpecialistID: req.SpecialistID, From: monday, To: monday.AddDays(6)})
}

// roomIn refuses a claim (SLOT_HELD) from v, the live view of its week,
// when it shows every specialist who could take the time held by another
// client: the claim would be refused, and is, without a round trip to
// Redis (in a rush most claims are of times just taken). Otherwise room
// is how many claims of the time may go to Redis at once
// (liveview.View.Room), 0 when there is no view (v nil).
func roomIn(v *liveview.View, req checkout.HoldRequest, clientHash string) (room int, err error) {
	if v == nil {
		return 0, nil
	}
	free, retry := v.Room(req.Start.UTC(), clientHash, time.Now())
	if free == 0 {
		return 0, apperr.SlotHeld(retry)
	}
	return free, nil
}

// holdEvent is the event of a hold this process claimed for clientID, as
// the claim publishes it.
func holdEvent(h holds.Hold, clientID string) holds.Event {
	return holds.Event{Type: holds.EventHold, Hold: h, ClientHash: holds.ClientHash(clientID)}
}
