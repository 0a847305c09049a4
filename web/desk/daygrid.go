package desk

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// The day grid (a column per specialist, a row per slot step) and the week
// view (a column per day of one specialist), live over the staff stream.

// gridView is what a day grid or week view shows.
type gridView struct {
	clinicID uuid.UUID
	loc      *time.Location
	tz       string
	from     availability.Date
	week     bool
	// only are the day's chosen specialists (none: every active one); the
	// week's one specialist is only[0] (none: the clinic has none).
	only []uuid.UUID
	// tr is the viewer's language: the live view is shared only by
	// viewers of one language.
	tr *i18n.Localizer
	// rooms: the day has a column per room instead of per specialist
	// (?by=rooms).
	rooms bool
}

func (v gridView) days() int {
	if v.week {
		return 7
	}
	return 1
}

// path is the page of the view on date (the week holding it).
func (v gridView) path(date availability.Date) string {
	if v.week {
		q := "/staff/week?date=" + date.String()
		if len(v.only) > 0 {
			q += "&specialist=" + v.only[0].String()
		}
		return q
	}
	q := "/staff/day?date=" + date.String()
	if v.rooms {
		return q + "&by=rooms"
	}
	if len(v.only) > 0 {
		ids := make([]string, len(v.only))
		for i, id := range v.only {
			ids[i] = id.String()
		}
		q += "&specialists=" + strings.Join(ids, ",")
	}
	return q
}

func (v gridView) streamURL() string {
	p := v.path(v.from)
	i := strings.IndexByte(p, '?')
	return p[:i] + "/live" + p[i:]
}

// readGridView reads ?date= and ?specialists= (the day) or ?specialist=
// (the week); another clinic's specialist is not found.
func (s *FrontDesk) readGridView(c echo.Context, week bool) (gridView, desk.CalendarChoices, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	choices, err := s.deps.StaffBookings.CalendarChoices(ctx, u)
	if err != nil {
		return gridView{}, choices, err
	}
	clinic, err := s.deps.Clinics.ByID(ctx, u.ClinicID)
	if err != nil {
		return gridView{}, choices, err
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return gridView{}, choices, err
	}
	v := gridView{clinicID: u.ClinicID, loc: loc, tz: clinic.Timezone, week: week, from: availability.DateOf(time.Now(), loc), tr: httpx.Tr(c)}
	if d := c.QueryParam("date"); d != "" {
		if v.from, err = availability.ParseDate(d); err != nil {
			return gridView{}, choices, apperr.Invalidf("date", "date must be a date like 2027-03-28.")
		}
	}
	v.rooms = !week && c.QueryParam("by") == "rooms"
	var ids []string
	if week {
		v.from = v.from.WeekStart()
		if sp := c.QueryParam("specialist"); sp != "" {
			ids = []string{sp}
		}
	} else {
		for _, p := range c.QueryParams()["specialists"] {
			ids = append(ids, strings.Split(p, ",")...)
		}
	}
	for _, raw := range ids {
		if raw = strings.TrimSpace(raw); raw == "" {
			continue
		}
		id, err := uuid.Parse(raw)
		if err != nil {
			return gridView{}, choices, apperr.NotFoundf("specialist", "No such specialist at this clinic.")
		}
		if _, ok := choices.Specialist(id); !ok {
			return gridView{}, choices, apperr.NotFoundf("specialist", "No such specialist at this clinic.")
		}
		v.only = append(v.only, id)
	}
	if week && len(v.only) == 0 {
		for _, sp := range choices.Specialists {
			if sp.Active {
				v.only = []uuid.UUID{sp.ID}
				break
			}
		}
	}
	return v, choices, nil
}

// StaffDay answers GET /staff/day?date=&specialists=ID,ID
func (s *FrontDesk) StaffDay(c echo.Context) error { return s.gridPage(c, false) }

// StaffWeek answers GET /staff/week?specialist=&date=
func (s *FrontDesk) StaffWeek(c echo.Context) error { return s.gridPage(c, true) }

func (s *FrontDesk) gridPage(c echo.Context, week bool) error {
	v, choices, err := s.readGridView(c, week)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	body, err := dayGridSource{srv: s, v: v}.body(ctx)
	if err != nil {
		return err
	}
	if err := s.record(c, gridPage(week), gridBookings(body), nil); err != nil {
		return err
	}
	vm := views.GridPageVM{
		Nav: s.kit.Nav(c, "day"), Mode: "day", Title: v.tr.T("desk.grid.day_title", nil), Timezone: v.tz, Date: v.from.String(),
		PrevURL: v.path(v.from.AddDays(-v.days())), NextURL: v.path(v.from.AddDays(v.days())),
		TodayURL: v.path(availability.DateOf(time.Now(), v.loc)), StreamURL: v.streamURL(), Body: body,
	}
	vm.Notice, vm.Error = s.deps.Sessions.PopString(ctx, "calNotice"), s.deps.Sessions.PopString(ctx, "calError")
	for _, sp := range choices.Specialists {
		if !sp.Active {
			continue
		}
		// Everyone is ticked while nobody is chosen: all are shown.
		chosen := len(v.only) == 0
		for _, id := range v.only {
			chosen = chosen || id == sp.ID
		}
		vm.Picks = append(vm.Picks, views.OptionVM{Value: sp.ID.String(), Label: sp.Name, Selected: chosen})
	}
	if !week {
		if err := s.roomsToggle(c, v, &vm); err != nil {
			return err
		}
	}
	if week {
		vm.Nav, vm.Mode, vm.Title = s.kit.Nav(c, "week"), "week", v.tr.T("desk.grid.week_title", nil)
		vm.OtherURL, vm.OtherName = "/staff/day?date="+v.from.String(), v.tr.T("desk.nav.day", nil)
	} else {
		vm.Waiting, vm.WaitingURL = s.waitingOn(c, v.from)
	}
	if !week && len(vm.Picks) > 0 {
		first := vm.Picks[0].Value
		if len(v.only) > 0 {
			first = v.only[0].String()
		}
		vm.OtherURL, vm.OtherName = "/staff/week?date="+v.from.String()+"&specialist="+first, v.tr.T("desk.nav.week", nil)
	}
	return s.kit.Page(c, http.StatusOK, vm.Title, views.GridPage(vm))
}

// StaffGridLive answers GET /staff/day/live and /staff/week/live.
func (s *FrontDesk) StaffGridLive(week bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, _, err := s.readGridView(c, week)
		if err != nil {
			return err
		}
		return s.live.ServeHTMLStream(c, dayGridSource{srv: s, v: v}, "staff:"+v.clinicID.String(), stream.Viewer{
			Access: s.staffAccess(c), SignedIn: true, Shown: s.streamRecord(c, gridPage(week)).shown,
		})
	}
}

// dayGridSource is a day grid or week view as a live source: the grid as
// a container (sent when its rows or columns change) and each column.
type dayGridSource struct {
	srv *FrontDesk
	v   gridView
}

// Key names the view and its language: viewers of another language get
// fragments of their own.
func (g dayGridSource) Key() string {
	ids := make([]string, len(g.v.only))
	for i, id := range g.v.only {
		ids[i] = id.String()
	}
	by := "specialists"
	if g.v.rooms {
		by = "rooms"
	}
	return "staffgrid|" + g.v.clinicID.String() + "|" + g.v.from.String() + "|" + httpx.ItoaInt(g.v.days()) + "|" + strings.Join(ids, ",") + "|" + g.v.loc.String() + "|" + g.v.tr.Lang() + "|" + by
}

func (g dayGridSource) ClinicID() uuid.UUID { return g.v.clinicID }

// Snapshot renders in the view's language: its updates are computed
// without any viewer's request.
func (g dayGridSource) Snapshot(ctx context.Context) ([]stream.Fragment, func(string) ([]stream.Fragment, bool), error) {
	ctx = i18n.WithLocalizer(ctx, g.v.tr)
	body, err := g.body(ctx)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if err := views.GridBody(body).Render(ctx, &buf); err != nil {
		return nil, nil, err
	}
	out := []stream.Fragment{{ID: "grid-body", HTML: buf.String(), Sig: gridShape(body)}}
	for _, col := range body.Columns {
		buf.Reset()
		if err := views.GridColumn(col).Render(ctx, &buf); err != nil {
			return nil, nil, err
		}
		out = append(out, stream.Fragment{ID: col.ID, HTML: buf.String()})
	}
	return out, func(string) ([]stream.Fragment, bool) { return nil, false }, nil
}

// gridShape names a grid's rows and columns: the grid is sent whole only
// when they change.
func gridShape(b views.GridBodyVM) string {
	var sb strings.Builder
	sb.WriteString(b.Caption + "|" + b.Empty + "|")
	for _, r := range b.Rows {
		sb.WriteString(r.Label + ",")
	}
	for _, c := range b.Columns {
		sb.WriteString("|" + c.ID + "@" + httpx.ItoaInt(c.Col))
	}
	for _, c := range b.Closures {
		sb.WriteString("|closed " + c.First.Format(time.DateOnly) + " " + c.Last.Format(time.DateOnly) + " " + c.Who + " " + c.Note)
	}
	return sb.String()
}
