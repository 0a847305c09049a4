package signin

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// Signing in is one step for an account without a second factor and two
// for one with it. After the password (or a sign-in link's new password)
// the session holds only "this account is half signed in, until then":
// no staff page looks at it, and it lasts codeStepFor. The code then
// completes the sign-in. The session token is renewed at both steps, as
// at any change of what a session may do.

// codeStepFor is how long a half-signed-in session waits for its code.
const codeStepFor = 5 * time.Minute

// The session's keys of the half-signed-in state.
const (
	codeForKey   = "codeFor"
	codeUntilKey = "codeUntil"
)

// passwordAccepted goes on after the password of the account id was
// right: to the code step when the account has a second factor, else
// straight to signing in.
func (s *SignIn) passwordAccepted(c echo.Context, id uuid.UUID) error {
	ctx := c.Request().Context()
	u, err := s.deps.Staff.UserByID(ctx, id)
	if err != nil {
		return err
	}
	if !u.SecondFactor {
		return s.signInAs(c, u)
	}
	sm := s.deps.Sessions
	if err := sm.RenewToken(ctx); err != nil {
		return err
	}
	sm.Remove(ctx, "staffId")
	sm.Remove(ctx, "csrf")
	sm.Put(ctx, codeForKey, u.ID.String())
	sm.Put(ctx, codeUntilKey, time.Now().Add(codeStepFor).Unix())
	return c.Redirect(http.StatusSeeOther, "/staff/login/code")
}

// signInAs signs this browser in as u: a new session token (a session id
// seen before is worth nothing after), the device cookie, and the
// session's row in the account's list of sessions. An account its clinic
// requires a second factor of, and that has none, goes to its set-up.
func (s *SignIn) signInAs(c echo.Context, u staff.User) error {
	ctx := c.Request().Context()
	sm := s.deps.Sessions
	s.rememberDevice(c, u.Email)
	if err := sm.RenewToken(ctx); err != nil {
		return err
	}
	sm.Put(ctx, "staffId", u.ID.String())
	sm.Remove(ctx, "csrf")
	sm.Remove(ctx, codeForKey)
	sm.Remove(ctx, codeUntilKey)
	now := time.Now()
	hash := staff.SessionHash(sm.Token(ctx))
	if err := s.deps.Staff.SessionStarted(ctx, u.ID, hash, httpx.BrowserName(c.Request().UserAgent()), c.RealIP(), now); err != nil {
		httpx.LoggerFrom(c).Warn("list the new session", "err", err)
	} else {
		sm.Put(ctx, "seen", now.Unix())
	}
	if u.MustSetUpSecondFactor() {
		return c.Redirect(http.StatusSeeOther, httpx.SecondFactorSetUp)
	}
	return c.Redirect(http.StatusSeeOther, httpx.StaffHome)
}

// pendingAccount is the account this session is half signed in as, if
// the code step has not run out.
func (s *SignIn) pendingAccount(c echo.Context) (uuid.UUID, bool) {
	ctx := c.Request().Context()
	sm := s.deps.Sessions
	id, err := uuid.Parse(sm.GetString(ctx, codeForKey))
	if err != nil || time.Now().Unix() >= sm.GetInt64(ctx, codeUntilKey) {
		return uuid.Nil, false
	}
	return id, true
}

// LoginCodePage answers GET /staff/login/code: the code's form, for a
// session half signed in; any other goes back to the sign-in form.
func (s *SignIn) LoginCodePage(c echo.Context) error {
	if _, ok := s.pendingAccount(c); !ok {
		return c.Redirect(http.StatusSeeOther, "/staff/login")
	}
	return s.kit.Page(c, http.StatusOK, httpx.T(c, "signin.title"), views.StaffLoginCode("", s.loginCSRF(c)))
}

// LoginCode answers POST /staff/login/code (code): a TOTP code or a
// recovery code completes the sign-in. Tries count against the sign-in
// limits as passwords do (per address, then per known device or per
// account), from an unknown device also against an hourly count of codes
// per account, and every wrong code reads the same.
func (s *SignIn) LoginCode(c echo.Context) error {
	if !s.loginCSRFValid(c) {
		return httpx.ErrCSRF()
	}
	id, ok := s.pendingAccount(c)
	if !ok {
		return c.Redirect(http.StatusSeeOther, "/staff/login")
	}
	ctx := c.Request().Context()
	u, err := s.deps.Staff.UserByID(ctx, id)
	if err != nil {
		return c.Redirect(http.StatusSeeOther, "/staff/login")
	}
	if ok, wait := s.deps.LoginIPLimiter.Allow(ctx, httpx.ClientNetwork(c)); !ok {
		return s.tooManyCodes(c, wait)
	}
	limiters, key := []*ratelimit.Limiter{s.deps.LoginAccountLimiter, s.deps.CodeAccountLimiter}, u.Email
	if device, known := s.knownDevice(c, u.Email); known {
		limiters, key = []*ratelimit.Limiter{s.deps.LoginDeviceLimiter}, device
	}
	for _, l := range limiters {
		if ok, wait := l.Allow(ctx, key); !ok {
			return s.tooManyCodes(c, wait)
		}
	}
	if err := s.deps.Staff.CheckSecondFactor(ctx, u.ID, c.FormValue("code"), time.Now()); err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Unauthorized {
			return s.kit.Page(c, http.StatusUnauthorized, httpx.T(c, "signin.title"), views.StaffLoginCode(say(c, ae), s.loginCSRF(c)))
		}
		return err
	}
	return s.signInAs(c, u)
}

func (s *SignIn) tooManyCodes(c echo.Context, wait time.Duration) error {
	secs := max(apperr.Seconds(wait), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return s.kit.Page(c, http.StatusTooManyRequests, httpx.T(c, "signin.title"),
		views.StaffLoginCode(tooMany(c, secs), s.loginCSRF(c)))
}
