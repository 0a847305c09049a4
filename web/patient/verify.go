package patient

// The code step of the booking form: past its address's allowance (or
// always, as the clinic says) a booking asks for the code e-mailed to the
// patient; the right code books, and a cookie spares the patient the step
// for the next 30 days.

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/verify"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// verifiedCookie keeps the token a code earned: signed, bound to the
// e-mail address it verified, worth nothing for another.
const verifiedCookie = "clinic_verified"

// verification is the token the booking carries: the one a code typed in
// the form earns now (kept in the cookie), else the cookie's.
//
// Errors: those of verify.Service.Redeem.
func (s *Pages) verification(c echo.Context, email string) (string, error) {
	token := ""
	if ck, err := c.Request().Cookie(verifiedCookie); err == nil {
		token = ck.Value
	}
	code := strings.TrimSpace(c.FormValue("code"))
	if code == "" || s.deps.Verify == nil {
		return token, nil
	}
	token, err := s.deps.Verify.Redeem(c.Request().Context(), email, code, c.RealIP())
	if err != nil {
		return "", err
	}
	c.SetCookie(s.kit.Cookie(verifiedCookie, token, "/", int(verify.TokenLife/time.Second)))
	return token, nil
}

// codePanel is the code step for hold h, with what the patient typed and
// an error of the code field.
func (s *Pages) codePanel(c echo.Context, p pageView, h holds.Hold, d draft, codeErr string) views.HoldPanelVM {
	vm := s.heldPanel(c, p, h, d, nil, "")
	vm.State = "code"
	vm.CodeUntil = vm.Until
	if codeErr != "" {
		vm.Errors = map[string]string{"code": codeErr}
	}
	return vm
}

// codeAnswer answers a booking that verification stopped: the code step
// when a code was e-mailed or one typed was wrong, the details form when
// the code is gone (booking again sends a new one). ok is false for any
// other error, or when the hold is no longer the patient's.
func (s *Pages) codeAnswer(c echo.Context, p pageView, holdID, clientID string, d draft, err error) (bool, error) {
	ae := apperr.As(err)
	if ae == nil {
		return false, nil
	}
	h, own := s.ownHold(c, p, holdID, clientID)
	if !own {
		return false, nil
	}
	switch {
	case ae.Code == apperr.CodeVerificationRequired:
		return true, s.panel(c, p, http.StatusPreconditionRequired, s.codePanel(c, p, h, d, ""))
	case ae.Code == apperr.CodeVerificationCodeWrong:
		left, _ := ae.Details["triesLeft"].(int)
		return true, s.panel(c, p, http.StatusUnprocessableEntity, s.codePanel(c, p, h, d, p.tr.T("verify.wrong", map[string]any{"Left": left})))
	case ae.Kind == apperr.Invalid && ae.Field() == "code":
		return true, s.panel(c, p, http.StatusUnprocessableEntity, s.codePanel(c, p, h, d, httpx.LocalMessage(p.tr, ae.Code, ae.Message, ae.Details)))
	case ae.Code == apperr.CodeVerificationCodeGone:
		return true, s.panel(c, p, http.StatusGone, s.heldPanel(c, p, h, d, nil, httpx.LocalMessage(p.tr, ae.Code, ae.Message, ae.Details)))
	}
	return false, nil
}
