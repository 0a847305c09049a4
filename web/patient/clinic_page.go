package patient

import (
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/public"
)

// The clinic page: its listing of types and specialists depends on the
// clinic's set-up alone, so it is kept in memory (liveview.Kept) until a
// change of the set-up, on any instance, retires it.

// listing is what the clinic page is made from.
type listing struct {
	clinic clinics.Clinic
	types  []clinics.AppointmentType
}

func listingKey(slug string) string { return "clinic:" + slug }

// ClinicPage answers GET /c/:slug: from the listing kept in memory when
// there is one, else from the source (keeping what it read).
func (s *Pages) ClinicPage(c echo.Context) error {
	if k := s.deps.Views.Kept(listingKey(c.Param("slug"))); k != nil {
		if l, ok := k.Meta().(*listing); ok {
			s.deps.Views.Count("clinic", true)
			return s.clinicAnswer(c, l, k)
		}
	}
	s.deps.Views.Count("clinic", false)
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return err
	}
	ticket := s.deps.Views.Begin(clinic.ID)
	if ticket != nil {
		// Read again once the clinic's changes are heard: a change of
		// its settings between the two readings cannot be missed.
		if clinic, err = s.deps.Clinics.BySlug(ctx, c.Param("slug")); err != nil {
			return err
		}
	}
	httpx.Speak(c, clinic.Language) // an error from here on is in its language
	types, err := s.deps.Clinics.AppointmentTypes(ctx, clinic.ID)
	if err != nil {
		return err
	}
	l := &listing{clinic: clinic, types: types}
	return s.clinicAnswer(c, l, s.deps.Views.Keep(ticket, listingKey(clinic.Slug), l))
}

// clinicAnswer writes the clinic page of l, rendered once per variant
// (language, htmx or not, address) when k keeps it.
func (s *Pages) clinicAnswer(c echo.Context, l *listing, k *liveview.Kept) error {
	tr := httpx.Speak(c, l.clinic.Language) // once per request: the slow path's choice stands
	withContact(c, l.clinic)
	c.Response().Header().Add("Vary", "HX-Request")
	hx := c.Request().Header.Get("HX-Request") == "true"
	render := func() ([]byte, error) {
		return renderBytes(c, views.Page(l.clinic.Name, s.deps.Assets), views.ClinicPage(l.vm(tr.Lang())))
	}
	var a liveview.Answer
	var err error
	if k != nil {
		a, err = k.Answer(tr.Lang()+"|"+boolStr(hx)+"|"+c.Request().URL.RequestURI(), render)
	} else {
		var body []byte
		body, err = render()
		a = liveview.Answer{Body: body, ETag: liveview.ETag(body)}
	}
	if err != nil {
		return err
	}
	return public.WriteAnswer(c, "text/html; charset=UTF-8", a)
}

// vm is the page of l in the language lang.
func (l *listing) vm(lang string) views.ClinicPageVM {
	vm := views.ClinicPageVM{Clinic: httpx.ClinicVM(l.clinic)}
	for _, t := range l.types {
		tv := views.TypeVM{ID: t.ID.String(), Name: t.NameIn(lang), Description: t.DescriptionIn(lang), DurationMin: int(t.DurationMin),
			BookURL: "/c/" + l.clinic.Slug + "/book/" + t.ID.String()}
		for _, sp := range t.Specialists {
			tv.Specialists = append(tv.Specialists, sp.Name)
		}
		vm.Types = append(vm.Types, tv)
	}
	return vm
}
