// Package checkout is the patient's path to a booking: hold a slot,
// keep it with heartbeats, confirm it, and later cancel or reschedule it
// through the manage link. It joins the Redis holds (friendly, fast) to the
// database gate (correct): cooldown, slot check, claim; then pin, the
// proof an online booking past its address's allowance owes (package
// verify), gate, and the observers that follow a committed booking. Its ClaimLine lets
// this process's claims of one time reach Redis a few at a time (as many
// as specialists are free there).
package checkout

import (
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/verify"
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
	verify   *verify.Service // nil: online bookings prove nothing (SetVerification)
	now      func() time.Time
	claimed  claimedSlots
	modes    modes // the clinics' verification modes
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

func validateHoldID(id string) error {
	if id == "" {
		return apperr.Invalidf("holdId", "holdId is required.")
	}
	if _, ok := holds.ParseHoldID(id); !ok {
		return apperr.Invalidf("holdId", "holdId is not a hold id.")
	}
	return nil
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
