package signin

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// LoginPage answers GET /staff/login. It writes no session: the form's
// CSRF token is a signed double submit (see loginCSRF).
func (s *SignIn) LoginPage(c echo.Context) error {
	return s.kit.Page(c, http.StatusOK, httpx.T(c, "signin.title"), views.StaffLogin("", "", s.loginCSRF(c)))
}

// Login answers POST /staff/login. Attempts are limited per address, and
// then per device for a browser that signed in to the account before, or
// per account for any other: strangers guessing an account's password use
// up the account's allowance, never its owner's. A wrong e-mail and a
// wrong password read the same. An account with a second factor goes on
// to the code step (login_code.go).
func (s *SignIn) Login(c echo.Context) error {
	if !s.loginCSRFValid(c) {
		return httpx.ErrCSRF()
	}
	ctx := c.Request().Context()
	email := strings.ToLower(strings.TrimSpace(c.FormValue("email")))
	if ok, wait := s.deps.LoginIPLimiter.Allow(ctx, httpx.ClientNetwork(c)); !ok {
		return s.tooManyLogins(c, email, wait)
	}
	limiter, key := s.deps.LoginAccountLimiter, email
	if device, known := s.knownDevice(c, email); known {
		limiter, key = s.deps.LoginDeviceLimiter, device
	}
	if ok, wait := limiter.Allow(ctx, key); !ok {
		return s.tooManyLogins(c, email, wait)
	}
	u, err := s.deps.Staff.Authenticate(ctx, email, c.FormValue("password"))
	if err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Unauthorized {
			return s.kit.Page(c, http.StatusUnauthorized, httpx.T(c, "signin.title"), views.StaffLogin(email, say(c, ae), s.loginCSRF(c)))
		}
		return err
	}
	return s.passwordAccepted(c, u.ID)
}

func (s *SignIn) tooManyLogins(c echo.Context, email string, wait time.Duration) error {
	secs := max(apperr.Seconds(wait), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return s.kit.Page(c, http.StatusTooManyRequests, httpx.T(c, "signin.title"),
		views.StaffLogin(email, tooMany(c, secs), s.loginCSRF(c)))
}

// Logout answers POST /staff/logout: the session is deleted from the store
// and from the account's list of sessions.
func (s *SignIn) Logout(c echo.Context) error {
	ctx := c.Request().Context()
	if err := s.deps.Staff.SessionSignedOut(ctx, staff.SessionHash(s.deps.Sessions.Token(ctx))); err != nil {
		httpx.LoggerFrom(c).Warn("forget the signed-out session", "err", err)
	}
	if err := s.deps.Sessions.Destroy(ctx); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/staff/login")
}
