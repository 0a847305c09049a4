// Staff accounts: an admin-only page (the service checks the role).

package setup

import (
	"fmt"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// UsersPage answers GET /staff/users.
func (s *Admin) UsersPage(c echo.Context) error {
	return s.renderUsers(c, http.StatusOK, "", "")
}

func (s *Admin) renderUsers(c echo.Context, status int, notice, problem string) error {
	rows, err := s.deps.Staff.StaffUsers(c.Request().Context(), httpx.StaffUser(c))
	if err != nil {
		return err
	}
	factors, err := s.deps.Staff.SecondFactorsOn(c.Request().Context(), httpx.StaffUser(c))
	if err != nil {
		return err
	}
	nav := s.kit.Nav(c, "users")
	vm := views.TableVM{Nav: nav, Title: "Staff accounts", Head: []string{"E-mail", "Name", "Role", "State", "Second factor"}, Notice: notice, Error: problem}
	var others []views.OptionVM
	for _, r := range rows {
		state := "active"
		if r.DisabledAt != nil {
			state = "disabled"
		}
		factor := "off"
		if factors[r.ID] {
			factor = "on"
		}
		vm.Rows = append(vm.Rows, []string{r.Email, r.Name, r.Role, state, factor})
		vm.RowLinks = append(vm.RowLinks, accessLink(c, r.ID))
		if r.ID != httpx.StaffUser(c).ID {
			others = append(others, views.OptionVM{Value: r.ID.String(), Label: r.Email})
		}
	}
	roles := make([]views.OptionVM, len(staff.Roles))
	for i, r := range staff.Roles {
		roles[i] = views.OptionVM{Value: r, Label: r, Selected: r == staff.RoleStaff}
	}
	var security templ.Component = templ.NopComponent
	if u := httpx.StaffUser(c); u.May(staff.ActSecondFactorAdmin) == nil {
		security = views.UserSecondFactorForms(nav, others, u.SecondFactorRequired)
	}
	return httpx.Render(c, status, views.Page("Staff accounts", s.deps.Assets),
		httpx.TemplChildren(views.Table(vm), templ.Join(accessLinks(c), views.UserForm(nav, others, roles), security)))
}

// accessLink is the link to what an account looked at, for those who may
// read the record ("": none).
func accessLink(c echo.Context, id uuid.UUID) string {
	if httpx.StaffUser(c).May(privacy.ActReadAccess) != nil {
		return ""
	}
	return views.StaffAccessPath(id)
}

// accessLinks is the users page's link to the record of who looked, for
// those who may read it.
func accessLinks(c echo.Context) templ.Component {
	if httpx.StaffUser(c).May(privacy.ActReadAccess) != nil {
		return templ.NopComponent
	}
	return views.AccessLink()
}

// UserAccess answers POST /staff/users/access (id, action: disable or
// enable). A disabled account cannot sign in, and its open pages stop
// working at their next request, its streams within seconds.
func (s *Admin) UserAccess(c echo.Context) error {
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return s.renderUsers(c, http.StatusBadRequest, "", "Choose an account.")
	}
	action := c.FormValue("action")
	if action != "disable" && action != "enable" {
		return s.renderUsers(c, http.StatusBadRequest, "", "Choose to disable or enable the account.")
	}
	row, err := s.deps.Staff.SetDisabled(c.Request().Context(), httpx.StaffUser(c), id, action == "disable")
	if err != nil {
		if ae := apperr.As(err); ae != nil && (ae.Kind == apperr.Invalid || ae.Kind == apperr.NotFound) {
			return s.renderUsers(c, httpx.StatusOf[ae.Kind], "", ae.Message)
		}
		return err
	}
	return s.renderUsers(c, http.StatusOK, "Account "+row.Email+" "+action+"d.", "")
}

// UserLink answers POST /staff/users/link (id): a one-time sign-in link
// for another account of the clinic, shown once. The account's sessions
// end at once: a reset means its password may be known to someone else.
func (s *Admin) UserLink(c echo.Context) error {
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return s.renderUsers(c, http.StatusBadRequest, "", "Choose an account.")
	}
	ctx := c.Request().Context()
	acc, link, err := s.deps.Staff.MakeSignInLink(ctx, httpx.StaffUser(c), id, time.Now())
	if err != nil {
		if ae := apperr.As(err); ae != nil && (ae.Kind == apperr.Invalid || ae.Kind == apperr.NotFound || ae.Kind == apperr.Conflict) {
			return s.renderUsers(c, httpx.StatusOf[ae.Kind], "", ae.Message)
		}
		return err
	}
	if _, err := httpx.EndStaffSessions(ctx, s.deps.Sessions, acc.ID, ""); err != nil {
		return err
	}
	// The page carries the link's token: keep it out of referrers.
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	base := s.kit.PublicBase(c)
	return s.renderUsers(c, http.StatusCreated, fmt.Sprintf(
		"Sign-in link for %s, shown this once (it works once, for %d hours; older links of the account no longer work, and its sessions were ended): %s",
		acc.Email, int(staff.LinkLifetime.Hours()), link.URL(base)), "")
}

// UserCreate answers POST /staff/users.
func (s *Admin) UserCreate(c echo.Context) error {
	_, err := s.deps.Staff.CreateStaffUser(c.Request().Context(), httpx.StaffUser(c), c.FormValue("email"), c.FormValue("name"), c.FormValue("password"), c.FormValue("role"))
	if err != nil {
		ae := apperr.As(err)
		if ae != nil && (ae.Kind == apperr.Invalid || ae.Kind == apperr.Conflict) {
			return s.renderUsers(c, httpx.StatusOf[ae.Kind], "", ae.Message)
		}
		return err
	}
	return s.renderUsers(c, http.StatusCreated, "Account created.", "")
}
