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
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return s.renderUsers(c, http.StatusBadRequest, "", "Choose an account.")
	}
	ctx := c.Request().Context()
	acc, err := s.deps.Staff.ResetSecondFactor(ctx, httpx.StaffUser(c), id, time.Now())
	if err != nil {
		if ae := apperr.As(err); ae != nil && (ae.Kind == apperr.Invalid || ae.Kind == apperr.NotFound) {
			return s.renderUsers(c, httpx.StatusOf[ae.Kind], "", ae.Message)
		}
		return err
	}
	// The reset ended the sessions in the account's list; this ends any
	// signed in before the list existed.
	if _, err := httpx.EndStaffSessions(ctx, s.deps.Sessions, acc.ID, ""); err != nil {
		return err
	}
	return s.renderUsers(c, http.StatusOK, "The second factor of "+acc.Email+" was reset and its sessions ended; it sets one up again after signing in.", "")
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
	notice := "A second factor is no longer required."
	if required {
		notice = "Every account of the clinic must now have a second factor; accounts without one set it up at their next step."
	}
	return s.renderUsers(c, http.StatusOK, notice, "")
}
