// Your account: every staff member changes their own password here, sets
// up a second factor and sees where they are signed in.

package signin

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// AccountPage answers GET /staff/account.
func (s *SignIn) AccountPage(c echo.Context) error {
	if err := httpx.StaffUser(c).May(staff.ActPassword); err != nil {
		return err
	}
	return s.renderAccount(c, http.StatusOK, "", nil)
}

func (s *SignIn) renderAccount(c echo.Context, status int, notice string, err *apperr.Error) error {
	u := httpx.StaffUser(c)
	vm := views.StaffAccountVM{
		Nav: s.kit.Nav(c, "account"), Role: roleWords(c, u.Role), MinChars: staff.PasswordMinChars,
		Notice: notice, Errors: map[string]string{},
	}
	if err != nil {
		vm.Errors[err.Field()] = say(c, err)
	}
	sec, serr := s.accountSecurity(c)
	if serr != nil {
		return serr
	}
	vm.Security = sec
	feed, ferr := s.deps.FeedBlock(c)
	if ferr != nil {
		return ferr
	}
	vm.Feed = feed
	return s.kit.Page(c, status, httpx.T(c, "signin.account.title"), views.StaffAccount(vm))
}

// AccountChange answers POST /staff/account (current, password, confirm):
// the signed-in account's own password. Every try counts against the
// sign-in allowance, as a sign-in does, so a session left open cannot be
// used to guess the password. On success every other session of the
// account ends (their streams at their next access check) and this
// browser stays signed in under a new session token.
func (s *SignIn) AccountChange(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActPassword); err != nil {
		return err
	}
	if err := s.passwordAttempt(c, u); err != nil {
		return err
	}
	password := c.FormValue("password")
	if password != c.FormValue("confirm") {
		return s.renderAccount(c, http.StatusBadRequest, "", apperr.Invalidf("confirm", "%s", httpx.T(c, "signin.account.mismatch")))
	}
	ctx := c.Request().Context()
	err := s.deps.Staff.ChangePassword(ctx, u, c.FormValue("current"), password)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		return s.renderAccount(c, http.StatusBadRequest, "", ae)
	}
	if err != nil {
		return err
	}
	// A new token first: the old one leaves the store now, and the new
	// one is stored only when this answer is written, so ending the
	// account's sessions below leaves this browser signed in.
	if err := s.deps.Sessions.RenewToken(ctx); err != nil {
		return err
	}
	s.deps.Sessions.Remove(ctx, "csrf")
	notice := httpx.T(c, "signin.account.changed")
	if err := s.endSessionsOf(ctx, u.ID); err != nil {
		httpx.LoggerFrom(c).Error("end the account's other sessions", "staff", u.ID, "err", err)
		notice = httpx.T(c, "signin.account.changed_partly")
	}
	return s.renderAccount(c, http.StatusOK, notice, nil)
}

// passwordAttempt counts a try of the current password as a sign-in
// attempt from a browser the account is not known on (the device cookie
// is sent to the sign-in form only): per address, then per account.
func (s *SignIn) passwordAttempt(c echo.Context, u staff.User) error {
	if err := httpx.OverLimitFor(c, s.deps.LoginIPLimiter, httpx.ClientNetwork(c), "sign-in attempts", "address"); err != nil {
		return err
	}
	return httpx.OverLimitFor(c, s.deps.LoginAccountLimiter, u.Email, "sign-in attempts", "account")
}
