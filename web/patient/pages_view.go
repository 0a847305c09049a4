package patient

import (
	"bytes"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/public"
)

// The booking page served from the week's live view (internal/liveview),
// and the validators every grid answer carries.

// keepPageView keeps sn as the live view of p's week, when it was read in
// the zone and window p was made with (either may have just changed).
func (s *Pages) keepPageView(t *liveview.Ticket, p pageView, meta *public.PageMeta, sn *grid.Snapshot) {
	if sn.Zone == nil || sn.Zone.String() != p.loc.String() || p.token != "" {
		return
	}
	today := availability.DateOf(time.Now(), p.loc)
	if p.last != today.AddDays(int(sn.Type().MaxAdvance/(24*time.Hour))) {
		return
	}
	s.deps.Views.Install(t, sn, meta, time.Time{})
}

// bookingPageFromView answers the booking page from the live view of its
// week, when there is one that fits: done is false when the page is to be
// made from the source (no view; a viewer who holds a slot at the clinic,
// whose page is their own; anything the source would refuse).
func (s *Pages) bookingPageFromView(c echo.Context) (done bool, err error) {
	if s.deps.Views == nil {
		return false, nil
	}
	p, ok := s.pageViewKey(c)
	if !ok {
		return false, nil
	}
	v := s.deps.Views.Get(p.grid())
	meta := public.PageMetaOf(v)
	if meta == nil || meta.Clinic.Slug != p.slug || !p.inWindowOf(meta) || (p.loc != nil && p.loc.String() != meta.Loc.String()) {
		s.deps.Views.Count("page", false)
		return false, nil
	}
	if id := s.kit.ExistingClientID(c); id != "" && v.HeldBy(holds.ClientHash(id)) {
		s.deps.Views.Count("page", false)
		return false, nil
	}
	s.deps.Views.Count("page", true)
	p.clinicID, p.loc, p.first, p.last = meta.Clinic.ID, meta.Loc, meta.First, meta.Last
	p.tr = httpx.Speak(c, meta.Clinic.Language)
	withContact(c, meta.Clinic)
	s.kit.ClientID(c)
	ctx := c.Request().Context()
	hx := c.Request().Header.Get("HX-Request") == "true"
	variant := p.tr.Lang() + "|" + boolStr(hx) + "|" + c.Request().URL.RequestURI()
	a, err := v.Answer(variant, func(sn *grid.Snapshot) ([]byte, error) {
		vm := p.bookingVM(ctx, meta, sn.Cells(""), views.HoldPanelVM{})
		return renderBytes(c, s.pageLayout(vm), views.BookingPage(vm))
	})
	if err != nil {
		return true, err
	}
	c.Response().Header().Add("Vary", "HX-Request")
	return true, public.WriteAnswer(c, "text/html; charset=UTF-8", a)
}

// pageViewKey reads the page's address as far as a live view needs: the
// type, the week and the specialist filter. ok is false for anything the
// source is to judge (a malformed parameter, an unknown type). Without a
// week it is the one the page shows then, and p.loc the zone it was
// decided in.
func (s *Pages) pageViewKey(c echo.Context) (pageView, bool) {
	typeID, err := uuid.Parse(c.Param("typeId"))
	if err != nil {
		return pageView{}, false
	}
	p := pageView{slug: c.Param("slug"), typeID: typeID}
	if v := c.QueryParam("specialist"); v != "" {
		if p.specialist, err = uuid.Parse(v); err != nil {
			return pageView{}, false
		}
	}
	w := c.QueryParam("week")
	if w == "" {
		// The week the page shows without one is today's at the clinic
		// (readPageView's rule), in the zone readPageView takes: both
		// are kept in memory by the slots service (the zone read again
		// every few seconds). The view answers only if it was read in
		// that zone.
		clinicID, err := s.deps.Slots.ClinicOfType(c.Request().Context(), typeID)
		if err != nil {
			return pageView{}, false
		}
		if p.loc, err = s.deps.Slots.Zone(c.Request().Context(), clinicID); err != nil {
			return pageView{}, false
		}
		p.monday = availability.DateOf(time.Now(), p.loc).WeekStart()
		return p, true
	}
	day, err := availability.ParseDate(w)
	if err != nil {
		return pageView{}, false
	}
	p.monday = day.WeekStart()
	return p, true
}

// inWindowOf reports whether p's week shares a day with the booking window
// meta was read with (boundWeek's rule).
func (p pageView) inWindowOf(meta *public.PageMeta) bool {
	return !p.monday.AddDays(6).Before(meta.First) && !meta.Last.Before(p.monday)
}

// pageAnswer writes a booking page made from the source, with its
// validators.
func (s *Pages) pageAnswer(c echo.Context, vm views.BookingPageVM) error {
	body, err := renderBytes(c, s.pageLayout(vm), views.BookingPage(vm))
	if err != nil {
		return err
	}
	c.Response().Header().Add("Vary", "HX-Request")
	return public.WriteAnswer(c, "text/html; charset=UTF-8", liveview.Answer{Body: body, ETag: liveview.ETag(body)})
}

func (s *Pages) pageLayout(vm views.BookingPageVM) templ.Component {
	return views.Page(vm.TypeName+" · "+vm.Clinic.Name, s.deps.Assets)
}

// renderBytes is what render writes: body alone for htmx, inside layout
// otherwise.
func renderBytes(c echo.Context, layout, body templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	ctx := c.Request().Context()
	var err error
	if c.Request().Header.Get("HX-Request") == "true" {
		err = body.Render(ctx, &buf)
	} else {
		err = layout.Render(templ.WithChildren(ctx, body), &buf)
	}
	return buf.Bytes(), err
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
