package checkout

// Confirming a hold: pin, check, gate, and what follows a booking.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/slots"
)

// ConfirmRequest turns a hold into a booking.
type ConfirmRequest struct {
	AppointmentTypeID uuid.UUID
	HoldID            string
	ClientID          string
	Patient           booking.Patient
	// Language is the language the patient booked in, for their e-mails.
	Language string
	// IdempotencyKey, when set, makes a retry return the first answer;
	// RequestHash fingerprints the request.
	IdempotencyKey string
	RequestHash    []byte
	// Encode renders the success answer, which is stored with the key.
	Encode func(booking.Confirmation) (status int, body []byte, err error)
	// Address is the client's IP address (Echo's RealIP): an online
	// booking counts against its network's allowance of bookings without
	// a verified e-mail address. "": a booking that proves nothing.
	Address string
	// VerificationToken is a token of verify.Service.Redeem that proves
	// the patient's e-mail address; one that does not (expired, another
	// address's) is ignored.
	VerificationToken string
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
// type recently), IDEMPOTENCY_MISMATCH (422), UNAVAILABLE (503), and for
// an online booking past its address's allowance BOOKING_ALLOWANCE (429),
// VERIFICATION_REQUIRED (428: a code was e-mailed), or
// VERIFICATION_CODE_QUOTA (429).
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

// Answered is the answer stored for req's idempotency key, or nil: for a
// retry that fails before it can be confirmed, as one carrying a one-time
// code that the request it repeats has spent.
//
// Errors: INVALID_ARGUMENT for a bad key or hold id, IDEMPOTENCY_MISMATCH.
func (s *Service) Answered(ctx context.Context, req ConfirmRequest) (*idempotency.Record, error) {
	key, err := idempotencyKey(req)
	if err != nil || key == nil {
		return nil, err
	}
	return idempotency.Find(ctx, s.pool, *key)
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
	// The pin reads back the day's counters the claim went by (standing),
	// and counts the booking's place of its address's allowance.
	claim, known := s.claimed.take(req.HoldID)
	planned := s.planAllowance(req, patient)
	pinned, err := s.holds.PinCounting(ctx, holds.PinRequest{HoldID: req.HoldID, ClientID: req.ClientID,
		Pin: PinFor, Watch: claim.gens.Keys, Count: planned})
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
		if pinned.Counted {
			s.giveBack(ctx, s.place(allowance{planned: planned, room: true}))
		}
		return Confirmed{}, unavailable(err)
	}
	h, counted := pinned.Hold, allowance{planned: planned, room: pinned.Counted}
	// The place the pin counted goes back unless a booking is made.
	place, booked := s.place(counted), false
	defer func() {
		if !booked {
			s.giveBack(ctx, place)
		}
	}()
	if h.AppointmentTypeID != req.AppointmentTypeID {
		return Confirmed{}, apperr.Invalidf("holdId", "This hold is for another appointment type.")
	}

	if !known || !s.standing(claim, pinned.Watched, h) {
		if err := s.stillOffered(ctx, h); err != nil {
			return Confirmed{}, err
		}
	}
	if err := s.verifyBooking(ctx, req, h, patient, counted); err != nil {
		return Confirmed{}, err
	}
	breq := s.bookRequest(ctx, req, h, patient, key)
	conf, err := s.bookings.Book(ctx, breq)
	booked = err == nil
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
			// back to everyone, announced, and bars this address network
			// from it as the owner's own release does: otherwise a refused
			// confirm followed by a new claim would renew the hold.
			if _, err := s.holds.Release(context.WithoutCancel(ctx), h.HoldID, h.ClientID); err != nil {
				s.logger.Warn("release hold refused for cooldown", "err", err)
			}
		}
		return Confirmed{}, err
	}

	// After the commit the bitmap, the cache generations, the spent hold
	// with the cooldown it starts, and the confirm event follow the booking
	// through the booking service's observers (see OnBookingChange).
	return Confirmed{Confirmation: conf}, nil
}

// bookRequest is the booking of hold h that req confirms.
func (s *Service) bookRequest(ctx context.Context, req ConfirmRequest, h holds.Hold, patient booking.Patient, key *idempotency.Key) booking.BookRequest {
	breq := booking.BookRequest{
		AppointmentTypeID: h.AppointmentTypeID,
		SpecialistID:      h.SpecialistID,
		ResourceID:        h.ResourceID,
		Start:             h.Start,
		End:               h.End,
		Patient:           patient,
		ClientID:          req.ClientID,
		HoldID:            h.HoldID,
		Actor:             booking.ActorPatient,
		ClinicID:          h.ClinicID,
		Language:          req.Language,
	}
	// The cooldown starts with the spent hold, after the commit (see
	// OnBookingChange).
	if t, err := s.slots.StoredType(ctx, h.AppointmentTypeID); err != nil {
		s.logger.Warn("cooldown length", "err", err)
	} else {
		breq.Cooldown = time.Duration(t.CooldownMin) * time.Minute
	}
	if key != nil {
		// A retry racing this request with the same hold loses the slot to
		// it in the gate and is answered with the stored record (Confirm);
		// one with another hold finds the record when saving its own.
		breq.Remember = &booking.Remember{Key: *key, Encode: req.Encode}
	}
	return breq
}

// standing reports whether the day's slots the claim of h went by still
// stand (their generations, read back by the pin, are unchanged) and h's
// time is still within the type's notice and window.
func (s *Service) standing(claim claimedSlot, watched []string, h holds.Hold) bool {
	return s.slots.Unchanged(claim.gens, watched) && inWindow(claim.typ, h.Start, s.now())
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
	typ := slots.TypeOf(res.Stored)
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
// is free for others, announced like any release. Its patient did not
// choose to let go, so nothing bars them from the time should it open again.
func (s *Service) releaseHold(ctx context.Context, h holds.Hold) {
	if _, err := s.holds.Withdraw(context.WithoutCancel(ctx), h.HoldID, h.ClientID); err != nil {
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
