// Package checkout is the patient's path to a booking: hold a slot,
// keep it with heartbeats, confirm it, and later cancel or reschedule it
// through the manage link. It joins the Redis holds (friendly, fast) to the
// database gate (correct): cooldown, slot check, claim; then pin, gate,
// and the observers that follow a committed booking.
package checkout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/assignment"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/slots"
)

// PinFor is how long a confirm keeps its hold alive while the insert runs.
const PinFor = 30 * time.Second

// Service runs the patient's flow.
type Service struct {
	pool     *pgxpool.Pool
	holds    *holds.Store
	slots    *slots.Service
	bookings *booking.Service
	logger   *slog.Logger
	limits   Limits
	now      func() time.Time
}

// Limits bound what one patient can hold.
type Limits struct {
	// HoldsPerAddress is the most live holds of a clinic from one address
	// (HOLDS_PER_ADDRESS); 0: no address limit.
	HoldsPerAddress int
}

func New(pool *pgxpool.Pool, h *holds.Store, s *slots.Service, b *booking.Service, logger *slog.Logger, limits Limits) *Service {
	return &Service{pool: pool, holds: h, slots: s, bookings: b, logger: logger, limits: limits, now: time.Now}
}

func unavailable(err error) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.Unavailable, Code: apperr.CodeUnavailable,
		Message: "Booking is briefly unavailable. Please try again in a moment.", Err: err,
	}
}

// ValidateClientID checks a client id: 1 to 128 printable characters.
func ValidateClientID(id string) error {
	if id == "" {
		return apperr.Invalidf("clientId", "clientId is required.")
	}
	if len(id) > 128 {
		return apperr.Invalidf("clientId", "clientId is at most 128 characters.")
	}
	for _, r := range id {
		if r < 0x21 || r > 0x7e {
			return apperr.Invalidf("clientId", "clientId must be printable ASCII without spaces.")
		}
	}
	return nil
}

// HoldRequest asks to hold one slot.
type HoldRequest struct {
	AppointmentTypeID uuid.UUID
	Start             time.Time
	SpecialistID      uuid.UUID // uuid.Nil: any specialist, by priority
	ClientID          string
	// Address is the client's IP address (Echo's RealIP): the hold counts
	// against it too, up to Limits.HoldsPerAddress. "": no address limit.
	Address string
}

// Hold reserves a slot for the client: cooldown, then the slot check, then
// the specialist choice with an atomic claim (quotas and the specialist's
// overlapping holds included) per candidate.
//
// Errors: INVALID_ARGUMENT (naming the field; also a start that is not a
// slot of the type), NOT_FOUND (type), COOLDOWN (429), HOLD_QUOTA (429),
// ADDRESS_HOLD_QUOTA (429), SLOT_HELD (423), SLOT_TAKEN (409), UNAVAILABLE
// (503, Redis down).
func (s *Service) Hold(ctx context.Context, req HoldRequest) (holds.Hold, error) {
	if err := ValidateClientID(req.ClientID); err != nil {
		return holds.Hold{}, err
	}
	if req.AppointmentTypeID == uuid.Nil {
		return holds.Hold{}, apperr.Invalidf("appointmentTypeId", "appointmentTypeId is required.")
	}
	if req.Start.IsZero() {
		return holds.Hold{}, apperr.Invalidf("slotStartDate", "slotStartDate is required (RFC 3339, e.g. 2026-03-15T09:00:00Z).")
	}
	start := req.Start.UTC()
	// The type comes with the day's slots (cached, generation-checked), so
	// a hold usually costs no database round trip at all.
	res, err := s.daySlots(ctx, req.AppointmentTypeID, req.SpecialistID, start, nil)
	if err != nil {
		return holds.Hold{}, err
	}
	t := res.Row

	// Cooldown fails open: a Redis hiccup must not stop a patient here; the
	// claim below fails closed instead.
	if rem, err := s.holds.CooldownRemaining(ctx, t.ClinicID, req.ClientID, t.ID); err != nil {
		s.logger.Warn("cooldown check failed; letting the request through", "err", err)
	} else if rem > 0 {
		return holds.Hold{}, apperr.Cooldown(t.Name, rem)
	}

	cands, err := s.candidatesIn(ctx, res, req.SpecialistID, start, uuid.Nil)
	if err != nil {
		return holds.Hold{}, err
	}
	var heldFor time.Duration
	typ := slots.TypeOf(t)
	var coolFor time.Duration
	for _, c := range cands {
		h, err := s.holds.Claim(ctx, holds.ClaimRequest{
			ClientID: req.ClientID, ClinicID: t.ClinicID, AppointmentTypeID: t.ID, SpecialistID: c.ID,
			Start: start, End: start.Add(typ.Duration),
			BufferBefore: typ.BufferBefore, BufferAfter: typ.BufferAfter,
			Quota:   int(t.MaxHoldsPerClient),
			Address: req.Address, AddressQuota: s.limits.HoldsPerAddress,
		})
		var held *holds.HeldError
		var reclaim *holds.ReclaimError
		switch {
		case err == nil:
			return h, nil
		case errors.As(err, &held):
			// Lost the race for this one: try the next without asking again.
			heldFor = maxDuration(heldFor, held.RetryAfter)
			continue
		case errors.As(err, &reclaim):
			// This network let its hold of this specialist's slot lapse a
			// moment ago; another specialist may still be free.
			coolFor = maxDuration(coolFor, reclaim.RetryAfter)
			continue
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
	if coolFor > 0 && heldFor == 0 {
		return holds.Hold{}, apperr.ReclaimTooSoon(coolFor)
	}
	return holds.Hold{}, apperr.SlotHeld(heldFor)
}

// daySlots computes the free slots of start's local day for a type, with
// the type's row. ignore is a booking to treat as free (a reschedule's own).
func (s *Service) daySlots(ctx context.Context, typeID, specialist uuid.UUID, start time.Time, ignore *booking.Booking) (slots.Result, error) {
	clinicID, err := s.slots.ClinicOfType(ctx, typeID)
	if err != nil {
		if isNotFound(err) {
			return slots.Result{}, apperr.NotFoundf("appointmentTypeId", "No such appointment type.")
		}
		return slots.Result{}, err
	}
	loc, err := s.slots.Zone(ctx, clinicID)
	if err != nil {
		return slots.Result{}, err
	}
	day := availability.DateOf(start, loc)
	req := slots.Request{AppointmentTypeID: typeID, From: day, To: day, SpecialistID: specialist, NoHolds: true}
	if ignore != nil {
		req.Ignore = &slots.Interval{SpecialistID: ignore.SpecialistID, Start: ignore.Start, End: ignore.End}
	}
	return s.slots.Free(ctx, req)
}

// candidatesIn are the specialists of res free at start, in the order to
// try them. exclude is a booking treated as free in res. Holds are not
// looked at: a claim's own script refuses a slot another client's hold
// overlaps, so reading them first would only cost a round trip.
func (s *Service) candidatesIn(ctx context.Context, res slots.Result, specialist uuid.UUID, start time.Time, exclude uuid.UUID) ([]assignment.Candidate, error) {
	var slot *availability.Slot
	for i := range res.Slots {
		if res.Slots[i].Start.Equal(start) {
			slot = &res.Slots[i]
			break
		}
	}
	if slot == nil {
		return nil, s.notFree(ctx, res, specialist, start, exclude)
	}
	cands := make([]assignment.Candidate, 0, len(slot.SpecialistIDs))
	for _, id := range slot.SpecialistIDs {
		cands = append(cands, assignment.Candidate{ID: id, Priority: res.Priority[id]})
	}
	return assignment.Order(res.Row.ID, start, cands), nil
}

// notHeld drops the candidates another client's live hold overlaps at
// start, for a move that books without a hold of its own; heldFor is how
// long the longest of those holds has left.
func (s *Service) notHeld(ctx context.Context, res slots.Result, cands []assignment.Candidate, clientID string, start time.Time) ([]assignment.Candidate, time.Duration, error) {
	active, err := s.holds.Active(ctx, res.Row.ClinicID)
	if err != nil {
		return nil, 0, unavailable(err)
	}
	typ := slots.TypeOf(res.Row)
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

// notFree tells a booked slot (409) from a time that is not a slot (400).
// The bitmap answers "booked" for a hot slot's late losers without a
// database round trip; only what it cannot vouch for is asked of
// PostgreSQL.
func (s *Service) notFree(ctx context.Context, res slots.Result, specialist uuid.UUID, start time.Time, exclude uuid.UUID) error {
	t := res.Row
	ids := []uuid.UUID{specialist}
	if specialist == uuid.Nil {
		ids = ids[:0]
		for id := range res.Priority {
			ids = append(ids, id)
		}
	}
	end := start.Add(time.Duration(t.DurationMin) * time.Minute)
	if exclude == uuid.Nil && len(ids) > 0 {
		all := true
		for _, id := range ids {
			if taken, known := s.slots.Bitmap.Taken(ctx, res.Location, id, start, end); !known || !taken {
				all = false
				break
			}
		}
		if all {
			return apperr.SlotTaken()
		}
	}
	booked, err := db.New(s.pool).BookingOverlapExists(ctx, db.BookingOverlapExistsParams{
		SpecialistIds: ids, RangeStart: start, RangeEnd: end, ExcludeID: exclude,
	})
	if err != nil {
		return fmt.Errorf("check booked: %w", err)
	}
	if booked {
		return apperr.SlotTaken()
	}
	return apperr.Invalidf("slotStartDate", "%s is not a bookable slot of %s (outside opening hours, too soon, too far ahead, or off the grid).",
		start.Format(time.RFC3339), t.Name)
}

// Heartbeat keeps a hold for another full TTL.
//
// Errors: INVALID_ARGUMENT, HOLD_GONE (410: expired or not the caller's),
// UNAVAILABLE.
func (s *Service) Heartbeat(ctx context.Context, holdID, clientID string) (holds.Hold, error) {
	if err := validateHoldID(holdID); err != nil {
		return holds.Hold{}, err
	}
	if err := ValidateClientID(clientID); err != nil {
		return holds.Hold{}, err
	}
	h, err := s.holds.Heartbeat(ctx, holdID, clientID)
	if errors.Is(err, holds.ErrGone) {
		return holds.Hold{}, apperr.New(apperr.Gone, apperr.CodeHoldGone, "This hold expired or is not yours. Pick the slot again.")
	}
	if err != nil {
		return holds.Hold{}, unavailable(err)
	}
	return h, nil
}

// Release lets go of a hold; releasing a hold that is gone is not an error.
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

func validateHoldID(id string) error {
	if id == "" {
		return apperr.Invalidf("holdId", "holdId is required.")
	}
	if _, ok := holds.ParseHoldID(id); !ok {
		return apperr.Invalidf("holdId", "holdId is not a hold id.")
	}
	return nil
}

// ConfirmRequest turns a hold into a booking.
type ConfirmRequest struct {
	AppointmentTypeID uuid.UUID
	HoldID            string
	ClientID          string
	Patient           booking.Patient
	// IdempotencyKey, when set, makes a retry return the first answer;
	// RequestHash fingerprints the request.
	IdempotencyKey string
	RequestHash    []byte
	// Encode renders the success answer, which is stored with the key.
	Encode func(booking.Confirmation) (status int, body []byte, err error)
}

// Confirmed is the answer to a confirm: a fresh booking, or a replay of the
// answer stored for the idempotency key.
type Confirmed struct {
	Confirmation booking.Confirmation
	Replay       *idempotency.Record
}

// Confirm books a held slot.
//
// Errors: INVALID_ARGUMENT (naming holdId, clientId or a patient field),
// HOLD_EXPIRED (410), NOT_YOUR_HOLD (403), SLOT_TAKEN (409),
// SLOT_UNAVAILABLE (409: hours or an override closed the time since it
// was held), COOLDOWN (429: this patient, by e-mail or phone, booked the
// type recently), IDEMPOTENCY_MISMATCH (422), UNAVAILABLE (503).
func (s *Service) Confirm(ctx context.Context, req ConfirmRequest) (Confirmed, error) {
	key, err := idempotencyKey(req)
	if err != nil {
		return Confirmed{}, err
	}
	res, err := s.confirm(ctx, req, key)
	if err != nil && key != nil && apperr.CodeOf(err) != apperr.CodeIdempotencyMismatch {
		// A retry that raced the request it repeats can fail on what that
		// request did (its hold consumed, its slot marked taken): if that
		// request committed, its answer is this one's too.
		if rec, ferr := idempotency.Find(ctx, s.pool, *key); ferr == nil && rec != nil {
			return Confirmed{Replay: rec}, nil
		}
	}
	return res, err
}

// idempotencyKey is the request's key, or nil without an Idempotency-Key.
func idempotencyKey(req ConfirmRequest) (*idempotency.Key, error) {
	if req.IdempotencyKey == "" {
		return nil, nil
	}
	if err := idempotency.Validate(req.IdempotencyKey); err != nil {
		return nil, err
	}
	if err := validateHoldID(req.HoldID); err != nil {
		return nil, err
	}
	clinicID, _ := holds.ParseHoldID(req.HoldID)
	return &idempotency.Key{
		ClinicID: clinicID, Principal: "client:" + req.ClientID,
		Route: "book:" + req.AppointmentTypeID.String(), Key: req.IdempotencyKey, RequestHash: req.RequestHash,
	}, nil
}

func (s *Service) confirm(ctx context.Context, req ConfirmRequest, key *idempotency.Key) (Confirmed, error) {
	if err := validateHoldID(req.HoldID); err != nil {
		return Confirmed{}, err
	}
	if err := ValidateClientID(req.ClientID); err != nil {
		return Confirmed{}, err
	}
	patient, err := booking.ValidatePatient(req.Patient)
	if err != nil {
		return Confirmed{}, err
	}
	// No idempotency lookup here: a retry of a request that booked finds
	// its hold spent and gets the stored answer below (or in the
	// transaction, under the key's lock), so a first attempt pays nothing.
	h, err := s.holds.Pin(ctx, req.HoldID, req.ClientID, PinFor)
	switch {
	case errors.Is(err, holds.ErrExpired):
		if key != nil {
			// A concurrent retry may have booked with this very hold.
			if rec, ferr := idempotency.Find(ctx, s.pool, *key); ferr != nil || rec != nil {
				return Confirmed{Replay: rec}, ferr
			}
		}
		return Confirmed{}, apperr.New(apperr.Gone, apperr.CodeHoldExpired, "Your hold on this slot expired. Pick the slot again.")
	case errors.Is(err, holds.ErrNotOwner):
		return Confirmed{}, apperr.New(apperr.Forbidden, apperr.CodeNotYourHold, "This hold belongs to someone else.")
	case err != nil:
		return Confirmed{}, unavailable(err)
	}
	if h.AppointmentTypeID != req.AppointmentTypeID {
		return Confirmed{}, apperr.Invalidf("holdId", "This hold is for another appointment type.")
	}

	if err := s.stillOffered(ctx, h); err != nil {
		return Confirmed{}, err
	}

	breq := booking.BookRequest{
		AppointmentTypeID: h.AppointmentTypeID,
		SpecialistID:      h.SpecialistID,
		Start:             h.Start,
		End:               h.End,
		Patient:           patient,
		ClientID:          req.ClientID,
		HoldID:            h.HoldID,
		Actor:             booking.ActorPatient,
		ClinicID:          h.ClinicID,
	}
	if key != nil {
		// A retry racing this request with the same hold loses the slot to
		// it in the gate and is answered with the stored record (Confirm);
		// one with another hold finds the record when saving its own.
		breq.Remember = &booking.Remember{Key: *key, Encode: req.Encode}
	}
	conf, err := s.bookings.Book(ctx, breq)
	var replay *idempotency.ReplayError
	if errors.As(err, &replay) {
		return Confirmed{Replay: replay.Record}, nil
	}
	if err != nil {
		switch apperr.CodeOf(err) {
		case apperr.CodeSlotTaken:
			s.dropLostHold(ctx, h, req.ClientID)
		case apperr.CodeCooldown:
			// The patient cannot book this type for a while: the slot goes
			// back to everyone, announced.
			s.releaseHold(ctx, h)
		}
		return Confirmed{}, err
	}

	// After the commit the cooldown starts. (The bitmap, the cache
	// generation, the spent hold and the confirm event follow every booking
	// through the booking service's observers: see OnBookingChange.)
	after := context.WithoutCancel(ctx)
	if t, err := s.slots.TypeRow(after, h.AppointmentTypeID); err != nil {
		s.logger.Warn("cooldown length", "err", err)
	} else if err := s.holds.SetCooldown(after, h.ClinicID, req.ClientID, h.AppointmentTypeID, conf.Booking.ID, time.Duration(t.CooldownMin)*time.Minute); err != nil {
		s.logger.Warn("set cooldown", "err", err)
	}
	return Confirmed{Confirmation: conf}, nil
}

// stillOffered checks that the held time is still a slot of the
// specialist: hours or an override may have closed it since the hold was
// taken. The day's slots (cached and generation-checked, without holds)
// answer most confirms without a database round trip. A slot missing from
// them is booked (SLOT_TAKEN) or closed (SLOT_UNAVAILABLE), which the
// database tells apart. The bitmap is not asked here: it is a hint, and a
// bit that a failed clear left set must not refuse a freed slot.
func (s *Service) stillOffered(ctx context.Context, h holds.Hold) error {
	res, err := s.daySlots(ctx, h.AppointmentTypeID, h.SpecialistID, h.Start, nil)
	if err != nil {
		return err
	}
	for _, sl := range res.Slots {
		if sl.Start.Equal(h.Start) && slices.Contains(sl.SpecialistIDs, h.SpecialistID) {
			return nil
		}
	}
	// A booking next to it whose buffers reach the slot takes it as surely
	// as one on it.
	typ := slots.TypeOf(res.Row)
	booked, err := db.New(s.pool).BookingOverlapExists(ctx, db.BookingOverlapExistsParams{
		SpecialistIds: []uuid.UUID{h.SpecialistID},
		RangeStart:    h.Start.Add(-typ.BufferBefore), RangeEnd: h.End.Add(typ.BufferAfter),
	})
	if err != nil {
		return fmt.Errorf("check booked: %w", err)
	}
	if booked {
		s.dropLostHold(ctx, h, h.ClientID)
		return apperr.SlotTaken()
	}
	s.releaseHold(ctx, h)
	return apperr.SlotUnavailable()
}

// releaseHold lets go of a hold that can no longer be booked while its slot
// is free for others, announced like any release.
func (s *Service) releaseHold(ctx context.Context, h holds.Hold) {
	if _, err := s.holds.Release(context.WithoutCancel(ctx), h.HoldID, h.ClientID); err != nil {
		s.logger.Warn("release unusable hold", "err", err)
	}
}

// dropLostHold lets go of a hold whose slot was booked another way: it can
// never be confirmed, and keeping it would count against the patient's
// quota while they pick another time. It is dropped silently: the booking
// that took the slot has announced it (and a retry that lost to its own
// booking must not announce a release after the confirm).
func (s *Service) dropLostHold(ctx context.Context, h holds.Hold, clientID string) {
	if err := s.holds.Consume(context.WithoutCancel(ctx), h); err != nil {
		s.logger.Warn("drop lost hold", "err", err)
	}
}

func isNotFound(err error) bool {
	e := apperr.As(err)
	return e != nil && e.Kind == apperr.NotFound
}

func maxDuration(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}
