// Package apperr is the one error type of the application: a kind that the
// HTTP layer maps to a status, a public code, and a message safe to show a
// user. Anything that is not an *Error is an internal error to the user.
package apperr

import (
	"errors"
	"fmt"
	"time"
)

// Kind says what sort of failure an error is; web maps each to one status.
type Kind int

const (
	Internal             Kind = iota // 500
	Invalid                          // 400: bad input, Details["field"] names it
	Unauthorized                     // 401
	Forbidden                        // 403
	NotFound                         // 404
	Conflict                         // 409
	Gone                             // 410
	PreconditionFailed               // 412
	Unprocessable                    // 422
	Locked                           // 423
	PreconditionRequired             // 428
	TooMany                          // 429, with RetryAfter
	Unavailable                      // 503
	TooLarge                         // 413
)

// Error is a failure a user may be told about.
type Error struct {
	Kind       Kind
	Code       string // stable, public: SLOT_TAKEN, INVALID_ARGUMENT, ...
	Message    string // safe to show a user
	Details    map[string]any
	RetryAfter time.Duration // for TooMany and Locked
	Err        error         // the cause, for logs only
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Field is the input field an Invalid error names, or "".
func (e *Error) Field() string {
	f, _ := e.Details["field"].(string)
	return f
}

// As returns the *Error in err's chain, or nil.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf is the public code of err, or "" when it is not an *Error.
func CodeOf(err error) string {
	if e := As(err); e != nil {
		return e.Code
	}
	return ""
}

// Invalidf names the field that was wrong.
func Invalidf(field, format string, args ...any) *Error {
	return &Error{
		Kind:    Invalid,
		Code:    CodeInvalidArgument,
		Message: fmt.Sprintf(format, args...),
		Details: map[string]any{"field": field},
	}
}

// NotFoundf says which thing was not found; field is the input that named it.
func NotFoundf(field, format string, args ...any) *Error {
	e := &Error{Kind: NotFound, Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
	if field != "" {
		e.Details = map[string]any{"field": field}
	}
	return e
}

// New builds an error of any kind with a public code.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// The public codes. Every code an error carries is one of these; code
// that branches on an error compares with them, never with a string.
const (
	CodeBadCredentials       = "BAD_CREDENTIALS"
	CodeBookingNotActive     = "BOOKING_NOT_ACTIVE"
	CodeConcurrencyConflict  = "CONCURRENCY_CONFLICT"
	CodeCSRF                 = "CSRF"
	CodeEmailTaken           = "EMAIL_TAKEN"
	CodeForbidden            = "FORBIDDEN"
	CodeHoldExpired          = "HOLD_EXPIRED"
	CodeHoldGone             = "HOLD_GONE"
	CodeHoldQuota            = "HOLD_QUOTA"
	CodeIdempotencyMismatch  = "IDEMPOTENCY_MISMATCH"
	CodeInternal             = "INTERNAL"
	CodeInvalidArgument      = "INVALID_ARGUMENT"
	CodeKioskToken           = "KIOSK_TOKEN"
	CodeNotFound             = "NOT_FOUND"
	CodeNotYourHold          = "NOT_YOUR_HOLD"
	CodeOverrideOverlap      = "OVERRIDE_OVERLAP"
	CodePreconditionRequired = "PRECONDITION_REQUIRED"
	CodeRateLimited          = "RATE_LIMITED"
	CodeSignedOut            = "SIGNED_OUT"
	CodeSignInRequired       = "SIGN_IN_REQUIRED"
	CodeSlotHeld             = "SLOT_HELD"
	CodeTokenRequired        = "TOKEN_REQUIRED"
	CodeTooLarge             = "TOO_LARGE"
	CodeUnavailable          = "UNAVAILABLE"

	// Codes of refusals made by the HTTP layer itself, before any handler.
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	// CodeError: any other refusal with a 4xx status and no code of its own.
	CodeError = "ERROR"

	CodeSlotTaken = "SLOT_TAKEN"
	// CodeSlotUnavailable: the time is no longer offered (hours or an
	// override closed it after the hold was taken).
	CodeSlotUnavailable = "SLOT_UNAVAILABLE"
	// CodeCooldown: the patient booked this type recently.
	CodeCooldown = "COOLDOWN"
	// CodeAddressHoldQuota: the client's address holds as many slots as it may.
	CodeAddressHoldQuota = "ADDRESS_HOLD_QUOTA"
	// CodeHoldReclaimTooSoon: the client's network let its hold of this
	// slot lapse at the end of its life, or released it, a moment ago and
	// may not take it again yet.
	CodeHoldReclaimTooSoon = "HOLD_RECLAIM_TOO_SOON"
	// CodeWaitlistDuplicate: the address already waits for this type.
	CodeWaitlistDuplicate = "WAITLIST_DUPLICATE"
	// CodeOfferOver: a waitlist offer expired, was declined or withdrawn.
	CodeOfferOver = "OFFER_OVER"
	// CodeEntryOver: a waitlist entry left the list.
	CodeEntryOver = "WAITLIST_ENTRY_OVER"
	// CodeWaitlistUnconfirmed: a waitlist place its patient has not
	// confirmed from its e-mail is offered nothing.
	CodeWaitlistUnconfirmed = "WAITLIST_UNCONFIRMED"
	// CodeVerificationRequired: the booking needs the code e-mailed to
	// the patient (428).
	CodeVerificationRequired = "VERIFICATION_REQUIRED"
	// CodeBookingAllowance: the client's network made its allowance of
	// unverified bookings this hour, at a clinic that asks no code (429).
	CodeBookingAllowance = "BOOKING_ALLOWANCE"
	// CodeVerificationCodeWrong: a code guessed wrong; details say how
	// many tries are left (400).
	CodeVerificationCodeWrong = "VERIFICATION_CODE_WRONG"
	// CodeVerificationCodeGone: no live code (lapsed, never sent, or its
	// tries spent) (410).
	CodeVerificationCodeGone = "VERIFICATION_CODE_GONE"
	// CodeVerificationCodeQuota: the address was sent its allowance of
	// codes this hour (429).
	CodeVerificationCodeQuota = "VERIFICATION_CODE_QUOTA"
	// CodeChangeDeadline: a patient's move inside the type's change
	// deadline; details carry the deadline and the clinic's phone (409).
	CodeChangeDeadline = "CHANGE_DEADLINE"
)

// SlotUnavailable is a held time that hours or an override closed since.
func SlotUnavailable() *Error {
	return New(Conflict, CodeSlotUnavailable, "This time is no longer offered (the hours changed since you picked it). Please pick another time.")
}

// Cooldown refuses a booking of typeName for remaining more.
func Cooldown(typeName string, remaining time.Duration) *Error {
	return &Error{
		Kind: TooMany, Code: CodeCooldown, RetryAfter: remaining,
		Message: fmt.Sprintf("You booked %s recently. You can book it again in %s.", typeName, humanDuration(remaining)),
		Details: map[string]any{"retryAfterSeconds": Seconds(remaining)},
	}
}

// ReclaimTooSoon refuses a slot whose hold, taken from the client's
// network, lapsed at the end of its life or was released a moment ago:
// holding a slot by letting holds go and claiming it again is no way
// around their longest life.
func ReclaimTooSoon(remaining time.Duration) *Error {
	return &Error{
		Kind: TooMany, Code: CodeHoldReclaimTooSoon, RetryAfter: remaining,
		Message: fmt.Sprintf("This time was held from your network until a moment ago. Pick another time, or try this one again in %s.", humanDuration(remaining)),
		Details: map[string]any{"retryAfterSeconds": Seconds(remaining)},
	}
}

func humanDuration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%d h %02d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	case d >= time.Minute:
		return fmt.Sprintf("%d min", int((d+time.Minute-1)/time.Minute))
	default:
		return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
	}
}

// SlotTaken is what every lost race for a slot becomes, whichever guard caught it.
func SlotTaken() *Error {
	return New(Conflict, CodeSlotTaken, "That slot is no longer available. Please pick another time.")
}

// Seconds is d in whole seconds, rounded up: what Retry-After and the
// retryAfterSeconds details say.
func Seconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// SlotHeld is a slot someone else holds; it frees within d if they do not confirm.
func SlotHeld(d time.Duration) *Error {
	secs := max(Seconds(d), 1)
	return &Error{
		Kind: Locked, Code: CodeSlotHeld, RetryAfter: time.Duration(secs) * time.Second,
		Message: fmt.Sprintf("Someone is booking this slot right now. It frees in %d s if they do not confirm.", secs),
		Details: map[string]any{"retryAfterSeconds": secs},
	}
}
