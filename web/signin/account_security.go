package signin

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// accountSecurity is Your account's second factor and list of sessions,
// times in the clinic's zone.
func (s *SignIn) accountSecurity(c echo.Context) (views.AccountSecurityVM, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	st, err := s.deps.Staff.SecondFactor(ctx, u)
	if err != nil {
		return views.AccountSecurityVM{}, err
	}
	list, err := s.deps.Staff.Sessions(ctx, u, s.currentSession(c), time.Now())
	if err != nil {
		return views.AccountSecurityVM{}, err
	}
	loc := time.UTC
	if cl, err := s.deps.Clinics.ByID(ctx, u.ClinicID); err == nil {
		if l, err := time.LoadLocation(cl.Timezone); err == nil {
			loc = l
		}
	}
	vm := views.AccountSecurityVM{SecondFactorOn: st.On, RecoveryLeft: st.RecoveryCodes}
	l := httpx.Tr(c)
	at := func(t time.Time) string { return l.DayMonthYear(t.In(loc)) + ", " + l.Time(t.In(loc)) }
	for _, se := range list {
		vm.Sessions = append(vm.Sessions, views.SessionVM{
			ID: se.ID.String(), Browser: se.Browser, Address: se.Address,
			SignedIn: at(se.SignedIn), LastSeen: at(se.LastSeen), Current: se.Current,
		})
	}
	return vm, nil
}

// currentSession is the hash of this request's session token.
func (s *SignIn) currentSession(c echo.Context) []byte {
	return staff.SessionHash(s.deps.Sessions.Token(c.Request().Context()))
}

// SecondFactorPage answers GET /staff/account/second-factor: the QR code
// and the key of a new second factor (the same one until it is
// confirmed). An account whose second factor is on goes back to Your
// account.
func (s *SignIn) SecondFactorPage(c echo.Context) error {
	return s.renderSecondFactor(c, http.StatusOK, "")
}

func (s *SignIn) renderSecondFactor(c echo.Context, status int, problem string) error {
	u := httpx.StaffUser(c)
	en, err := s.deps.Staff.StartSecondFactor(c.Request().Context(), u)
	if apperr.CodeOf(err) == staff.CodeSecondFactorOn {
		return c.Redirect(http.StatusSeeOther, "/staff/account")
	}
	if err != nil {
		return err
	}
	qr, err := httpx.QRDataURI(en.URI)
	if err != nil {
		// Only a clinic name too long for a QR code gets here: the key
		// as text still works.
		httpx.LoggerFrom(c).Warn("no QR code for the second factor", "err", err)
		qr = ""
	}
	vm := views.StaffSecondFactorVM{
		Nav: s.kit.Nav(c, "account"), QR: qr, Secret: en.Secret, Required: u.MustSetUpSecondFactor(), Error: problem,
	}
	// The page carries the secret: keep it out of caches and referrers.
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return s.kit.Page(c, status, httpx.T(c, "signin.factor.title"), views.StaffSecondFactorSetUp(vm))
}

// SecondFactorConfirm answers POST /staff/account/second-factor (code): a
// first code from the app turns the second factor on, and the page shows
// the recovery codes, this once.
func (s *SignIn) SecondFactorConfirm(c echo.Context) error {
	u := httpx.StaffUser(c)
	codes, err := s.deps.Staff.ConfirmSecondFactor(c.Request().Context(), u, c.FormValue("code"), time.Now())
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		return s.renderSecondFactor(c, http.StatusBadRequest, say(c, ae))
	}
	if apperr.CodeOf(err) == staff.CodeSecondFactorOn {
		return c.Redirect(http.StatusSeeOther, "/staff/account")
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return s.kit.Page(c, http.StatusOK, httpx.T(c, "signin.recovery.page"), views.StaffRecoveryCodes(s.kit.Nav(c, "account"), codes))
}

// SessionEnd answers POST /staff/account/sessions/end (id): one of the
// account's other sessions ends; its next request is signed out.
func (s *SignIn) SessionEnd(c echo.Context) error {
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return s.renderAccount(c, http.StatusBadRequest, "", apperr.Invalidf("id", "%s", httpx.T(c, "signin.sessions.choose")))
	}
	err = s.deps.Staff.EndSession(c.Request().Context(), httpx.StaffUser(c), id, time.Now())
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.NotFound {
		return s.renderAccount(c, http.StatusNotFound, "", ae)
	}
	if err != nil {
		return err
	}
	return s.renderAccount(c, http.StatusOK, httpx.T(c, "signin.sessions.ended"), nil)
}

// SessionsEndOthers answers POST /staff/account/sessions/end-others:
// every session of the account but this browser's ends.
func (s *SignIn) SessionsEndOthers(c echo.Context) error {
	u := httpx.StaffUser(c)
	ctx := c.Request().Context()
	if _, err := s.deps.Staff.EndOtherSessions(ctx, u, s.currentSession(c), time.Now()); err != nil {
		return err
	}
	// Sessions signed in before the list existed are not in it: end them
	// too, keeping this one.
	keep := s.deps.Sessions.Token(ctx)
	if err := s.endSessionsOfExcept(ctx, u.ID, keep); err != nil {
		return err
	}
	return s.renderAccount(c, http.StatusOK, httpx.T(c, "signin.sessions.others_ended"), nil)
}
