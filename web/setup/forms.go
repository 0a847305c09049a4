package setup

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/web/httpx"
)

// fieldErrors turns an invalid-input error into a form's field map in the
// page's language; any other error comes back to be handled as such.
func fieldErrors(c echo.Context, err error) (map[string]string, error) {
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		return map[string]string{ae.Field(): fieldMessage(httpx.Tr(c), ae)}, nil
	}
	return nil, err
}

// fieldMessage is what a form says beside a refused field: in English the
// service's own message (it names the exact fault); in another language
// the field's rule from the message files ("admin.err.<field>"), or a
// plain "check this field" for a field without one.
func fieldMessage(l *i18n.Localizer, ae *apperr.Error) string {
	if l.Lang() == i18n.English {
		return ae.Message
	}
	field := ae.Field()
	group, _, _ := strings.Cut(field, ".") // "hours.monday": the hours' rule
	for _, key := range []string{"admin.err." + field, "admin.err." + group} {
		if msg := l.T(key, nil); msg != key {
			return msg
		}
	}
	return l.T("admin.err.field", nil)
}

// said is english on an English page and the message key's words on
// another: for a service's message whose exact English wording a page has
// always shown.
func said(c echo.Context, english, key string) string {
	l := httpx.Tr(c)
	if l.Lang() == i18n.English {
		return english
	}
	return l.T(key, nil)
}

func isStale(err error) bool {
	ae := apperr.As(err)
	return ae != nil && ae.Code == apperr.CodeConcurrencyConflict
}

// staleMessage is what a form says when someone else saved it first.
func staleMessage(c echo.Context, err error) string {
	return said(c, apperr.As(err).Message, "admin.stale")
}
