package web

// The booking page served from the week's live view (internal/liveview),
// and the validators every grid answer carries.

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/views"
)

// pageMeta is what a booking page shows besides its grid and panel. It is
// kept with the week's live view: a change of any of it is a calendar
// change, which drops the view.
type pageMeta struct {
	clinic      clinics.Clinic
	typ         clinics.AppointmentType
	specialists []clinics.Specialist
	loc         *time.Location
	first, last availability.Date // the booking window, as of the reading
}

// keepPageView keeps sn as the live view of p's week, when it was read in
// the zone and window p was made with (either may have just changed).
func (s *Server) keepPageView(t *liveview.Ticket, p pageView, meta *pageMeta, sn *grid.Snapshot) {
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
func (s *Server) bookingPageFromView(c echo.Context) (done bool, err error) {
	if s.deps.Views == nil {
		return false, nil
	}
	p, ok := s.pageViewKey(c)
	if !ok {
		return false, nil
	}
	v := s.deps.Views.Get(p.grid())
	meta := pageMetaOf(v)
	if meta == nil || meta.clinic.Slug != p.slug || !p.inWindowOf(meta) {
		s.deps.Views.Count("page", false)
		return false, nil
	}
	if id := s.existingClientID(c); id != "" && v.HeldBy(holds.ClientHash(id)) {
		s.deps.Views.Count("page", false)
		return false, nil
	}
	s.deps.Views.Count("page", true)
	p.clinicID, p.loc, p.first, p.last = meta.clinic.ID, meta.loc, meta.first, meta.last
	p.tr = speak(c, meta.clinic.Language)
	s.clientID(c)
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
	return true, writeAnswer(c, "text/html; charset=UTF-8", a)
}

// pageMetaOf is the page data kept with a view (nil without a view or data).
func pageMetaOf(v *liveview.View) *pageMeta {
	if v == nil {
		return nil
	}
	m, _ := v.Meta().(*pageMeta)
	return m
}

// pageViewKey reads the page's address as far as a live view needs: the
// type, the week and the specialist filter. ok is false for anything the
// source is to judge (a malformed parameter, no week given and the
// clinic's zone not in memory).
func (s *Server) pageViewKey(c echo.Context) (pageView, bool) {
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
		return pageView{}, false
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
func (p pageView) inWindowOf(meta *pageMeta) bool {
	return !p.monday.AddDays(6).Before(meta.first) && !meta.last.Before(p.monday)
}

// pageAnswer writes a booking page made from the source, with its
// validators.
func (s *Server) pageAnswer(c echo.Context, vm views.BookingPageVM) error {
	body, err := renderBytes(c, s.pageLayout(vm), views.BookingPage(vm))
	if err != nil {
		return err
	}
	c.Response().Header().Add("Vary", "HX-Request")
	return writeAnswer(c, "text/html; charset=UTF-8", liveview.Answer{Body: body, ETag: liveview.ETag(body)})
}

func (s *Server) pageLayout(vm views.BookingPageVM) templ.Component {
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

// writeAnswer writes a live answer with its ETag, or 304 when the client
// has it already. no-cache: a browser may keep it, and asks before using
// it again.
func writeAnswer(c echo.Context, contentType string, a liveview.Answer) error {
	h := c.Response().Header()
	h.Set("ETag", a.ETag)
	h.Set("Cache-Control", "no-cache")
	if etagMatches(c.Request().Header.Get("If-None-Match"), a.ETag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, contentType, a.Body)
}

// etagMatches is If-None-Match's weak comparison against tag.
func etagMatches(header, tag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == tag {
			return true
		}
	}
	return false
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
