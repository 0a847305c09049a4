// Staff accounts: an admin-only page (the service checks the role).

package setup

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// UsersPage answers GET /staff/users.
func (s *Admin) UsersPage(c echo.Context) error {
	return s.renderUsers(c, http.StatusOK, usersNote{})
}

// usersNote is what the accounts page says above the list: a notice (and
// a sign-in link just made) or a problem.
type usersNote struct {
	notice, link, problem string
}

func (s *Admin) renderUsers(c echo.Context, status int, note usersNote) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	rows, err := s.deps.Staff.StaffUsers(ctx, u)
	if err != nil {
		return err
	}
	factors, err := s.deps.Staff.SecondFactorsOn(ctx, u)
	if err != nil {
		return err
	}
	readsAccess := u.May(privacy.ActReadAccess) == nil
	vm := views.UsersVM{
		Nav: s.kit.Nav(c, "users"), Notice: note.notice, Link: note.link, Error: note.problem,
		Roles: roleChoices(c), AccessLinks: readsAccess,
		FactorAdmin: u.May(staff.ActSecondFactorAdmin) == nil, FactorRequired: u.SecondFactorRequired,
	}
	for _, r := range rows {
		row := views.AccountRowVM{ID: r.ID.String(), Email: r.Email, Name: r.Name, Role: r.Role,
			Disabled: r.DisabledAt != nil, Factor: factors[r.ID], Own: r.ID == u.ID}
		if readsAccess {
			row.AccessURL = views.StaffAccessPath(r.ID)
		}
		vm.Accounts = append(vm.Accounts, row)
	}
	return s.kit.Page(c, status, httpx.Tr(c).T("admin.users.title", nil), views.Users(vm))
}

// roleChoices are the roles an account can have, each with what it may
// do as the role table (internal/staff/roles.go) allows it.
func roleChoices(c echo.Context) []views.RoleVM {
	l := httpx.Tr(c)
	out := make([]views.RoleVM, len(staff.Roles))
	for i, r := range staff.Roles {
		name := "admin.role." + r
		out[i] = views.RoleVM{Value: r, Name: l.T(name, nil), Does: l.T(name+".does", nil)}
	}
	return out
}

// accountError answers a refused account action on the accounts page, in
// the page's language; errors other than these kinds pass on.
func (s *Admin) accountError(c echo.Context, err error, key string, kinds ...apperr.Kind) error {
	ae := apperr.As(err)
	if ae == nil {
		return err
	}
	for _, k := range kinds {
		if ae.Kind == k {
			return s.renderUsers(c, httpx.StatusOf[ae.Kind], usersNote{problem: said(c, ae.Message, key)})
		}
	}
	return err
}

// accountID is the posted account; without one it answers a 400 that
// asks for one and returns uuid.Nil with that answer's error.
func (s *Admin) accountID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil || id == uuid.Nil {
		return uuid.Nil, s.renderUsers(c, http.StatusBadRequest, usersNote{problem: httpx.Tr(c).T("admin.users.choose", nil)})
	}
	return id, nil
}

// UserAccess answers POST /staff/users/access (id, action: disable or
// enable). A disabled account cannot sign in, and its open pages stop
// working at their next request, its streams within seconds.
func (s *Admin) UserAccess(c echo.Context) error {
	id, err := s.accountID(c)
	if id == uuid.Nil {
		return err
	}
	action := c.FormValue("action")
	if action != "disable" && action != "enable" {
		return s.renderUsers(c, http.StatusBadRequest, usersNote{problem: httpx.Tr(c).T("admin.users.choose_action", nil)})
	}
	row, err := s.deps.Staff.SetDisabled(c.Request().Context(), httpx.StaffUser(c), id, action == "disable")
	if err != nil {
		return s.accountError(c, err, "admin.users.err_disable", apperr.Invalid, apperr.NotFound)
	}
	done := "admin.users.enabled"
	if action == "disable" {
		done = "admin.users.disabled"
	}
	return s.renderUsers(c, http.StatusOK, usersNote{notice: httpx.Tr(c).T(done, map[string]any{"Email": row.Email})})
}

// UserRole answers POST /staff/users/role (id, role): another account of
// the clinic gets another role, from its next request on.
func (s *Admin) UserRole(c echo.Context) error {
	id, err := s.accountID(c)
	if id == uuid.Nil {
		return err
	}
	role := c.FormValue("role")
	row, err := s.deps.Staff.SetRole(c.Request().Context(), httpx.StaffUser(c), id, role)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid && ae.Field() == "role" {
		return s.renderUsers(c, http.StatusBadRequest, usersNote{problem: said(c, ae.Message, "admin.users.err_role")})
	}
	if err != nil {
		return s.accountError(c, err, "admin.users.err_own_role", apperr.Invalid, apperr.NotFound)
	}
	l := httpx.Tr(c)
	return s.renderUsers(c, http.StatusOK, usersNote{notice: l.T("admin.users.role_changed", map[string]any{"Email": row.Email, "Role": l.T(views.RoleKey(row.Role), nil)})})
}

// UserLink answers POST /staff/users/link (id): a one-time sign-in link
// for another account of the clinic, shown once. The account's sessions
// end at once: a reset means its password may be known to someone else.
func (s *Admin) UserLink(c echo.Context) error {
	id, err := s.accountID(c)
	if id == uuid.Nil {
		return err
	}
	ctx := c.Request().Context()
	acc, link, err := s.deps.Staff.MakeSignInLink(ctx, httpx.StaffUser(c), id, time.Now())
	if err != nil {
		return s.accountError(c, err, "admin.users.err_link", apperr.Invalid, apperr.NotFound, apperr.Conflict)
	}
	if _, err := httpx.EndStaffSessions(ctx, s.deps.Sessions, acc.ID, ""); err != nil {
		return err
	}
	// The page carries the link's token: keep it out of referrers.
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return s.renderUsers(c, http.StatusCreated, usersNote{
		notice: httpx.Tr(c).T("admin.users.link_made", map[string]any{"Email": acc.Email, "Hours": int(staff.LinkLifetime.Hours())}),
		link:   link.URL(s.kit.PublicBase(c)),
	})
}

// UserCreate answers POST /staff/users.
func (s *Admin) UserCreate(c echo.Context) error {
	_, err := s.deps.Staff.CreateStaffUser(c.Request().Context(), httpx.StaffUser(c), c.FormValue("email"), c.FormValue("name"), c.FormValue("password"), c.FormValue("role"))
	if err != nil {
		ae := apperr.As(err)
		if ae != nil && (ae.Kind == apperr.Invalid || ae.Kind == apperr.Conflict) {
			msg := ae.Message
			if httpx.Tr(c).Lang() != i18n.English {
				msg = fieldMessage(httpx.Tr(c), ae)
				if ae.Kind == apperr.Conflict {
					msg = httpx.Tr(c).T("admin.users.err_taken", nil)
				}
			}
			return s.renderUsers(c, httpx.StatusOf[ae.Kind], usersNote{problem: msg})
		}
		return err
	}
	return s.renderUsers(c, http.StatusCreated, usersNote{notice: httpx.Tr(c).T("admin.users.created", nil)})
}
