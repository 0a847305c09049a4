package httpx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
)

type staffKey struct{}

// StaffUser is the signed-in staff member of a /staff request.
func StaffUser(c echo.Context) staff.User {
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

// CSRFToken is the signed-in session's CSRF token, made on first use
// (the sign-in form has its own, see loginCSRF).
func (s *Kit) CSRFToken(c echo.Context) string {
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

// Nav is the staff header of a page. It also puts into the request's
// context what the account may use, so the header and the page show only
// those links and forms.
func (s *Kit) Nav(c echo.Context, active string) views.StaffNav {
	u := StaffUser(c)
	name := ""
	if cl, err := s.deps.Clinics.ByID(c.Request().Context(), u.ClinicID); err == nil {
		name = cl.Name
	}
	c.SetRequest(c.Request().WithContext(views.WithStaffCan(c.Request().Context(), StaffCan(u))))
	return views.StaffNav{Clinic: name, Email: u.Email, CSRF: s.CSRFToken(c), Active: active}
}

// StaffCan asks the role table what u may use of the staff pages.
func StaffCan(u staff.User) views.StaffCan {
	may := func(a staff.Action) bool { return u.May(a) == nil }
	return views.StaffCan{
		Calendar: may(staff.ActCalendar), Book: may(staff.ActBook), Search: may(staff.ActSearch),
		Specialists: may(staff.ActSpecialists), EditSpecialists: may(staff.ActSpecialistsEdit),
		Hours: may(staff.ActHours), Overrides: may(staff.ActOverrides),
		Types: may(staff.ActTypes), Audit: may(staff.ActAudit), Accounts: may(staff.ActAccounts), Kiosks: may(staff.ActKiosks),
		Settings: may(staff.ActSettings), Patients: may(staff.ActPatients),
		Closures: may(staff.ActClosures), ClinicClosures: may(staff.ActClinicClosures),
	}
}

// WithStaffUser replaces the request's signed-in staff member, for a page
// that changed what was loaded at the start of the request.
func WithStaffUser(c echo.Context, u staff.User) {
	c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), staffKey{}, u)))
}
