package public

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/web/httpx"
)

// The limits of joining the waitlist, the pages' and the API's alike.

// waitlistOutageWait is the Retry-After of a join refused because the
// limits could not be counted.
const waitlistOutageWait = time.Minute

// JoinLimits counts a join against the client address's allowance (every
// try), then asks whether the e-mail address at the clinic has spent its
// own (counted as "find my booking" counts it: a keyed hash, no address in
// Redis). Only joins that went through count for the address
// (CountJoin): a patient whose dates were refused has sent nothing and
// loses nothing. Every place sends an e-mail, so, as with those lists, the
// limits fail closed: when Redis cannot count, the join is refused (503).
func (s *Public) JoinLimits(c echo.Context, clinic clinics.Clinic, email string) error {
	if err := waitlistLimit(c, s.deps.WaitlistIPLimiter, httpx.ClientNetwork(c), "connection"); err != nil {
		return err
	}
	if email = strings.TrimSpace(email); email == "" {
		return nil // refused as no address before anything is sent
	}
	lim := s.deps.WaitlistEmailLimiter
	spent, wait, err := lim.Spent(c.Request().Context(), s.EmailKey(clinic, email))
	switch {
	case err != nil:
		return waitlistUnavailable(c, err)
	case spent:
		return waitlistTooMany(lim, wait, "e-mail address")
	}
	return nil
}

// CountJoin counts a join that went through against its e-mail address.
// A failure to count is logged: the place is taken and its e-mail written.
func (s *Public) CountJoin(c echo.Context, clinic clinics.Clinic, email string) {
	key := s.EmailKey(clinic, strings.TrimSpace(email))
	if err := s.deps.WaitlistEmailLimiter.Count(c.Request().Context(), key); err != nil {
		httpx.LoggerFrom(c).Warn("count a waitlist join", "err", err)
	}
}

// waitlistLimit counts one join against lim; who names the key in the
// message.
func waitlistLimit(c echo.Context, lim *ratelimit.Limiter, key, who string) error {
	ok, wait, err := lim.Check(c.Request().Context(), key)
	switch {
	case err != nil:
		return waitlistUnavailable(c, err)
	case !ok:
		return waitlistTooMany(lim, wait, who)
	}
	return nil
}

// waitlistUnavailable is the refusal of a join the limits could not count.
func waitlistUnavailable(c echo.Context, err error) error {
	httpx.LoggerFrom(c).Warn("waitlist join refused: the limits cannot be counted", "err", err)
	return &apperr.Error{Kind: apperr.Unavailable, Code: apperr.CodeUnavailable, RetryAfter: waitlistOutageWait,
		Message: "The waitlist cannot take new places right now. Please try again in a minute."}
}

// waitlistTooMany is the refusal of a join over lim, wait before the
// window ends; who names the key in the message.
func waitlistTooMany(lim *ratelimit.Limiter, wait time.Duration, who string) error {
	secs := apperr.Seconds(wait)
	per := httpx.HumanWindow(lim.Window())
	if lim.Window() == time.Hour {
		per = "hour"
	}
	return &apperr.Error{
		Kind: apperr.TooMany, Code: apperr.CodeRateLimited, RetryAfter: time.Duration(secs) * time.Second,
		Message: fmt.Sprintf("Too many waitlist joins from this %s: at most %d per %s. Please try again in %d seconds.",
			who, lim.Limit(), per, secs),
		Details: map[string]any{"limit": lim.Limit(), "windowSeconds": int(lim.Window().Seconds()), "retryAfterSeconds": secs},
	}
}

// EmailKey is what the per-address limit counts: the clinic and a keyed
// hash of the address. Without the server's secret nobody reading Redis
// can tell which addresses asked, not even by hashing guesses.
func (s *Public) EmailKey(clinic clinics.Clinic, email string) string {
	return clinic.ID.String() + ":" + hex.EncodeToString(s.kit.Signer.Sign("find-email", clinic.ID.String(), strings.ToLower(email)))
}
