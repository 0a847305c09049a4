package signin

import (
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
	"github.com/clinic/booking/web/httpx"
)

// The staff service refuses in English (its messages are also the JSON
// API's). A page says a refusal in its reader's language: each message
// below is the catalogue's English text of its key, so a refusal whose
// message reads as one of them is said in the key's words; one not
// listed keeps its English.
var refusals = []struct {
	key  string
	data map[string]any
}{
	{"signin.error.credentials", nil},
	{"signin.error.no_longer", nil},
	{"signin.error.code", nil},
	{"signin.error.app_code", nil},
	{"signin.error.current", nil},
	{"signin.error.short", map[string]any{"Min": staff.PasswordMinChars}},
	{"signin.error.long", map[string]any{"Max": textfield.PasswordMaxBytes}},
	{"signin.error.is_email", nil},
	{"signin.error.common", nil},
	{"signin.error.no_session", nil},
	{"signin.error.link_unknown", nil},
	{"signin.error.link_used", nil},
	{"signin.error.link_used_short", nil},
	{"signin.error.link_replaced", nil},
	{"signin.error.link_expired", nil},
	{"signin.error.disabled", nil},
}

// say is err's message in the page's language.
func say(c echo.Context, err *apperr.Error) string {
	l := httpx.Tr(c)
	if l.Lang() == i18n.English {
		return err.Message
	}
	en := i18n.For(i18n.English)
	for _, r := range refusals {
		if en.T(r.key, r.data) == err.Message {
			return l.T(r.key, r.data)
		}
	}
	return err.Message
}

// tooMany is the sign-in forms' refusal of one more try for secs seconds.
func tooMany(c echo.Context, secs int) string {
	return httpx.Tr(c).T("signin.too_many", map[string]any{"Seconds": secs})
}

// roleWords is a role as the page's language names it.
func roleWords(c echo.Context, role string) string {
	if role == "" {
		return ""
	}
	key := "signin.role." + role
	if w := httpx.Tr(c).T(key, nil); w != key {
		return w
	}
	return role
}
