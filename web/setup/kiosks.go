// Kiosk screens' tokens: an admin-only page (the service checks the role).

package setup

import (
	"net/http"
	"net/url"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// KiosksPage answers GET /staff/kiosks.
func (s *Admin) KiosksPage(c echo.Context) error {
	return s.renderKiosks(c, http.StatusOK, "", "")
}

func (s *Admin) renderKiosks(c echo.Context, status int, notice, problem string) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	rows, err := s.deps.Practice.KioskTokens(ctx, u)
	if err != nil {
		return err
	}
	nav := s.kit.Nav(c, "kiosks")
	vm := views.TableVM{Nav: nav, Title: "Kiosk screens", Head: []string{"Name", "Created", "State"}, Notice: notice, Error: problem}
	var revocable []views.OptionVM
	for _, r := range rows {
		state := "active"
		if r.RevokedAt != nil {
			state = "revoked"
		} else {
			revocable = append(revocable, views.OptionVM{Value: r.ID.String(), Label: r.Name})
		}
		vm.Rows = append(vm.Rows, []string{r.Name, r.CreatedAt.Format("2006-01-02"), state})
	}
	return httpx.Render(c, status, views.Page("Kiosk screens", s.deps.Assets), httpx.TemplChildren(views.Table(vm), views.KioskForm(nav, revocable)))
}

// KioskCreate answers POST /staff/kiosks.
func (s *Admin) KioskCreate(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	token, err := s.deps.Practice.CreateKioskToken(ctx, u, c.FormValue("name"))
	if err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
			return s.renderKiosks(c, http.StatusUnprocessableEntity, "", ae.Message)
		}
		return err
	}
	clinic, err := s.deps.Clinics.ByID(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	link := "/kiosk/" + clinic.Slug + "?device=" + url.QueryEscape(token)
	return s.renderKiosks(c, http.StatusCreated, "Open this address on the screen (shown once): "+link, "")
}

// KioskRevoke answers POST /staff/kiosks/revoke.
func (s *Admin) KioskRevoke(c echo.Context) error {
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return apperr.NotFoundf("id", "No such kiosk token.")
	}
	if err := s.deps.Practice.RevokeKioskToken(c.Request().Context(), httpx.StaffUser(c), id); err != nil {
		return err
	}
	return s.renderKiosks(c, http.StatusOK, "Revoked.", "")
}
