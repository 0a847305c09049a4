// Package verify is the proof that a patient's e-mail address is theirs,
// asked where a stranger could otherwise book in invented people's names:
//
//   - The allowance: online bookings without a verified contact, counted
//     per client address network per clinic per hour (BOOKINGS_PER_ADDRESS).
//     A booking reserves its place before it is made, in one Redis step,
//     and gives it back when it fails, so concurrent bookings from one
//     address never get past the allowance between them.
//   - The code: six random digits e-mailed at once (not through the
//     outbox's retries: the patient waits for it), with an allowance of its
//     own per recipient (CODES_PER_RECIPIENT), at most MaxTries guesses,
//     and kept in Redis only as an HMAC, for no longer than the hold it
//     books.
//   - The token: what a correct code earns, signed with the server's key
//     and bound to the address's identity key (identity.EmailKey), valid
//     for TokenLife. API clients send it as the Verification-Token header,
//     pages keep it in a cookie; a booking whose e-mail it matches counts
//     as verified and spends nothing of the allowance.
//
// # Keys
//
//	ratelimit:<scope>booking-address:{<clinicId>}|<network>:<window>  the allowance (counted by the hold's pin)
//	ratelimit:<scope>code-recipient:<sha256 of the key>:<window>     the codes sent to one address
//	verify:<scope>code:<sha256 of the key>                            hash {mac, tries}: the live code
//
// Keys name an address only by the SHA-256 of its identity key: Redis
// holds no patient's address, and the code itself only as an HMAC.
package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clientaddr"
	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/ratelimit"
)

const (
	// MaxTries is how many guesses one code allows; the last wrong one
	// kills it.
	MaxTries = 5
	// CodeLife is the longest a code lives; it never outlives the hold
	// it was sent for.
	CodeLife = 10 * time.Minute
	// TokenLife is how long a verified address needs no code again.
	TokenLife = 30 * 24 * time.Hour
	// sendTimeout bounds the SMTP conversation a booking waits for.
	sendTimeout = 20 * time.Second
)

// Config is what a Service needs.
type Config struct {
	// Allowance counts unverified bookings per clinic and address network
	// (BOOKINGS_PER_ADDRESS per hour); Codes counts the codes sent to one
	// address (CODES_PER_RECIPIENT per hour).
	Allowance, Codes *ratelimit.Limiter
	// CodesByAddress counts the codes one address network's requests have
	// e-mailed, to anyone (CODES_PER_ADDRESS per hour), so that one
	// script cannot aim codes at a thousand strangers; GuessesByAddress
	// counts the codes it types (CODE_GUESSES_PER_ADDRESS per hour), so
	// that it cannot spend a stranger's code by guessing wrong.
	CodesByAddress, GuessesByAddress *ratelimit.Limiter
	// Sender mails the codes; nil: no code can be sent (Sends is false).
	Sender mail.Sender
	// Key signs the tokens and the codes' HMACs (the server's secret).
	Key []byte
	// Scope prefixes the Redis keys of the codes, like the rate limits'.
	Scope    string
	Registry prometheus.Registerer
	Logger   *slog.Logger
}

// Service runs the allowance, the codes and the tokens.
type Service struct {
	rdb   redis.UniversalClient
	cfg   Config
	steps *prometheus.CounterVec
	now   func() time.Time
}

// New makes the service; its counter is registered on cfg.Registry.
func New(rdb redis.UniversalClient, cfg Config) *Service {
	steps := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "clinic_verification_steps_total",
		Help: "Steps of the proof of a patient's e-mail address: allowance refusals, codes asked for, sent, refused by the per-recipient limit, guessed wrong, dead, redeemed, and tokens accepted.",
	}, []string{"step"})
	for _, s := range []string{StepAllowanceRefused, StepCodeRequired, StepCodeSent, StepCodeQuota, StepCodeWrong, StepCodeGone, StepVerified, StepTokenAccepted} {
		steps.WithLabelValues(s)
	}
	if cfg.Registry != nil {
		cfg.Registry.MustRegister(steps)
	}
	return &Service{rdb: rdb, cfg: cfg, steps: steps, now: time.Now}
}

// The steps the metric counts.
const (
	StepAllowanceRefused = "allowance_refused"
	StepCodeRequired     = "code_required"
	StepCodeSent         = "code_sent"
	StepCodeQuota        = "code_quota"
	StepCodeWrong        = "code_wrong"
	StepCodeGone         = "code_gone"
	StepVerified         = "verified"
	StepTokenAccepted    = "token_accepted"
)

// Count counts one step of the flow (see the Step constants).
func (s *Service) Count(step string) { s.steps.WithLabelValues(step).Inc() }

// Sends says whether codes can be sent at all: without a mail server a
// clinic cannot ask for one, and its bookings past the allowance are
// refused instead.
func (s *Service) Sends() bool { return s.cfg.Sender != nil }

// Reservation is one unverified booking counted against an allowance,
// given back with GiveBack when the booking does not happen.
type Reservation struct{ r ratelimit.Reservation }

// Plan names the place the allowance counts for an unverified online
// booking of the clinic from address, for a caller that counts it in a
// step of its own with other work (the pin of the booking's hold, a script
// of the clinic's keys): its counter carries the clinic's hash tag.
func (s *Service) Plan(clinicID uuid.UUID, address string) ratelimit.Planned {
	return s.cfg.Allowance.Plan(allowanceKey(clinicID, address))
}

// Counted is the reservation of a place planned with Plan that the
// caller's step counted (ok), or, when it found no room, false and how
// long until the window ends.
func (s *Service) Counted(p ratelimit.Planned, ok bool) (Reservation, bool, time.Duration) {
	r, ok, wait := s.cfg.Allowance.Counted(p, ok)
	return Reservation{r}, ok, wait
}

// allowanceKey is the allowance's key of a clinic and an address's
// network. The clinic's id is its hash tag: on a Redis Cluster the count
// lives on the node that holds the clinic's holds, so a node's loss stops
// only the clinics it holds, and these bookings would stop with their
// holds anyway; and a script on the hold's keys can count it.
func allowanceKey(clinicID uuid.UUID, address string) string {
	return "{" + clinicID.String() + "}|" + networkOf(address)
}

// GiveBack uncounts a reservation whose booking failed.
func (s *Service) GiveBack(ctx context.Context, r Reservation) {
	if err := s.cfg.Allowance.GiveBack(context.WithoutCancel(ctx), r.r); err != nil {
		s.cfg.Logger.Warn("give back booking allowance", "err", err)
	}
}

// Refused is the answer past the allowance where the clinic asks no code.
func Refused(wait time.Duration) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.TooMany, Code: apperr.CodeBookingAllowance, RetryAfter: wait,
		Message: "Too many bookings were made from your network in the last hour. Please try again later, or call the clinic.",
		Details: map[string]any{"retryAfterSeconds": apperr.Seconds(wait)},
	}
}

// Required is the answer that asks for the code e-mailed to the patient.
func Required(until time.Time) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.PreconditionRequired, Code: apperr.CodeVerificationRequired,
		Message: "We e-mailed you a code to confirm this booking. Send it to POST /v1/verifications and book again with the token it returns in the Verification-Token header.",
		Details: map[string]any{"field": "code", "codeExpiresAt": until.UTC().Format(time.RFC3339), "maxTries": MaxTries},
	}
}

// addressID names an e-mail address in Redis keys and HMACs without
// holding it: the SHA-256 of its identity key.
func addressID(email string) string {
	sum := sha256.Sum256([]byte(identity.EmailKey(email)))
	return hex.EncodeToString(sum[:])
}

// networkOf is the address network an address counts in; an address that
// is no IP address counts as itself.
func networkOf(address string) string {
	if network, ok := clientaddr.Network(address); ok {
		return network
	}
	return address
}

// byAddress counts one request of address's network against l (nil: no
// limit). Past it: 429 with code and the time until the window ends.
// Errors: UNAVAILABLE when Redis cannot count (these limits must not open
// because Redis is down).
func byAddress(ctx context.Context, l *ratelimit.Limiter, address, code, message string) error {
	if l == nil {
		return nil
	}
	ok, wait, err := l.Check(ctx, networkOf(address))
	if err != nil {
		return codeUnavailable(err)
	}
	if ok {
		return nil
	}
	return &apperr.Error{
		Kind: apperr.TooMany, Code: code, RetryAfter: wait, Message: message,
		Details: map[string]any{"retryAfterSeconds": apperr.Seconds(wait)},
	}
}
