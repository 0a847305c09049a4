package web

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
)

type staffKey struct{}

// staffUser is the signed-in staff member of a /staff request.
func staffUser(c echo.Context) staff.User {
	u, _ := c.Request().Context().Value(staffKey{}).(staff.User)
	return u
}

func redirectTo(c echo.Context, to string) error {
	if c.Request().Header.Get("HX-Request") == "true" {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusUnauthorized)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// csrfToken is the signed-in session's CSRF token, made on first use
// (the sign-in form has its own, see loginCSRF).
func (s *Server) csrfToken(c echo.Context) string {
	ctx := c.Request().Context()
	if t := s.deps.Sessions.GetString(ctx, "csrf"); t != "" {
		return t
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	t := hex.EncodeToString(b)
	s.deps.Sessions.Put(ctx, "csrf", t)
	return t
}

// nav is the staff header of a page. It also puts into the request's
// context what the account may use, so the header and the page show only
// those links and forms.
func (s *Server) nav(c echo.Context, active string) views.StaffNav {
	u := staffUser(c)
	name := ""
	if cl, err := s.deps.Clinics.ByID(c.Request().Context(), u.ClinicID); err == nil {
		name = cl.Name
	}
	c.SetRequest(c.Request().WithContext(views.WithStaffCan(c.Request().Context(), staffCan(u))))
	return views.StaffNav{Clinic: name, Email: u.Email, CSRF: s.csrfToken(c), Active: active}
}

// staffCan asks the role table what u may use of the staff pages.
func staffCan(u staff.User) views.StaffCan {
	may := func(a staff.Action) bool { return u.May(a) == nil }
	return views.StaffCan{
		Calendar: may(staff.ActCalendar), Book: may(staff.ActBook), Search: may(staff.ActSearch),
		Specialists: may(staff.ActSpecialists), EditSpecialists: may(staff.ActSpecialistsEdit),
		Hours: may(staff.ActHours), Overrides: may(staff.ActOverrides),
		Types: may(staff.ActTypes), Audit: may(staff.ActAudit), Accounts: may(staff.ActAccounts), Kiosks: may(staff.ActKiosks),
		Settings: may(staff.ActSettings),
	}
}

// loginPage answers GET /staff/login. It writes no session: the form's
// CSRF token is a signed double submit (see loginCSRF).
func (s *Server) loginPage(c echo.Context) error {
	return s.page(c, http.StatusOK, "Staff sign-in", views.StaffLogin("", "", s.loginCSRF(c)))
}

// login answers POST /staff/login. Attempts are limited per address, and
// then per device for a browser that signed in to the account before, or
// per account for any other: strangers guessing an account's password use
// up the account's allowance, never its owner's. A wrong e-mail and a
// wrong password read the same.
func (s *Server) login(c echo.Context) error {
	if !s.loginCSRFValid(c) {
		return errCSRF()
	}
	ctx := c.Request().Context()
	email := strings.ToLower(strings.TrimSpace(c.FormValue("email")))
	if ok, wait := s.deps.LoginIPLimiter.Allow(ctx, clientNetwork(c)); !ok {
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
			return s.page(c, http.StatusUnauthorized, "Staff sign-in", views.StaffLogin(email, ae.Message, s.loginCSRF(c)))
		}
		return err
	}
	s.rememberDevice(c, email)
	// A new token at sign-in: a session id seen before it is worth nothing after.
	if err := s.deps.Sessions.RenewToken(ctx); err != nil {
		return err
	}
	s.deps.Sessions.Put(ctx, "staffId", u.ID.String())
	s.deps.Sessions.Remove(ctx, "csrf")
	return c.Redirect(http.StatusSeeOther, "/staff")
}

func (s *Server) tooManyLogins(c echo.Context, email string, wait time.Duration) error {
	secs := max(apperr.Seconds(wait), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
	return s.page(c, http.StatusTooManyRequests, "Staff sign-in",
		views.StaffLogin(email, fmt.Sprintf("Too many sign-in attempts. Try again in %d s.", secs), s.loginCSRF(c)))
}

// logout answers POST /staff/logout: the session is deleted from the store.
func (s *Server) logout(c echo.Context) error {
	if err := s.deps.Sessions.Destroy(c.Request().Context()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/staff/login")
}
