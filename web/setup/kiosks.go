// Kiosk screens' tokens: an admin-only page (the service checks the role).

package setup

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// KiosksPage answers GET /staff/kiosks.
func (s *Admin) KiosksPage(c echo.Context) error {
	return s.renderKiosks(c, http.StatusOK, views.KiosksVM{})
}

func (s *Admin) renderKiosks(c echo.Context, status int, vm views.KiosksVM) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	rows, err := s.deps.Practice.KioskTokens(ctx, u)
	if err != nil {
		return err
	}
	vm.Nav = s.kit.Nav(c, "kiosks")
	for _, r := range rows {
		vm.Screens = append(vm.Screens, views.KioskScreenVM{ID: r.ID.String(), Name: r.Name, Created: r.CreatedAt.Format("2006-01-02"), Active: r.RevokedAt == nil})
	}
	return s.kit.Page(c, status, "Kiosk screens", views.Kiosks(vm))
}

// KioskCreate answers POST /staff/kiosks: the new screen's device link,
// whole, with a copy button and its QR code, shown this once.
func (s *Admin) KioskCreate(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	name := c.FormValue("name")
	token, err := s.deps.Practice.CreateKioskToken(ctx, u, name)
	if err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
			return s.renderKiosks(c, http.StatusUnprocessableEntity, views.KiosksVM{Error: ae.Message})
		}
		return err
	}
	clinic, err := s.deps.Clinics.ByID(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	created := &views.KioskCreatedVM{Name: strings.TrimSpace(name), URL: s.kit.PublicBase(c) + "/kiosk/" + clinic.Slug + "?device=" + url.QueryEscape(token)}
	if created.QR, err = httpx.QRDataURI(created.URL); err != nil {
		httpx.LoggerFrom(c).Warn("no QR code for the kiosk link", "err", err)
	}
	return s.renderKiosks(c, http.StatusCreated, views.KiosksVM{Created: created})
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
	return s.renderKiosks(c, http.StatusOK, views.KiosksVM{Notice: "Revoked: that screen's link no longer opens the board."})
}
