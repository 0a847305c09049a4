package kiosk

import (
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/web/httpx"
)

// kioskEvery is how many seconds a board of two languages shows each:
// long enough to find one's type and read its times, short enough that a
// patient who glances up waits at most a moment for their language.
const kioskEvery = 15

// screen is the board a request opens: its clinic and its languages.
type screen struct {
	clinic clinics.Clinic
	langs  []string
	device string
}

// boardLangs are the languages of a screen whose language is screenLang
// (practice.KioskEnglish, KioskGerman or KioskBoth; "" for the clinic's)
// at a clinic speaking clinicLang: one, or for both the clinic's first.
func boardLangs(clinicLang, screenLang string) []string {
	switch screenLang {
	case practice.KioskEnglish, practice.KioskGerman:
		return []string{screenLang}
	case practice.KioskBoth:
		if clinicLang == i18n.German {
			return []string{i18n.German, i18n.English}
		}
		return []string{i18n.English, i18n.German}
	}
	return []string{i18n.For(clinicLang).Lang()}
}

// kioskScreen is the board's clinic and languages. Once an admin has made
// device tokens for a clinic, its board opens only with one of them
// (?device=), in the language chosen for that screen; before that it is
// public, having nothing private on it, and speaks the clinic's language.
func (s *Board) kioskScreen(c echo.Context) (screen, error) {
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return screen{}, err
	}
	httpx.SpeakOnly(c, clinic.Language) // a refusal speaks the clinic's language
	device := c.QueryParam("device")
	ok, lang, err := s.deps.Practice.KioskScreen(ctx, clinic.ID, device)
	if err != nil {
		return screen{}, err
	}
	if !ok {
		return screen{}, apperr.New(apperr.Forbidden, apperr.CodeKioskToken, "This screen needs a valid device link from the clinic's staff.")
	}
	scr := screen{clinic: clinic, langs: boardLangs(clinic.Language, lang), device: device}
	httpx.SpeakOnly(c, scr.langs[0])
	return scr, nil
}

// streamQuery is the query of the board's stream: its device token and
// the languages the board was drawn in.
func (scr screen) streamQuery() string {
	q := url.Values{"lang": {strings.Join(scr.langs, "-")}}
	if scr.device != "" {
		q.Set("device", scr.device)
	}
	return "?" + q.Encode()
}

// sameLanguages refuses a stream for a board drawn in other languages
// than its screen now speaks: the board's script reloads it.
func (scr screen) sameLanguages(drawn string) error {
	if drawn == "" || drawn == strings.Join(scr.langs, "-") {
		return nil
	}
	return apperr.New(apperr.Conflict, apperr.CodeKioskToken, "This screen's language changed: reload the board.")
}
