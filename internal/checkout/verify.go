package checkout

// What an online booking must prove before it is made: nothing within
// its address's allowance, else (or always, as the clinic says) the code
// e-mailed to the patient.

import (
	"context"
	"fmt"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/verify"
)

// SetVerification makes online bookings (those with an Address) count
// against their network's allowance and ask for codes as their clinic
// says. Without it nothing is asked (the service's own tests).
func (s *Service) SetVerification(v *verify.Service) { s.verify = v }

// reserved is what the pin counted, to settle after the booking: a place
// of the allowance to give back should the booking fail.
type reserved struct {
	r  verify.Reservation
	ok bool
}

// giveBack returns the place of a booking that did not happen.
func (s *Service) giveBack(ctx context.Context, res reserved) {
	if res.ok {
		s.verify.GiveBack(ctx, res.r)
	}
}

// allowance is an online booking's place of its address's allowance as
// the pin counted it: asked (planned names a counter) and counted or not
// (room).
type allowance struct {
	planned ratelimit.Planned
	room    bool
}

// planAllowance is the place the pin of req's hold counts: one for an
// online booking that no token verifies, none (a zero Planned) otherwise.
// It is counted whatever the clinic asks, which the pin cannot know: at a
// clinic that asks every patient for a code it goes back at once.
func (s *Service) planAllowance(req ConfirmRequest, patient booking.Patient) ratelimit.Planned {
	if s.verify == nil || req.Address == "" || s.verifiedByToken(req, patient) {
		return ratelimit.Planned{}
	}
	clinicID, _ := holds.ParseHoldID(req.HoldID)
	return s.verify.Plan(clinicID, req.Address)
}

// verifiedByToken reports whether req carries a token that proves the
// patient's e-mail address.
func (s *Service) verifiedByToken(req ConfirmRequest, patient booking.Patient) bool {
	return req.VerificationToken != "" && s.verify.Verifies(req.VerificationToken, patient.Email)
}

// place is the reservation the pin counted, to give back should the
// booking not be made.
func (s *Service) place(a allowance) reserved {
	if a.planned.Key == "" || !a.room {
		return reserved{}
	}
	r, _, _ := s.verify.Counted(a.planned, true)
	return reserved{r: r, ok: true}
}

// verifyBooking lets an online booking of hold h through when its e-mail
// is verified by req's token, or when its address's allowance had room
// (counted, as a, by the pin); otherwise it refuses it with
// BOOKING_ALLOWANCE at a clinic that asks no code, or e-mails the patient
// a code, pins the hold while the code lives, and answers
// VERIFICATION_REQUIRED. Staff bookings, which carry no address, pass.
// assumed is the clinic's verification mode a booking let through went
// by, from memory (clinicVerification): the booking is written only if
// it still stands (booking.BookRequest.ClinicVerification). "": none,
// the answer did not depend on it.
//
// Errors: BOOKING_ALLOWANCE (429), VERIFICATION_REQUIRED (428),
// VERIFICATION_CODE_QUOTA (429), UNAVAILABLE (503).
func (s *Service) verifyBooking(ctx context.Context, req ConfirmRequest, h holds.Hold, patient booking.Patient, a allowance) (assumed string, err error) {
	if s.verify == nil || req.Address == "" {
		return "", nil
	}
	if s.verifiedByToken(req, patient) {
		s.verify.Count(verify.StepTokenAccepted)
		return "", nil
	}
	if !s.verify.Sends() {
		// Without a mail server no code can reach anyone, whatever the
		// clinic asks.
		return "", s.allowanceOnly(a)
	}
	mode, err := s.modes.get(ctx, db.New(s.pool), h.ClinicID)
	if err != nil {
		return "", unavailable(fmt.Errorf("clinic verification: %w", err))
	}
	if mode != clinics.VerifyAlways {
		_, ok, wait := s.verify.Counted(a.planned, a.room)
		switch {
		case ok:
			return mode, nil
		case mode == clinics.VerifyNever:
			s.verify.Count(verify.StepAllowanceRefused)
			return "", verify.Refused(wait)
		}
	}
	return "", s.askCode(ctx, req, h, patient)
}

// allowanceOnly lets a booking through within its address's allowance
// (counted, as a, by the pin), and refuses it past it.
func (s *Service) allowanceOnly(a allowance) error {
	if _, ok, wait := s.verify.Counted(a.planned, a.room); !ok {
		s.verify.Count(verify.StepAllowanceRefused)
		return verify.Refused(wait)
	}
	return nil
}

// askCode e-mails the patient of h a code, pins the hold while the code
// lives, and answers VERIFICATION_REQUIRED.
func (s *Service) askCode(ctx context.Context, req ConfirmRequest, h holds.Hold, patient booking.Patient) error {
	life := verify.CodeLife
	if !h.KeepUntil.IsZero() {
		life = h.KeepUntil.Sub(s.now())
	}
	until, err := s.verify.SendCode(ctx, patient.Email, req.Address, req.Language, life)
	if err != nil {
		return err
	}
	// The patient is off reading their mail, their page's heartbeats
	// perhaps stopped: the hold waits for them while the code lives.
	if _, err := s.holds.PinUntil(ctx, h.HoldID, req.ClientID, until); err != nil {
		s.logger.Warn("pin hold for the code step", "err", err)
	}
	s.verify.Count(verify.StepCodeRequired)
	return verify.Required(until)
}
