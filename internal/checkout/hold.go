package checkout

// Holding a slot: the claim, its heartbeats and its release.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/trace"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/assignment"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/slots"
)

// HoldRequest asks to hold one slot.
type HoldRequest struct {
	AppointmentTypeID uuid.UUID
	Start             time.Time
	SpecialistID      uuid.UUID // uuid.Nil: any specialist, by priority
	ClientID          string
	// Address is the client's IP address (Echo's RealIP): the hold counts
	// against it too, up to Limits.HoldsPerAddress. "": no address limit.
	Address string
	// Limit, when not nil, is a rate limit of the caller's that the claim
	// counts against as LimitKey (the caller's address network), within
	// the clinic: in the claim's own step in Redis, or apart when the
	// request is refused before it. Over it the claim is refused with a
	// *holds.LimitedError.
	Limit    *ratelimit.Limiter
	LimitKey string
}

// Hold reserves a slot for the client: cooldown, then the slot check, then
// the specialist choice with an atomic claim (quotas and the specialist's
// overlapping holds included) per candidate.
//
// Errors: INVALID_ARGUMENT (naming the field; also a start that is not a
// slot of the type), NOT_FOUND (type), COOLDOWN (429), HOLD_QUOTA (429),
// ADDRESS_HOLD_QUOTA (429), SLOT_HELD (423), SLOT_TAKEN (409), UNAVAILABLE
// (503, Redis down); a *holds.LimitedError over req.Limit, which counts
// every request but one refused for its client id.
func (s *Service) Hold(ctx context.Context, req HoldRequest) (holds.Hold, error) {
	if err := ValidateClientID(req.ClientID); err != nil {
		return holds.Hold{}, err
	}
	counted := false
	h, err := s.hold(ctx, req, &counted)
	if err != nil && req.Limit != nil && !counted {
		err = s.countApart(ctx, req, err)
	}
	return h, err
}

// countApart counts a claim refused with err before it reached Redis
// against req.Limit, under the key the claim's step would have counted:
// err, or the limit's refusal. A type this process cannot place in a
// clinic counts under no clinic.
func (s *Service) countApart(ctx context.Context, req HoldRequest, err error) error {
	tag := ""
	if clinicID, ok := s.slots.KnownClinicOfType(req.AppointmentTypeID); ok {
		tag = clinicID.String()
	}
	if ok, wait := req.Limit.AllowIn(ctx, tag, req.LimitKey); !ok {
		return &holds.LimitedError{RetryAfter: wait}
	}
	return err
}

// hold is Hold; counted is set once the claim was counted against
// req.Limit in Redis.
func (s *Service) hold(ctx context.Context, req HoldRequest, counted *bool) (holds.Hold, error) {
	if req.AppointmentTypeID == uuid.Nil {
		return holds.Hold{}, apperr.Invalidf("appointmentTypeId", "appointmentTypeId is required.")
	}
	if req.Start.IsZero() {
		return holds.Hold{}, apperr.Invalidf("slotStartDate", "slotStartDate is required (RFC 3339, e.g. 2026-03-15T09:00:00Z).")
	}
	start := req.Start.UTC()
	// A day this process read lately is taken from memory, and the claim
	// itself checks in its step that nothing has changed the day since
	// (errReadAgain when something has, or the memory does not show the
	// time free: then as below).
	if res, ok := s.rememberedDay(ctx, req.AppointmentTypeID, req.SpecialistID, start); ok {
		h, err := s.claimIn(ctx, req, start, res, true, counted)
		if !errors.Is(err, errReadAgain) {
			return h, err
		}
	}
	// The type comes with the day's slots (cached, generation-checked), so
	// a hold usually costs no database round trip at all.
	r := trace.StartRegion(ctx, "hold.daySlots")
	res, err := s.daySlots(ctx, req.AppointmentTypeID, req.SpecialistID, start, nil)
	r.End()
	if err != nil {
		return holds.Hold{}, err
	}
	return s.claimIn(ctx, req, start, res, false, counted)
}

// errReadAgain: the day's slots from memory cannot decide a claim.
var errReadAgain = errors.New("checkout: read the day's slots again")

// rememberedDay is the free slots of start's local day from this
// process's memory (slots.Service.Remembered), when it has them.
func (s *Service) rememberedDay(ctx context.Context, typeID, specialist uuid.UUID, start time.Time) (slots.Result, bool) {
	clinicID, ok := s.slots.KnownClinicOfType(typeID)
	if !ok {
		return slots.Result{}, false
	}
	loc, err := s.slots.Zone(ctx, clinicID)
	if err != nil {
		return slots.Result{}, false
	}
	return s.slots.Remembered(typeID, specialist, availability.DateOf(start, loc))
}

// claimIn claims start for req with the specialists res shows free there.
// watched (res from memory): the claim goes ahead only while res's
// generations stand, and errReadAgain is returned instead of any refusal
// res alone would make. counted is set when the claim counted req.Limit.
func (s *Service) claimIn(ctx context.Context, req HoldRequest, start time.Time, res slots.Result, watched bool, counted *bool) (holds.Hold, error) {
	t := res.Stored

	// The cooldown is checked by the claim itself, in its round trip. A
	// request that gets no claim is told about a cooldown first all the
	// same.
	var cands []assignment.Candidate
	var err error
	if watched {
		if cands = candidatesAt(res, start); len(cands) == 0 {
			return holds.Hold{}, errReadAgain
		}
	} else if cands, err = s.candidatesIn(ctx, res, req.SpecialistID, start, uuid.Nil); err != nil {
		if cerr := s.cooldown(ctx, t, req.ClientID); cerr != nil {
			return holds.Hold{}, cerr
		}
		return holds.Hold{}, err
	}
	typ := slots.TypeOf(t)
	ids := make([]uuid.UUID, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	// Every candidate in one step: the first, in their order, that no
	// other client's hold stands in the way of gets the hold.
	claim := holds.ClaimRequest{
		ClientID: req.ClientID, ClinicID: t.ClinicID, AppointmentTypeID: t.ID,
		Start: start, End: start.Add(typ.Duration),
		BufferBefore: typ.BufferBefore, BufferAfter: typ.BufferAfter,
		Quota:   int(t.MaxHoldsPerClient),
		Address: req.Address, AddressQuota: s.limits.HoldsPerAddress,
		Cooldown: true,
		// The rooms free of bookings at start, as the same list shows
		// them: the claim gives one that no other hold has.
		Rooms: roomsAt(res, start),
	}
	if watched {
		claim.Watch, claim.WatchValues = res.Generations.Keys, res.Generations.Values
	}
	if req.Limit != nil {
		claim.Counts = []ratelimit.Counter{req.Limit.CounterIn(t.ClinicID.String(), req.LimitKey)}
	}
	r := trace.StartRegion(ctx, "hold.claimAny")
	h, err := s.holds.ClaimAny(ctx, claim, ids)
	r.End()
	// A claim refused for moved counters was not counted; it is made again.
	*counted = *counted || !errors.Is(err, holds.ErrMoved)
	var held *holds.HeldError
	var limited *holds.LimitedError
	var reclaim *holds.ReclaimError
	var cooling *holds.CooldownError
	switch {
	case errors.Is(err, holds.ErrMoved):
		return holds.Hold{}, errReadAgain
	case err == nil:
		s.claimed.put(h.HoldID, claimedSlot{gens: res.Generations, typ: res.Type})
		return h, nil
	case errors.As(err, &limited):
		return holds.Hold{}, err
	case errors.As(err, &cooling):
		return holds.Hold{}, apperr.Cooldown(t.Name, cooling.RetryAfter)
	case errors.As(err, &held):
		return holds.Hold{}, apperr.SlotHeld(held.RetryAfter)
	case errors.As(err, &reclaim):
		// This network let its hold of this slot lapse at the end of its
		// life, or released it, a moment ago, with every specialist free
		// then.
		return holds.Hold{}, apperr.ReclaimTooSoon(reclaim.RetryAfter)
	case errors.Is(err, holds.ErrQuota):
		return holds.Hold{}, &apperr.Error{
			Kind: apperr.TooMany, Code: apperr.CodeHoldQuota, RetryAfter: s.holds.TTL(),
			Message: fmt.Sprintf("You can hold %d slot(s) of %s at a time. Release or book the one you hold first.", t.MaxHoldsPerClient, t.Name),
			Details: map[string]any{"maxHolds": t.MaxHoldsPerClient},
		}
	case errors.Is(err, holds.ErrAddressQuota):
		n := s.limits.HoldsPerAddress
		return holds.Hold{}, &apperr.Error{
			Kind: apperr.TooMany, Code: apperr.CodeAddressHoldQuota, RetryAfter: s.holds.TTL(),
			Message: fmt.Sprintf("At most %d slot(s) can be held at a time from one network address. Book or release one first, or try again when a hold lapses.", n),
			Details: map[string]any{"maxHolds": n},
		}
	case errors.Is(err, holds.ErrInvalid):
		// The store's own words may name the address: they go to the
		// log through Err, never to the answer.
		e := apperr.Invalidf("", "This request cannot hold a slot.")
		e.Err = err
		return holds.Hold{}, e
	default:
		return holds.Hold{}, unavailable(err)
	}
}

// cooldown is COOLDOWN while the client's cooldown for the type runs, else
// nil. It fails open: a Redis hiccup must not stop a patient here.
func (s *Service) cooldown(ctx context.Context, t clinics.Type, clientID string) error {
	rem, err := s.holds.CooldownRemaining(ctx, t.ClinicID, clientID, t.ID)
	if err != nil {
		s.logger.Warn("cooldown check failed; letting the request through", "err", err)
		return nil
	}
	if rem > 0 {
		return apperr.Cooldown(t.Name, rem)
	}
	return nil
}

// Heartbeat keeps a hold for another full TTL. counts are rate limits of
// the caller's, keys with the hold's clinic's hash tag (see
// holds.Store.Heartbeat), counted in order whatever the answer.
//
// Errors: INVALID_ARGUMENT, HOLD_GONE (410: expired or not the caller's),
// UNAVAILABLE; a *holds.LimitedError over one of counts.
func (s *Service) Heartbeat(ctx context.Context, holdID, clientID string, counts ...ratelimit.Counter) (holds.Hold, error) {
	if err := validateHoldID(holdID); err != nil {
		return holds.Hold{}, cmp.Or(s.holds.Count(ctx, counts...), err)
	}
	if err := ValidateClientID(clientID); err != nil {
		return holds.Hold{}, cmp.Or(s.holds.Count(ctx, counts...), err)
	}
	h, err := s.holds.Heartbeat(ctx, holdID, clientID, counts...)
	var limited *holds.LimitedError
	if errors.As(err, &limited) {
		return holds.Hold{}, err
	}
	if errors.Is(err, holds.ErrGone) {
		return holds.Hold{}, apperr.New(apperr.Gone, apperr.CodeHoldGone, "This hold expired or is not yours. Pick the slot again.")
	}
	if err != nil {
		return holds.Hold{}, unavailable(err)
	}
	return h, nil
}

// Release lets go of a hold; releasing a hold that is gone is not an error.
// The client's network may not hold that time again until the hold's life
// would have ended (holds.Store.Release): claiming it then answers
// HOLD_RECLAIM_TOO_SOON.
//
// Errors: INVALID_ARGUMENT, NOT_YOUR_HOLD (403), UNAVAILABLE.
func (s *Service) Release(ctx context.Context, holdID, clientID string) error {
	if err := validateHoldID(holdID); err != nil {
		return err
	}
	if err := ValidateClientID(clientID); err != nil {
		return err
	}
	_, err := s.holds.Release(ctx, holdID, clientID)
	if errors.Is(err, holds.ErrNotOwner) {
		return apperr.New(apperr.Forbidden, apperr.CodeNotYourHold, "This hold belongs to someone else.")
	}
	if err != nil {
		return unavailable(err)
	}
	return nil
}
