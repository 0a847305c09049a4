package httpx

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/views"
)

// StatusOf is the HTTP status of each kind of error.
var StatusOf = map[apperr.Kind]int{
	apperr.Internal:             http.StatusInternalServerError,
	apperr.Invalid:              http.StatusBadRequest,
	apperr.Unauthorized:         http.StatusUnauthorized,
	apperr.Forbidden:            http.StatusForbidden,
	apperr.NotFound:             http.StatusNotFound,
	apperr.Conflict:             http.StatusConflict,
	apperr.Gone:                 http.StatusGone,
	apperr.PreconditionFailed:   http.StatusPreconditionFailed,
	apperr.Unprocessable:        http.StatusUnprocessableEntity,
	apperr.Locked:               http.StatusLocked,
	apperr.PreconditionRequired: http.StatusPreconditionRequired,
	apperr.TooMany:              http.StatusTooManyRequests,
	apperr.Unavailable:          http.StatusServiceUnavailable,
	apperr.TooLarge:             http.StatusRequestEntityTooLarge,
}

type errorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the JSON shape of an error.
type ErrorDetail struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// HandleError is the one place errors become responses: an *apperr.Error
// keeps its code and message, Echo's own errors keep their status, and
// anything else is an internal error whose cause only the log sees.
func (s *Kit) HandleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, body := ToResponse(err)
	log := LoggerFrom(c)
	if status >= 500 {
		log.Error("request failed", "status", status, "err", err)
	} else {
		log.Debug("request refused", "status", status, "code", body.Error.Code)
	}
	SetRetryAfter(c, err)
	if status == http.StatusServiceUnavailable && c.Response().Header().Get("Retry-After") == "" {
		c.Response().Header().Set("Retry-After", strconv.Itoa(apperr.Seconds(unavailableRetryAfter)))
	}
	switch {
	case c.Request().Method == http.MethodHead:
		err = c.NoContent(status)
	case WantsHTML(c):
		err = s.errorPage(c, status, body.Error)
	default:
		err = c.JSON(status, body)
	}
	if err != nil {
		log.Warn("write error response", "err", err)
	}
}

// unavailableRetryAfter is the Retry-After of a 503 whose error names no
// wait of its own: a dependency that is away (a Redis master failing over
// to its replica takes about four seconds, a PostgreSQL restart or
// failover a few)
// is worth asking again soon, not at once.
const unavailableRetryAfter = 2 * time.Second

// ToResponse is the status and JSON body that answer err.
func ToResponse(err error) (int, errorBody) {
	if postgres.Unavailable(err) {
		return http.StatusServiceUnavailable, errorBody{ErrorDetail{
			Code: apperr.CodeUnavailable, Message: "The booking service is briefly unavailable. Please try again in a moment.", Details: map[string]any{},
		}}
	}
	if ae := apperr.As(err); ae != nil {
		details := ae.Details
		if details == nil {
			details = map[string]any{}
		}
		status, ok := StatusOf[ae.Kind]
		if !ok || ae.Kind == apperr.Internal {
			return http.StatusInternalServerError, internalBody()
		}
		return status, errorBody{ErrorDetail{Code: ae.Code, Message: ae.Message, Details: details}}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code < 500 {
			msg = m
		}
		return he.Code, errorBody{ErrorDetail{Code: codeForStatus(he.Code), Message: msg, Details: map[string]any{}}}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable, errorBody{ErrorDetail{
			Code: apperr.CodeUnavailable, Message: "The server is busy. Please try again in a moment.", Details: map[string]any{},
		}}
	}
	return http.StatusInternalServerError, internalBody()
}

func internalBody() errorBody {
	return errorBody{ErrorDetail{Code: apperr.CodeInternal, Message: "Internal error.", Details: map[string]any{}}}
}

func codeForStatus(status int) string {
	switch status {
	case http.StatusNotFound:
		return apperr.CodeNotFound
	case http.StatusMethodNotAllowed:
		return apperr.CodeMethodNotAllowed
	case http.StatusBadRequest:
		return apperr.CodeInvalidArgument
	case http.StatusRequestEntityTooLarge:
		return apperr.CodeTooLarge
	case http.StatusUnsupportedMediaType:
		return apperr.CodeUnsupportedMediaType
	case http.StatusTooManyRequests:
		return apperr.CodeRateLimited
	case http.StatusServiceUnavailable:
		return apperr.CodeUnavailable
	default:
		if status >= 500 {
			return apperr.CodeInternal
		}
		return apperr.CodeError
	}
}

// WantsHTML: pages get an error page, never raw JSON; the API and the
// streams keep the JSON shape.
func WantsHTML(c echo.Context) bool {
	p := c.Request().URL.Path
	if strings.HasPrefix(p, "/v1/") || p == "/healthz" || p == "/readyz" || strings.HasSuffix(p, "/live") {
		return false
	}
	return strings.Contains(c.Request().Header.Get("Accept"), "text/html") || c.Request().Header.Get("HX-Request") == "true" ||
		!strings.Contains(c.Request().Header.Get("Accept"), "json")
}

// errorPage is an error as a page, in the page's language: the title by
// status, the message by the error's code (see LocalMessage).
func (s *Kit) errorPage(c echo.Context, status int, e ErrorDetail) error {
	l := ErrorLocalizer(c)
	c.SetRequest(c.Request().WithContext(i18n.WithLocalizer(c.Request().Context(), l)))
	title := PageTitle(l, status)
	msg := LocalMessage(l, e.Code, e.Message, e.Details)
	return Render(c, status, views.Page(title, s.deps.Assets), views.ErrorPage(status, title, msg))
}

// PageTitle is the title of an error page of the given status.
func PageTitle(l *i18n.Localizer, status int) string {
	switch status {
	case http.StatusNotFound:
		return l.T("error.title.not_found", nil)
	case http.StatusBadRequest:
		return l.T("error.title.bad_request", nil)
	case http.StatusConflict:
		return l.T("error.title.conflict", nil)
	case http.StatusTooManyRequests:
		return l.T("error.title.too_many", nil)
	case http.StatusServiceUnavailable:
		return l.T("error.title.unavailable", nil)
	}
	if status >= 500 {
		return l.T("error.title.internal", nil)
	}
	if l.Lang() == i18n.English {
		return http.StatusText(status)
	}
	return l.T("error.title.other", nil)
}
