package signin

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// A one-time sign-in link (/staff/welcome/<token>, printed by `clinic
// clinic create` and `clinic staff reset-password`) lets its account
// choose a password and signs it in. There is no session before that, so
// the form's CSRF token is the sign-in form's signed double submit (see
// loginCSRF), bound to the link's token and sent to the link's path only.

const (
	welcomeCSRFCookie = "clinic_welcome"
	welcomePath       = "/staff/welcome/"
)

// welcomeCSRF is the form's token for this browser and link; the cookie
// it depends on is set when the browser has none.
func (s *SignIn) welcomeCSRF(c echo.Context, token string) string {
	nonce := ""
	if ck, err := c.Cookie(welcomeCSRFCookie); err == nil && len(ck.Value) == 32 {
		if _, err := hex.DecodeString(ck.Value); err == nil {
			nonce = ck.Value
		}
	}
	if nonce == "" {
		nonce = httpx.RandomHex(16)
		c.SetCookie(s.kit.Cookie(welcomeCSRFCookie, nonce, welcomePath, 0))
	}
	return hex.EncodeToString(s.kit.Signer.Sign("welcome-csrf", nonce, token))
}

func (s *SignIn) welcomeCSRFValid(c echo.Context, token string) bool {
	ck, err := c.Cookie(welcomeCSRFCookie)
	if err != nil || ck.Value == "" {
		return false
	}
	got, err := hex.DecodeString(c.FormValue("_csrf"))
	return err == nil && hmac.Equal(got, s.kit.Signer.Sign("welcome-csrf", ck.Value, token))
}

// linkProblem renders a link that does not work (404 unknown, 410 used,
// expired or replaced) as a page; other errors go on as they are.
func (s *SignIn) linkProblem(c echo.Context, err error) error {
	ae := apperr.As(err)
	if ae == nil || (ae.Kind != apperr.NotFound && ae.Kind != apperr.Gone) {
		return err
	}
	status := http.StatusNotFound
	if ae.Kind == apperr.Gone {
		status = http.StatusGone
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.kit.Page(c, status, httpx.T(c, "signin.link.page"), views.StaffLinkProblem(say(c, ae)))
}

// WelcomePage answers GET /staff/welcome/:token: the form that chooses
// the account's password. The link is not used up by looking at it.
func (s *SignIn) WelcomePage(c echo.Context) error {
	token := c.Param("token")
	info, err := s.deps.Staff.PeekLink(c.Request().Context(), token, time.Now())
	if err != nil {
		return s.linkProblem(c, err)
	}
	return s.welcomeForm(c, http.StatusOK, token, info, nil)
}

func (s *SignIn) welcomeForm(c echo.Context, status int, token string, info staff.LinkInfo, err *apperr.Error) error {
	vm := views.StaffPasswordVM{
		Action: welcomePath + token, Email: info.Email, Clinic: info.ClinicName,
		CSRF: s.welcomeCSRF(c, token), MinChars: staff.PasswordMinChars, Errors: map[string]string{},
	}
	if err != nil {
		if f := err.Field(); f == "password" || f == "confirm" {
			vm.Errors[f] = say(c, err)
		} else {
			vm.Problem = say(c, err)
		}
	}
	// The token is in the address: keep it out of caches and referrers.
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return s.kit.Page(c, status, httpx.T(c, "signin.welcome.title"), views.StaffPassword(vm))
}

// Welcome answers POST /staff/welcome/:token: sets the password and uses
// the link up (once, in one transaction), ends the account's other
// sessions, and signs this browser in (after the code of an account with
// a second factor). Attempts count against the
// address's sign-in allowance.
func (s *SignIn) Welcome(c echo.Context) error {
	token := c.Param("token")
	if !s.welcomeCSRFValid(c, token) {
		return httpx.ErrCSRF()
	}
	if err := httpx.OverLimitFor(c, s.deps.LoginIPLimiter, httpx.ClientNetwork(c), "sign-in attempts", "address"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	info, err := s.deps.Staff.PeekLink(ctx, token, time.Now())
	if err != nil {
		return s.linkProblem(c, err)
	}
	password := c.FormValue("password")
	if password != c.FormValue("confirm") {
		return s.welcomeForm(c, http.StatusBadRequest, token, info, apperr.Invalidf("confirm", "%s", httpx.T(c, "signin.welcome.mismatch")))
	}
	u, err := s.deps.Staff.UseLink(ctx, token, password, time.Now())
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		return s.welcomeForm(c, http.StatusBadRequest, token, info, ae)
	}
	if err != nil {
		return s.linkProblem(c, err)
	}
	if err := s.endSessionsOf(ctx, u.ID); err != nil {
		httpx.LoggerFrom(c).Warn("end the account's other sessions", "staff", u.ID, "err", err)
	}
	// An account with a second factor still gives its code: the link
	// proves the mailbox or the admin's trust, not the phone.
	return s.passwordAccepted(c, u.ID)
}

// endSessionsOf deletes every stored session signed in as the account:
// its password changed, so whoever knew the old one is out. Their open
// calendar streams end at their next access check. It reads every session
// once (the store keeps no index by account), which a password change
// can afford.
func (s *SignIn) endSessionsOf(ctx context.Context, id uuid.UUID) error {
	return s.endSessionsOfExcept(ctx, id, "")
}

// endSessionsOfExcept is endSessionsOf but for the session of the token
// keep.
func (s *SignIn) endSessionsOfExcept(ctx context.Context, id uuid.UUID, keep string) error {
	_, err := httpx.EndStaffSessions(ctx, s.deps.Sessions, id, keep)
	return err
}
