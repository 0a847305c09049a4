// "Find my booking": a patient who lost the link to a booking gives the
// e-mail address they booked with, and the clinic sends that address the
// list of its coming appointments, each with a link of its own. The page
// answers the same whether or not the address has bookings: it tells
// nobody who is a patient here.

package patient

import (
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/textfield"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// findOutageWait is the Retry-After of a request refused because the
// limits could not be counted.
const findOutageWait = time.Minute

// findEmail is the one field of the form.
var findEmail = textfield.Field{Name: "email", Label: "The e-mail address", Max: textfield.PatientEmail.Max}

// findPath is the form of a clinic.
func findPath(slug string) string { return "/c/" + slug + "/find" }

// findClinic reads the clinic of the page and speaks its language.
func (s *Pages) findClinic(c echo.Context) (clinics.Clinic, *i18n.Localizer, error) {
	clinic, err := s.deps.Clinics.BySlug(c.Request().Context(), c.Param("slug"))
	if err != nil {
		return clinics.Clinic{}, nil, err
	}
	l := httpx.Speak(c, clinic.Language)
	withContact(c, clinic)
	return clinic, l, nil
}

func (s *Pages) findForm(c echo.Context, status int, clinic clinics.Clinic, l *i18n.Localizer, vm views.FindVM) error {
	vm.Clinic, vm.Action = httpx.ClinicVM(clinic), findPath(clinic.Slug)
	return s.kit.Page(c, status, l.T("find.title", nil)+" · "+clinic.Name, views.FindPage(vm))
}

// FindPage answers GET /c/:slug/find: the form.
func (s *Pages) FindPage(c echo.Context) error {
	clinic, l, err := s.findClinic(c)
	if err != nil {
		return err
	}
	return s.findForm(c, http.StatusOK, clinic, l, views.FindVM{})
}

// FindRequest answers POST /c/:slug/find (email). Whatever the address,
// a valid one within the limits gets the same page: the list is written
// to the queue either way, and its worker drops it when there is nothing
// to send.
func (s *Pages) FindRequest(c echo.Context) error {
	clinic, l, err := s.findClinic(c)
	if err != nil {
		return err
	}
	if err := findLimit(c, s.deps.FindIPLimiter, httpx.ClientNetwork(c)); err != nil {
		return s.findRefused(c, clinic, l, err)
	}
	email, ok := lookupAddress(c.FormValue("email"))
	if !ok {
		return s.findForm(c, http.StatusBadRequest, clinic, l, views.FindVM{Email: email, Error: l.T("find.error.email", nil)})
	}
	if err := findLimit(c, s.deps.FindEmailLimiter, s.pub.EmailKey(clinic, email)); err != nil {
		return s.findRefused(c, clinic, l, err)
	}
	if err := s.deps.Outbox.RequestLookup(c.Request().Context(), clinic.ID, email, l.Lang()); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	vm := views.FindVM{Clinic: httpx.ClinicVM(clinic), Action: findPath(clinic.Slug)}
	return s.kit.Page(c, http.StatusOK, l.T("find.sent.title", nil)+" · "+clinic.Name, views.FindSent(vm))
}

// lookupAddress is the address typed, trimmed, and whether it is one an
// e-mail can go to (the check a booking's address passes).
func lookupAddress(raw string) (string, bool) {
	email, err := findEmail.Check(raw)
	if err != nil || email == "" {
		return email, false
	}
	a, err := mail.ParseAddress(email)
	at := strings.LastIndex(email, "@")
	return email, err == nil && a.Address == email && at > 0 && strings.Contains(email[at:], ".")
}

// findLimit counts one request against lim. Unlike the other limits it
// fails closed: when Redis cannot count, the request is refused (503), or
// an outage would let anyone send lists to any address without bound.
func findLimit(c echo.Context, lim *ratelimit.Limiter, key string) error {
	ok, wait, err := lim.Check(c.Request().Context(), key)
	switch {
	case err != nil:
		httpx.LoggerFrom(c).Warn("find my booking refused: the limits cannot be counted", "err", err)
		return &apperr.Error{Kind: apperr.Unavailable, Code: apperr.CodeUnavailable, RetryAfter: findOutageWait,
			Message: "Lists cannot be sent right now. Please try again in a minute."}
	case !ok:
		return &apperr.Error{Kind: apperr.TooMany, Code: apperr.CodeRateLimited, RetryAfter: time.Duration(apperr.Seconds(wait)) * time.Second,
			Message: "Too many requests. Please try again later."}
	}
	return nil
}

// findRefused is the form again with Retry-After: 503 when the limits
// could not be counted, else 429. Both are the same for every address,
// known or not.
func (s *Pages) findRefused(c echo.Context, clinic clinics.Clinic, l *i18n.Localizer, err error) error {
	httpx.SetRetryAfter(c, err)
	if apperr.CodeOf(err) == apperr.CodeUnavailable {
		return s.findForm(c, http.StatusServiceUnavailable, clinic, l, views.FindVM{Problem: l.T("find.unavailable", nil)})
	}
	var wait time.Duration
	if ae := apperr.As(err); ae != nil {
		wait = ae.RetryAfter
	}
	return s.findForm(c, http.StatusTooManyRequests, clinic, l, views.FindVM{Problem: l.T("find.too_many", map[string]any{"Minutes": httpx.MinutesOf(wait)})})
}

// FindChooser answers GET /find, where a manage link that no longer works
// points: the only clinic's form, or the clinics to choose from.
func (s *Pages) FindChooser(c echo.Context) error {
	rows, err := s.deps.Clinics.List(c.Request().Context())
	if err != nil {
		return err
	}
	switch len(rows) {
	case 0:
		return apperr.NotFoundf("", "There is no clinic here yet.")
	case 1:
		return c.Redirect(http.StatusFound, findPath(rows[0].Slug))
	}
	l := httpx.Speak(c, i18n.English)
	vms := make([]views.ClinicVM, len(rows))
	for i, r := range rows {
		vms[i] = httpx.ClinicVM(r)
	}
	return s.kit.Page(c, http.StatusOK, l.T("find.title", nil), views.FindChooser(vms))
}

// ManageMissing shows the way to a new link under the error of a manage
// link that leads nowhere (mistyped, or its booking gone).
func (s *Pages) ManageMissing(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if apperr.CodeOf(err) != apperr.CodeNotFound || !httpx.WantsHTML(c) || c.Response().Committed {
			return err
		}
		status, body := httpx.ToResponse(err)
		l := httpx.ErrorLocalizer(c)
		c.SetRequest(c.Request().WithContext(i18n.WithLocalizer(c.Request().Context(), l)))
		title := httpx.PageTitle(l, status)
		msg := httpx.LocalMessage(l, body.Error.Code, body.Error.Message, body.Error.Details)
		return httpx.Render(c, status, views.Page(title, s.deps.Assets), views.ManageLinkMissing(status, title, msg))
	}
}
