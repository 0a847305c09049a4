package httpx

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
)

// Speak chooses the language of a patient page for a clinic speaking
// clinicLang (cookie, then Accept-Language, then the clinic's) and puts it
// in the request's context, with the switcher leading back to this page.
func Speak(c echo.Context, clinicLang string) *i18n.Localizer {
	if slug := c.Param("slug"); slug != "" {
		PrivacyFor(c, slug)
	}
	req := c.Request()
	if i18n.Has(req.Context()) {
		return i18n.FromContext(req.Context())
	}
	l := i18n.Choose(req, clinicLang)
	c.Response().Header().Add("Vary", "Accept-Language")
	ctx := i18n.WithLocalizer(req.Context(), l)
	if req.Method == http.MethodGet {
		ctx = i18n.WithSwitch(ctx, (&url.URL{Path: localPath(req.URL.Path), RawQuery: req.URL.RawQuery}).RequestURI())
	}
	c.SetRequest(req.WithContext(ctx))
	return l
}

// SpeakOnly puts the clinic's own language in the request's context: the
// kiosk board is the clinic's, whoever looks at it.
func SpeakOnly(c echo.Context, clinicLang string) *i18n.Localizer {
	l := i18n.For(clinicLang)
	c.SetRequest(c.Request().WithContext(i18n.WithLocalizer(c.Request().Context(), l)))
	return l
}

// SpeakStaff chooses the language of the staff pages: the switcher's
// cookie, then the browser's Accept-Language, then English. A staff
// member's pages speak their own language whatever the clinic's is; the
// switcher (in the staff frame's footer) leads back to the page shown.
func SpeakStaff(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		l := i18n.Choose(req, i18n.English)
		c.Response().Header().Add("Vary", "Accept-Language")
		ctx := i18n.WithLocalizer(req.Context(), l)
		if req.Method == http.MethodGet {
			ctx = i18n.WithSwitch(ctx, (&url.URL{Path: localPath(req.URL.Path), RawQuery: req.URL.RawQuery}).RequestURI())
		}
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}

// Tr is the language speak chose for this request (English before it).
func Tr(c echo.Context) *i18n.Localizer { return i18n.FromContext(c.Request().Context()) }

// T is the message key in the language chosen for this request.
func T(c echo.Context, key string) string { return Tr(c).T(key, nil) }

// languageCookieAge is how long the switcher's choice lasts: a year.
const languageCookieAge = 365 * 24 * 60 * 60

// switchLanguage turns the switcher's ?lang= into the lang cookie and
// sends the browser back to the same page without it. Any other value is
// a 400 naming the field.
func switchLanguage(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		q := req.URL.Query()
		if req.Method != http.MethodGet || !q.Has(i18n.SwitchParam) {
			return next(c)
		}
		lang := q.Get(i18n.SwitchParam)
		if !i18n.IsSupported(lang) {
			return apperr.Invalidf(i18n.SwitchParam, "lang must be one of %s.", strings.Join(i18n.Supported, ", "))
		}
		c.SetCookie(&http.Cookie{
			Name: i18n.CookieName, Value: lang, Path: "/", MaxAge: languageCookieAge,
			SameSite: http.SameSiteLaxMode, Secure: req.TLS != nil,
		})
		q.Del(i18n.SwitchParam)
		back := url.URL{Path: localPath(req.URL.Path), RawQuery: q.Encode()}
		return c.Redirect(http.StatusSeeOther, back.RequestURI())
	}
}

// localPath is p as a path of this site: one leading slash, cleaned. A
// request for "/%2Fevil.example" has the path "//evil.example", which a
// browser sent there would read as another site.
func localPath(p string) string {
	return path.Clean("/" + strings.TrimLeft(p, `/\`))
}

// errorKeys name the message of each public code on patient pages: the
// JSON API keeps the errors' English messages, a page speaks its
// language. A code without a key shows the error's own message.
var errorKeys = map[string]string{
	apperr.CodeSlotTaken:           "error.SLOT_TAKEN",
	apperr.CodeSlotUnavailable:     "error.SLOT_UNAVAILABLE",
	apperr.CodeSlotHeld:            "error.SLOT_HELD",
	apperr.CodeHoldExpired:         "error.HOLD_EXPIRED",
	apperr.CodeHoldGone:            "error.HOLD_EXPIRED",
	apperr.CodeHoldQuota:           "error.HOLD_QUOTA",
	apperr.CodeAddressHoldQuota:    "error.HOLD_QUOTA",
	apperr.CodeHoldReclaimTooSoon:  "error.HOLD_RECLAIM_TOO_SOON",
	apperr.CodeCooldown:            "error.COOLDOWN",
	apperr.CodeRateLimited:         "error.RATE_LIMITED",
	apperr.CodeNotYourHold:         "error.NOT_YOUR_HOLD",
	apperr.CodeNotFound:            "error.NOT_FOUND",
	apperr.CodeInvalidArgument:     "error.INVALID_ARGUMENT",
	apperr.CodeUnavailable:         "error.UNAVAILABLE",
	apperr.CodeBookingNotActive:    "error.BOOKING_NOT_ACTIVE",
	apperr.CodeChangeDeadline:      "error.CHANGE_DEADLINE",
	apperr.CodeConcurrencyConflict: "error.CONCURRENCY_CONFLICT",
	apperr.CodeKioskToken:          "error.KIOSK_TOKEN",
	apperr.CodeTokenRequired:       "error.NOT_FOUND",
	apperr.CodeTooLarge:            "error.TOO_LARGE",
	apperr.CodeInternal:            "error.INTERNAL",
	apperr.CodeMethodNotAllowed:    "error.ERROR",
	apperr.CodeError:               "error.ERROR",

	apperr.CodeVerificationRequired:  "error.VERIFICATION_REQUIRED",
	apperr.CodeBookingAllowance:      "error.BOOKING_ALLOWANCE",
	apperr.CodeVerificationCodeQuota: "error.VERIFICATION_CODE_QUOTA",
	apperr.CodeVerificationCodeGone:  "error.VERIFICATION_CODE_GONE",
	apperr.CodeVerificationCodeWrong: "error.VERIFICATION_CODE_WRONG",
}

// fieldKeys name the message of a patient's form field that was refused.
var fieldKeys = map[string]string{
	"patient.name":  "error.field.patient.name",
	"patient.email": "error.field.patient.email",
	"patient.phone": "error.field.patient.phone",
}

// LocalMessage is what a patient page says for an error: in English the
// error's own message, in another language the code's message, filled
// with the field and the wait the error names.
func LocalMessage(l *i18n.Localizer, code, english string, details map[string]any) string {
	key, ok := errorKeys[code]
	if l.Lang() == i18n.English || !ok {
		return english
	}
	data := map[string]any{"Field": "", "Seconds": 0}
	if f, ok := details["field"].(string); ok {
		if fk, ok := fieldKeys[f]; ok && code == apperr.CodeInvalidArgument {
			return l.T(fk, nil)
		}
		data["Field"] = fieldWord(l, f)
	}
	if n, ok := details["retryAfterSeconds"].(int); ok {
		data["Seconds"] = n
	}
	return l.T(key, data)
}

// fieldWord is a field's name in l's words ("Woche" for week), so an
// error names it as the reader would; a field without words keeps its
// name.
func fieldWord(l *i18n.Localizer, field string) string {
	key := "field." + field
	if w := l.T(key, nil); w != key {
		return w
	}
	return field
}

// ErrorLocalizer is the language of an HTML error page: the one the page's
// handler chose, or for an error before it chose (no such clinic), the
// visitor's own.
func ErrorLocalizer(c echo.Context) *i18n.Localizer {
	req := c.Request()
	if i18n.Has(req.Context()) {
		return i18n.FromContext(req.Context())
	}
	return i18n.Choose(req, i18n.English)
}

// PrivacyFor makes the page link to the privacy page of the clinic slug
// in its footer. Speak does it for every page under /c/{slug}; a page
// reached otherwise (a manage link) names its clinic itself.
func PrivacyFor(c echo.Context, slug string) {
	c.SetRequest(c.Request().WithContext(views.WithPrivacyURL(c.Request().Context(), "/c/"+slug+"/privacy")))
}

// Known is a message key, with its placeholders' data, whose English
// words a service also uses as the message of a refusal.
type Known struct {
	Key  string
	Data map[string]any
}

// InWords is a service's English message in l's language: the words of
// the known key whose English text it is; a message none of them reads
// as keeps its English. Services refuse in English (their messages are
// also the JSON API's), and this is how a page says such a refusal.
func InWords(l *i18n.Localizer, english string, known []Known) string {
	if l.Lang() == i18n.English {
		return english
	}
	en := i18n.For(i18n.English)
	for _, k := range known {
		if en.T(k.Key, k.Data) == english {
			return l.T(k.Key, k.Data)
		}
	}
	return english
}
