package setup

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/web/httpx"
)

// UserSecondFactorReset answers POST /staff/users/second-factor/reset
// (id): another account's second factor is turned off and its recovery
// codes deleted (a colleague who lost their phone), and its sessions end
// at once. Its owner sets one up again after signing in with the
// password.
func (s *Admin) UserSecondFactorReset(c echo.Context) error {
	id, err := s.accountID(c)
	if id == uuid.Nil {
		return err
	}
	ctx := c.Request().Context()
	acc, err := s.deps.Staff.ResetSecondFactor(ctx, httpx.StaffUser(c), id, time.Now())
	if err != nil {
		return s.accountError(c, err, "admin.users.err_reset", apperr.Invalid, apperr.NotFound)
	}
	// The reset ended the sessions in the account's list; this ends any
	// signed in before the list existed.
	if _, err := httpx.EndStaffSessions(ctx, s.deps.Sessions, acc.ID, ""); err != nil {
		return err
	}
	return s.renderUsers(c, http.StatusOK, usersNote{notice: httpx.Tr(c).T("admin.users.reset_done", map[string]any{"Email": acc.Email})})
}

// UserSecondFactorRequire answers POST /staff/users/second-factor/require
// (required: on or off): whether every account of the clinic must have a
// second factor. Accounts without one are taken to its set-up at their
// next request, and can do nothing else until it is done.
func (s *Admin) UserSecondFactorRequire(c echo.Context) error {
	var required bool
	switch c.FormValue("required") {
	case "on":
		required = true
	case "off":
	default:
		return apperr.Invalidf("required", "Say on or off.")
	}
	u := httpx.StaffUser(c)
	if err := s.deps.Staff.SetSecondFactorRequired(c.Request().Context(), u, required); err != nil {
		return err
	}
	u.SecondFactorRequired = required
	httpx.WithStaffUser(c, u)
	notice := httpx.Tr(c).T("admin.users.factor_unrequired", nil)
	if required {
		notice = httpx.Tr(c).T("admin.users.factor_now_required", nil)
	}
	return s.renderUsers(c, http.StatusOK, usersNote{notice: notice})
}
