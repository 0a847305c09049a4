package patient

import (
	"context"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// waitlistURL is the waitlist form of a booking page's type, with the
// week's days from today and the page's specialist filter, when the week
// shows no time the viewer could hold; "" when it shows one, and on the
// grid that moves a booking.
func (p pageView) waitlistURL(cells []grid.Cell) string {
	if p.token != "" {
		return ""
	}
	for _, c := range cells {
		if c.State == grid.Free || c.State == grid.Mine {
			return ""
		}
	}
	today := availability.DateOf(time.Now(), p.loc)
	from, to := p.monday, httpx.MinDate(p.monday.AddDays(6), p.last)
	if from.Before(today) {
		from = today
	}
	if to.Before(from) {
		to = httpx.MinDate(from.AddDays(6), p.last)
	}
	q := url.Values{"from": {from.String()}, "to": {to.String()}}
	if p.specialist != uuid.Nil {
		q.Set("specialist", p.specialist.String())
	}
	return p.base() + "/waitlist?" + q.Encode()
}

// pageView is the grid view a booking page or its stream asks for.
type pageView struct {
	slug       string
	clinicID   uuid.UUID
	typeID     uuid.UUID
	specialist uuid.UUID
	monday     availability.Date
	loc        *time.Location
	token      string          // set on the reschedule grid of a manage link
	current    time.Time       // on that grid, the booking's own time, marked as the patient's
	tr         *i18n.Localizer // the viewer's language
	// first and last are the dates the type can be booked in now (see
	// boundWeek): the page links to no week outside them.
	first, last availability.Date
}

func (p pageView) grid() grid.View {
	return grid.View{AppointmentTypeID: p.typeID, SpecialistID: p.specialist, From: p.monday, To: p.monday.AddDays(6)}
}

func (p pageView) base() string { return "/c/" + p.slug + "/book/" + p.typeID.String() }

// pageURL is the grid page itself: booking, or moving a booking.
func (p pageView) pageURL() string {
	if p.token != "" {
		return "/manage/" + p.token + "/reschedule"
	}
	return p.base()
}

// holdURL is where a click on a free cell posts.
func (p pageView) holdURL() string {
	if p.token != "" {
		return p.pageURL()
	}
	return p.base() + "/hold"
}

func (p pageView) streamURL() string { return p.pageURL() + "/live" + p.query() }

// streamURLFor is the stream URL carrying the state the page shows, so
// the stream skips resending it.
func (p pageView) streamURLFor(ctx context.Context, cells []grid.Cell) string {
	return p.streamURL() + "&state=" + stream.StateHash(p.fragments(ctx, cells, nil))
}

func (p pageView) heading() string {
	if p.token != "" {
		return p.tr.T("booking.heading.move", nil)
	}
	return p.tr.T("booking.heading.book", nil)
}

func (p pageView) filter() string {
	if p.specialist == uuid.Nil {
		return ""
	}
	return p.specialist.String()
}

func (p pageView) query() string {
	q := "?week=" + p.monday.String()
	if p.specialist != uuid.Nil {
		q += "&specialist=" + p.specialist.String()
	}
	return q
}

// readPageView reads slug, typeId, week and specialist; the type must be
// the clinic's.
func (s *Pages) readPageView(c echo.Context) (pageView, error) {
	ctx := c.Request().Context()
	clinic, err := s.deps.Clinics.BySlug(ctx, c.Param("slug"))
	if err != nil {
		return pageView{}, err
	}
	tr := httpx.Speak(c, clinic.Language) // before any refusal: its page speaks it too
	withContact(c, clinic)
	typeID, err := uuid.Parse(c.Param("typeId"))
	if err != nil {
		return pageView{}, apperr.NotFoundf("typeId", "No such appointment type.")
	}
	if owner, err := s.deps.Slots.ClinicOfType(ctx, typeID); err != nil || owner != clinic.ID {
		return pageView{}, apperr.NotFoundf("typeId", "No such appointment type.")
	}
	loc, err := s.deps.Slots.Zone(ctx, clinic.ID)
	if err != nil {
		return pageView{}, err
	}
	p := pageView{slug: clinic.Slug, clinicID: clinic.ID, typeID: typeID, loc: loc, tr: tr}
	day := availability.DateOf(time.Now(), loc)
	if w := c.FormValue("week"); w != "" {
		if day, err = availability.ParseDate(w); err != nil {
			return pageView{}, apperr.Invalidf("week", "week must be a date, YYYY-MM-DD.")
		}
	}
	p.monday = day.WeekStart()
	if err := s.boundWeek(ctx, &p); err != nil {
		return pageView{}, err
	}
	if v := c.QueryParam("specialist"); v != "" {
		if p.specialist, err = uuid.Parse(v); err != nil {
			return pageView{}, apperr.Invalidf("specialist", "specialist must be a specialist's id.")
		}
	}
	return p, nil
}

// boundWeek refuses a week that shares no day with the type's booking
// window (a grid of the year 3000 would be computed and cached for nobody)
// and notes the window in p.
func (s *Pages) boundWeek(ctx context.Context, p *pageView) error {
	first, last, err := s.deps.Slots.Window(ctx, p.typeID)
	if err != nil {
		return err
	}
	if p.monday.AddDays(6).Before(first) || last.Before(p.monday) {
		return apperr.Invalidf("week", "week must be a date from %s to %s.", first, last)
	}
	p.first, p.last = first, last
	return nil
}

// inWindow reports whether any day of the week starting monday can be booked.
func (p pageView) inWindow(monday availability.Date) bool {
	return !monday.AddDays(6).Before(p.first) && !p.last.Before(monday)
}

// cellVM shapes a grid cell for the page.
func (p pageView) cellVM(c grid.Cell, live bool) views.SlotCellVM {
	vm := views.SlotCellVM{
		ID: c.ID, State: string(c.State), Time: p.tr.Time(c.Start.In(p.loc)),
		StartUTC: c.Start.UTC().Format(time.RFC3339), HoldURL: p.holdURL(), Live: live,
		HoldID: c.HoldID, Week: p.monday.String(),
	}
	if p.specialist != uuid.Nil {
		vm.Specialist = p.specialist.String()
	}
	if !p.current.IsZero() && c.Start.Equal(p.current) { // whoever else is free then
		vm.State = "current"
	}
	if !c.KeepUntil.IsZero() {
		vm.Until, vm.UntilUTC = p.tr.Time(c.KeepUntil.In(p.loc)), c.KeepUntil.UTC().Format(msLayout)
	}
	return vm
}

// weekDays lays the cells out by local day.
func (p pageView) weekDays(cells []grid.Cell, live bool) []views.DayVM {
	days := make([]views.DayVM, 7)
	for i := range days {
		d := p.monday.AddDays(i)
		t := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, p.loc)
		days[i] = views.DayVM{ID: "day-" + d.String(), Label: p.tr.Day(t), Date: d.String(), Live: live}
	}
	for _, c := range cells {
		i := availability.DaysBetween(p.monday, availability.DateOf(c.Start, p.loc))
		if i >= 0 && i < 7 {
			days[i].Cells = append(days[i].Cells, p.cellVM(c, live))
		}
	}
	return days
}

// BookingStream answers GET /c/:slug/book/:typeId/live: the HTML stream a
// booking page's grid connects to. Each event is named after the cell it
// replaces and carries that cell as the page renders it for this viewer.
func (s *Pages) BookingStream(c echo.Context) error {
	p, err := s.readPageView(c)
	if err != nil {
		return err
	}
	return s.live.ServeHTMLStream(c, p.source(s), p.typeID.String(), stream.Viewer{ClientID: s.kit.ExistingClientID(c)})
}

// source is the page's grid as a live source; grids whose cells post
// elsewhere (booking, moving one booking) are different views.
func (p pageView) source(s *Pages) gridSource {
	return gridSource{srv: s, page: p, memo: &stream.CellMemo{}, last: &keptGrid{}}
}
