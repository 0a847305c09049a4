// Kiosk screens' tokens and languages: an admin-only page (the service
// checks the role).

package setup

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
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
	clinic, err := s.deps.Clinics.ByID(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	vm.Nav = s.kit.Nav(c, "kiosks")
	vm.Languages, vm.Language = practice.KioskLanguages, clinic.Language
	for _, r := range rows {
		vm.Screens = append(vm.Screens, views.KioskScreenVM{ID: r.ID.String(), Name: r.Name, Created: r.CreatedAt.Format("2006-01-02"),
			Language: r.Language, Active: r.RevokedAt == nil})
	}
	return s.kit.Page(c, status, httpx.Tr(c).T("kiosks.title", nil), views.Kiosks(vm))
}

// kioskRefusal is a refused form's message in the page's language.
func kioskRefusal(c echo.Context, ae *apperr.Error) string {
	tr := httpx.Tr(c)
	switch ae.Details["field"] {
	case "language":
		return tr.T("kiosks.bad_language", nil)
	case "name":
		if strings.TrimSpace(c.FormValue("name")) == "" {
			return tr.T("kiosks.name_missing", nil)
		}
	}
	return httpx.LocalMessage(tr, ae.Code, ae.Message, ae.Details)
}

// KioskCreate answers POST /staff/kiosks: the new screen's device link,
// whole, with a copy button and its QR code, shown this once.
func (s *Admin) KioskCreate(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	name := c.FormValue("name")
	token, err := s.deps.Practice.CreateKioskScreen(ctx, u, name, c.FormValue("language"))
	if err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
			return s.renderKiosks(c, http.StatusUnprocessableEntity, views.KiosksVM{Error: kioskRefusal(c, ae)})
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

// KioskLanguage answers POST /staff/kiosks/language: a screen's new
// language, which its board takes up by itself (its stream ends and the
// board reloads).
func (s *Admin) KioskLanguage(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return apperr.NotFoundf("id", "No such kiosk token.")
	}
	lang := c.FormValue("language")
	if err := s.deps.Practice.SetKioskLanguage(ctx, u, id, lang); err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
			return s.renderKiosks(c, http.StatusUnprocessableEntity, views.KiosksVM{Error: kioskRefusal(c, ae)})
		}
		return err
	}
	tr := httpx.Tr(c)
	name := ""
	if rows, err := s.deps.Practice.KioskTokens(ctx, u); err == nil {
		for _, r := range rows {
			if r.ID == id {
				name = r.Name
			}
		}
	}
	notice := tr.T("kiosks.language_notice", map[string]any{"Name": name, "Language": tr.T(views.KioskLanguageKey(lang), nil)})
	return s.renderKiosks(c, http.StatusOK, views.KiosksVM{Notice: notice})
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
	return s.renderKiosks(c, http.StatusOK, views.KiosksVM{Notice: httpx.Tr(c).T("kiosks.revoked_notice", nil)})
}
