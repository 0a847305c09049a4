// The patients' waitlist: a form on a type's booking page that puts a
// patient on the list when the week has no free time, the page of their
// place (place.go) and the page of a time offered to
// them (offer.go). The e-mails link to the last two.

package waitpage

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The parts of the day a patient may ask for, in the form's order, and
// their words.
var (
	dayParts    = []string{waitlist.Morning, waitlist.Afternoon, waitlist.Evening}
	dayPartKeys = map[string]string{
		waitlist.Morning: "waitlist.part.morning", waitlist.Afternoon: "waitlist.part.afternoon", waitlist.Evening: "waitlist.part.evening",
	}
)

// joinInputs name the form's input of each field a refusal can name.
var joinInputs = map[string]string{
	"patient.name": "name", "patient.email": "email", "patient.phone": "phone",
	"from": "from", "to": "to", "times": "times", "specialistId": "specialist",
}

// joinFieldKeys are the messages, in a language other than English, of
// the waitlist's own fields (the patient's are in fieldKeys).
var joinFieldKeys = map[string]string{
	"from": "waitlist.error.from", "to": "waitlist.error.to",
	"times": "waitlist.error.times", "specialistId": "waitlist.error.specialistId",
}

// joinView is a type's waitlist form: the clinic and type, who performs
// the type, and the days that can be asked for.
type joinView struct {
	clinic      clinics.Clinic
	tr          *i18n.Localizer
	typ         clinics.AppointmentType
	specialists []clinics.Specialist
	today, last availability.Date
}

func (j joinView) bookURL() string { return "/c/" + j.clinic.Slug + "/book/" + j.typ.ID.String() }

func (j joinView) action() string { return j.bookURL() + "/waitlist" }

// loadJoin reads the clinic and the type of the form; the type must be
// the clinic's.
func (s *WaitPages) loadJoin(c echo.Context) (joinView, error) {
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return joinView{}, err
	}
	j := joinView{clinic: clinic, tr: httpx.Speak(c, clinic.Language)}
	typeID, err := uuid.Parse(c.Param("typeId"))
	if err != nil {
		return joinView{}, apperr.NotFoundf("typeId", "No such appointment type.")
	}
	if owner, err := s.deps.Slots.ClinicOfType(ctx, typeID); err != nil || owner != clinic.ID {
		return joinView{}, apperr.NotFoundf("typeId", "No such appointment type.")
	}
	if j.typ, err = s.deps.Clinics.AppointmentType(ctx, typeID); err != nil {
		return joinView{}, err
	}
	if j.specialists, err = s.deps.Clinics.ActiveSpecialists(ctx, typeID); err != nil {
		return joinView{}, err
	}
	loc, err := s.deps.Slots.Zone(ctx, clinic.ID)
	if err != nil {
		return joinView{}, err
	}
	if _, j.last, err = s.deps.Slots.Window(ctx, typeID); err != nil {
		return joinView{}, err
	}
	j.today = availability.DateOf(time.Now(), loc)
	return j, nil
}

// joinForm is what the form shows: what was typed or the defaults.
type joinForm struct {
	name, email, phone, from, to, specialist string
	times                                    []string
}

// defaults are the form's first values: the days and specialist the
// booking page passed on (?from=&to=&specialist=), else the coming week
// with any specialist.
func (j joinView) defaults(c echo.Context) joinForm {
	f := joinForm{from: j.today.String(), to: httpx.MinDate(j.today.AddDays(6), j.last).String()}
	if d, err := availability.ParseDate(c.QueryParam("from")); err == nil && !d.Before(j.today) && !j.last.Before(d) {
		f.from = d.String()
	}
	if d, err := availability.ParseDate(c.QueryParam("to")); err == nil && !d.Before(j.today) && !j.last.Before(d) {
		f.to = d.String()
	}
	if id, err := uuid.Parse(c.QueryParam("specialist")); err == nil {
		f.specialist = id.String()
	}
	return f
}

// vm is the form's page model with f's values and errs (input name ->
// message) and problem (a refusal of the whole form).
func (j joinView) vm(f joinForm, errs map[string]string, problem string) views.JoinWaitlistVM {
	opts := []views.OptionVM{{Value: "", Label: j.tr.T("booking.any", nil), Selected: f.specialist == ""}}
	for _, sp := range j.specialists {
		opts = append(opts, views.OptionVM{Value: sp.ID.String(), Label: sp.Name, Selected: sp.ID.String() == f.specialist})
	}
	times := make([]views.OptionVM, len(dayParts))
	for i, p := range dayParts {
		times[i] = views.OptionVM{Value: p, Label: j.tr.T(dayPartKeys[p], nil), Selected: slices.Contains(f.times, p)}
	}
	return views.JoinWaitlistVM{
		Clinic: httpx.ClinicVM(j.clinic), TypeName: j.typ.NameIn(j.tr.Lang()), Action: j.action(), BookURL: j.bookURL(),
		Name: f.name, Email: f.email, Phone: f.phone, From: f.from, To: f.to,
		Min: j.today.String(), Max: j.last.String(), Specialists: opts, Times: times,
		Errors: errs, Problem: problem,
	}
}

func (s *WaitPages) joinFormPage(c echo.Context, status int, j joinView, vm views.JoinWaitlistVM) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.kit.Page(c, status, j.tr.T("waitlist.join.title", map[string]any{"Type": j.typ.NameIn(j.tr.Lang())})+" · "+j.clinic.Name, views.JoinWaitlistPage(vm))
}

// JoinWaitlistPage answers GET /c/:slug/book/:typeId/waitlist
// (?from=&to=&specialist=): the form.
func (s *WaitPages) JoinWaitlistPage(c echo.Context) error {
	j, err := s.loadJoin(c)
	if err != nil {
		return err
	}
	return s.joinFormPage(c, http.StatusOK, j, j.vm(j.defaults(c), nil, ""))
}

// JoinWaitlist answers POST /c/:slug/book/:typeId/waitlist (name, email,
// phone, from, to, specialist, times): the limits first (per client
// address, then per clinic and e-mail address: each place sends an
// e-mail), then the place, and a page with its link.
func (s *WaitPages) JoinWaitlist(c echo.Context) error {
	j, err := s.loadJoin(c)
	if err != nil {
		return err
	}
	f := joinForm{
		name: c.FormValue("name"), email: c.FormValue("email"), phone: c.FormValue("phone"),
		from: c.FormValue("from"), to: c.FormValue("to"), specialist: c.FormValue("specialist"),
	}
	if form, err := c.FormParams(); err == nil {
		f.times = form["times"]
	}
	if err := s.pub.JoinLimits(c, j.clinic, f.email); err != nil {
		return s.joinRefused(c, j, f, err)
	}
	var specialist uuid.UUID
	if f.specialist != "" {
		if specialist, err = uuid.Parse(f.specialist); err != nil {
			return s.joinRefused(c, j, f, apperr.Invalidf("specialistId", "No such specialist for this appointment type."))
		}
	}
	ctx := c.Request().Context()
	e, token, err := s.deps.Waitlist.Join(ctx, waitlist.JoinRequest{
		ClinicID: j.clinic.ID, AppointmentTypeID: j.typ.ID, SpecialistID: specialist,
		From: strings.TrimSpace(f.from), To: strings.TrimSpace(f.to), Times: f.times,
		Patient:  booking.Patient{Name: f.name, Email: f.email, Phone: f.phone},
		ClientID: s.kit.ClientID(c), Language: j.tr.Lang(),
	})
	if err != nil {
		return s.joinRefused(c, j, f, err)
	}
	s.pub.CountJoin(c, j.clinic, f.email)
	if read, _, err := s.deps.Waitlist.ByToken(ctx, j.clinic.ID, token); err == nil {
		e = read // with its specialist's name and place in the list
	}
	privatePage(c)
	vm := placeVM(j.clinic, j.tr, e, token)
	return s.kit.Page(c, http.StatusOK, j.tr.T("waitlist.joined.title", nil)+" · "+j.clinic.Name, views.JoinedWaitlistPage(vm))
}

// joinRefused is the form again, with what was typed, and the refusal
// next to its field (400), above the form (409 already waiting, 429 too
// many, 503 the limits could not be counted), or as an error page
// (anything else).
func (s *WaitPages) joinRefused(c echo.Context, j joinView, f joinForm, err error) error {
	ae := apperr.As(err)
	if ae == nil {
		return err
	}
	httpx.SetRetryAfter(c, err)
	switch {
	case ae.Kind == apperr.Invalid && joinInputs[ae.Field()] != "":
		msg := joinFieldMessage(j.tr, ae)
		return s.joinFormPage(c, http.StatusBadRequest, j, j.vm(f, map[string]string{joinInputs[ae.Field()]: msg}, ""))
	case ae.Code == apperr.CodeWaitlistDuplicate:
		msg := ae.Message
		if j.tr.Lang() != i18n.English {
			msg = j.tr.T("waitlist.duplicate", map[string]any{"Type": j.typ.NameIn(j.tr.Lang())})
		}
		return s.joinFormPage(c, http.StatusConflict, j, j.vm(f, nil, msg))
	case ae.Code == apperr.CodeUnavailable:
		return s.joinFormPage(c, http.StatusServiceUnavailable, j, j.vm(f, nil, j.tr.T("waitlist.unavailable", nil)))
	case ae.Kind == apperr.TooMany:
		msg := j.tr.T("waitlist.too_many", map[string]any{"Minutes": httpx.MinutesOf(ae.RetryAfter)})
		return s.joinFormPage(c, http.StatusTooManyRequests, j, j.vm(f, nil, msg))
	}
	return err
}

// joinFieldMessage is a refused field's message in the page's language.
func joinFieldMessage(l *i18n.Localizer, ae *apperr.Error) string {
	if key, ok := joinFieldKeys[ae.Field()]; ok && l.Lang() != i18n.English {
		return l.T(key, nil)
	}
	return httpx.LocalMessage(l, ae.Code, ae.Message, ae.Details)
}

// privatePage marks an answer that carries a waitlist link: not kept by
// caches, not passed on as a referrer, not indexed.
func privatePage(c echo.Context) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex, nofollow")
}
