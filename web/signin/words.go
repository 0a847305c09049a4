package signin

import (
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/textfield"
	"github.com/clinic/booking/web/httpx"
)

// The staff service refuses in English (its messages are also the JSON
// API's). A page says a refusal in its reader's language: each message
// below is the catalogue's English text of its key, so a refusal whose
// message reads as one of them is said in the key's words; one not
// listed keeps its English.
var refusals = []httpx.Known{
	{Key: "signin.error.credentials"},
	{Key: "signin.error.no_longer"},
	{Key: "signin.error.code"},
	{Key: "signin.error.app_code"},
	{Key: "signin.error.current"},
	{Key: "signin.error.short", Data: map[string]any{"Min": staff.PasswordMinChars}},
	{Key: "signin.error.long", Data: map[string]any{"Max": textfield.PasswordMaxBytes}},
	{Key: "signin.error.is_email"},
	{Key: "signin.error.common"},
	{Key: "signin.error.no_session"},
	{Key: "signin.error.link_unknown"},
	{Key: "signin.error.link_used"},
	{Key: "signin.error.link_used_short"},
	{Key: "signin.error.link_replaced"},
	{Key: "signin.error.link_expired"},
	{Key: "signin.error.disabled"},
}

// say is err's message in the page's language.
func say(c echo.Context, err *apperr.Error) string {
	return httpx.InWords(httpx.Tr(c), err.Message, refusals)
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
