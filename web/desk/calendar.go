package desk

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// calView is what a staff calendar shows: one day or a week, one
// specialist or all.
type calView struct {
	clinicID   uuid.UUID
	loc        *time.Location
	tz         string
	from       availability.Date
	days       int
	specialist uuid.UUID
	// tr is the viewer's language: the live view is shared only by
	// viewers of one language.
	tr *i18n.Localizer
}

func (v calView) query(date availability.Date, mode string) string {
	q := "?date=" + date.String() + "&view=" + mode
	if v.specialist != uuid.Nil {
		q += "&specialist=" + v.specialist.String()
	}
	return q
}

func (v calView) mode() string {
	if v.days == 1 {
		return "day"
	}
	return "week"
}

func (s *FrontDesk) readCalView(c echo.Context) (calView, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActCalendar); err != nil {
		return calView{}, err
	}
	clinic, err := s.deps.Clinics.ByID(ctx, u.ClinicID)
	if err != nil {
		return calView{}, err
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return calView{}, err
	}
	v := calView{clinicID: u.ClinicID, loc: loc, tz: clinic.Timezone, days: 7, tr: httpx.Tr(c)}
	day := availability.DateOf(time.Now(), loc)
	if d := c.QueryParam("date"); d != "" {
		if day, err = availability.ParseDate(d); err != nil {
			return calView{}, apperr.Invalidf("date", "date must be YYYY-MM-DD.")
		}
	}
	if c.QueryParam("view") == "day" {
		v.days = 1
		v.from = day
	} else {
		v.from = day.WeekStart()
	}
	if sp := c.QueryParam("specialist"); sp != "" {
		if v.specialist, err = uuid.Parse(sp); err != nil {
			return calView{}, apperr.Invalidf("specialist", "specialist must be an id.")
		}
		choices, err := s.deps.StaffBookings.CalendarChoices(ctx, u)
		if err != nil {
			return calView{}, err
		}
		if _, ok := choices.Specialist(v.specialist); !ok {
			return calView{}, apperr.NotFoundf("specialist", "No such specialist at this clinic.")
		}
	}
	return v, nil
}

// calSource is a staff calendar as a live source: one fragment per day.
type calSource struct {
	srv *FrontDesk
	v   calView
}

// Key names the view and its language: viewers of another language get
// days of their own.
func (cs calSource) Key() string {
	return "staffcal|" + cs.v.clinicID.String() + "|" + cs.v.from.String() + "|" + httpx.ItoaInt(cs.v.days) + "|" + cs.v.specialist.String() + "|" + cs.v.loc.String() + "|" + cs.v.tr.Lang()
}
func (cs calSource) ClinicID() uuid.UUID { return cs.v.clinicID }

func (cs calSource) days(ctx context.Context) ([]views.CalendarDayVM, error) {
	v, tr := cs.v, cs.v.tr
	start := availability.DayStart(v.loc, v.from)
	endDate := v.from.AddDays(v.days)
	end := availability.DayStart(v.loc, endDate)
	cal, err := cs.srv.deps.StaffBookings.ClinicCalendar(ctx, v.clinicID, start, end, dateUTC(v.from), dateUTC(endDate.AddDays(-1)))
	if err != nil {
		return nil, err
	}
	names, rows, overrides := cal.Names, cal.Bookings, cal.Overrides
	out := make([]views.CalendarDayVM, v.days)
	for i := range out {
		d := v.from.AddDays(i)
		noon := time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, v.loc)
		out[i] = views.CalendarDayVM{ID: "cal-" + d.String(), Label: tr.LongDay(noon), Date: d.String()}
	}
	index := func(t time.Time) int { return availability.DaysBetween(v.from, availability.DateOf(t, v.loc)) }
	types, err := cs.srv.deps.Clinics.AppointmentTypes(ctx, v.clinicID)
	if err != nil {
		return nil, err
	}
	typeNames := make(map[uuid.UUID]string, len(types))
	for _, t := range types {
		typeNames[t.ID] = t.NameIn(tr.Lang())
	}
	for _, r := range rows {
		if v.specialist != uuid.Nil && r.SpecialistID != v.specialist {
			continue
		}
		if i := index(r.Start); i >= 0 && i < v.days {
			out[i].Entries = append(out[i].Entries, views.CalendarEntryVM{
				Kind: "booking", Time: r.Start.In(v.loc).Format("15:04"), End: r.End.In(v.loc).Format("15:04"),
				Patient: r.PatientName, Contact: r.PatientEmail + " " + r.PatientPhone, TypeName: typeName(typeNames, r.AppointmentTypeID, r.TypeName),
				Specialist: r.SpecialistName, ID: r.ID.String(), Version: r.Version, StartUTC: r.Start.UTC().Format(time.RFC3339),
			})
		}
	}
	if active, err := cs.srv.deps.Holds.Active(ctx, v.clinicID); err == nil {
		for _, h := range active {
			if v.specialist != uuid.Nil && h.SpecialistID != v.specialist {
				continue
			}
			if i := index(h.Start); i >= 0 && i < v.days {
				// A hold is shown as held, never with who holds it.
				out[i].Entries = append(out[i].Entries, views.CalendarEntryVM{
					Kind: "held", Time: h.Start.In(v.loc).Format("15:04"), End: h.End.In(v.loc).Format("15:04"),
					Specialist: names[h.SpecialistID],
				})
			}
		}
	}
	for i := range out {
		sortEntries(out[i].Entries)
	}
	for _, o := range overrides {
		if v.specialist != uuid.Nil && o.SpecialistID != v.specialist {
			continue
		}
		i := availability.DaysBetween(v.from, availability.Date{Year: o.Day.Year(), Month: o.Day.Month(), Day: o.Day.Day()})
		if i < 0 || i >= v.days {
			continue
		}
		what := tr.T("desk.list.closed", map[string]any{"Specialist": names[o.SpecialistID]})
		if !o.Closed {
			what = tr.T("desk.list.only", map[string]any{"Specialist": names[o.SpecialistID], "From": practice.FormatMin(o.StartMin), "To": practice.FormatMin(o.EndMin)})
		}
		if o.Note != "" {
			what += " (" + o.Note + ")"
		}
		out[i].Overrides = append(out[i].Overrides, what)
	}
	listClosures(tr, cal.Closures, names, v.from, v.specialist, out)
	for _, t := range types {
		req := slots.Request{AppointmentTypeID: t.ID, SpecialistID: v.specialist, From: v.from, To: v.from.AddDays(v.days - 1)}
		if v.specialist != uuid.Nil && !performs(t.Specialists, v.specialist) {
			continue
		}
		res, err := cs.srv.deps.Slots.Free(ctx, req)
		if err != nil {
			return nil, err
		}
		perDay := make([][]string, v.days)
		for _, sl := range res.Slots {
			if i := index(sl.Start); i >= 0 && i < v.days {
				perDay[i] = append(perDay[i], sl.Start.In(v.loc).Format("15:04"))
			}
		}
		for i, times := range perDay {
			if len(times) > 0 {
				out[i].Free = append(out[i].Free, views.CalendarFreeVM{Specialist: typeNames[t.ID], Times: times})
			}
		}
	}
	return out, nil
}

func performs(sps []clinics.Specialist, id uuid.UUID) bool {
	for _, sp := range sps {
		if sp.ID == id {
			return true
		}
	}
	return false
}

// Snapshot renders in the view's language: its updates are computed
// without any viewer's request.
func (cs calSource) Snapshot(ctx context.Context) ([]stream.Fragment, func(string) ([]stream.Fragment, bool), error) {
	ctx = i18n.WithLocalizer(ctx, cs.v.tr)
	days, err := cs.days(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]stream.Fragment, len(days))
	for i, d := range days {
		var buf bytes.Buffer
		// The live view is shared by the clinic's staff: its forms carry a
		// placeholder that each stream replaces with its viewer's CSRF token
		// as it sends them (see CalendarStream).
		if err := views.CalendarDay(d, views.StaffNav{CSRF: cs.srv.csrfSlot}, true).Render(ctx, &buf); err != nil {
			return nil, nil, err
		}
		out[i] = stream.Fragment{ID: d.ID, HTML: buf.String()}
	}
	return out, func(string) ([]stream.Fragment, bool) { return nil, false }, nil
}

// Calendar answers GET /staff?date=&view=&specialist=
func (s *FrontDesk) Calendar(c echo.Context) error {
	v, err := s.readCalView(c)
	if err != nil {
		return err
	}
	return s.renderCalendar(c, v, http.StatusOK, "", "")
}

func (s *FrontDesk) renderCalendar(c echo.Context, v calView, status int, notice, problem string) error {
	return s.renderCalendarForm(c, v, status, notice, problem, views.PhoneFormVM{})
}

// renderCalendarForm is the calendar with its caller form as given (what
// was typed and the outcome of booking it).
func (s *FrontDesk) renderCalendarForm(c echo.Context, v calView, status int, notice, problem string, form views.PhoneFormVM) error {
	ctx := c.Request().Context()
	if c.Request().Header.Get("HX-Request") == "true" && c.Request().Method == http.MethodPost {
		// A form inside a live day block: show the outcome on the calendar.
		s.deps.Sessions.Put(ctx, "calNotice", notice)
		s.deps.Sessions.Put(ctx, "calError", problem)
		return httpx.Redirect(c, gridBack(c, "/staff"+v.query(v.from, v.mode())))
	}
	if notice == "" && problem == "" && c.Request().Method == http.MethodGet {
		notice = s.deps.Sessions.PopString(ctx, "calNotice")
		problem = s.deps.Sessions.PopString(ctx, "calError")
	}
	u := httpx.StaffUser(c)
	days, err := calSource{srv: s, v: v}.days(ctx)
	if err != nil {
		return err
	}
	if err := s.record(c, privacy.PageCalendar, calendarBookings(days), nil); err != nil {
		return err
	}
	nav := s.kit.Nav(c, "calendar")
	vm := views.CalendarVM{
		Nav: nav, Timezone: v.tz, View: v.mode(), Date: v.from.String(), Days: days,
		StreamURL: "/staff/live" + v.query(v.from, v.mode()), Notice: notice, Error: problem,
		DayURL: "/staff" + v.query(v.from, "day"), WeekURL: "/staff" + v.query(v.from, "week"),
		PrevURL: "/staff" + v.query(v.from.AddDays(-v.days), v.mode()), NextURL: "/staff" + v.query(v.from.AddDays(v.days), v.mode()),
	}
	first := time.Date(v.from.Year, v.from.Month, v.from.Day, 12, 0, 0, 0, v.loc)
	vm.Label = v.tr.DayMonthYear(first)
	if v.days > 1 {
		vm.Label += " – " + v.tr.DayMonthYear(first.AddDate(0, 0, v.days-1))
	}
	choices, err := s.deps.StaffBookings.CalendarChoices(ctx, u)
	if err != nil {
		return err
	}
	vm.Specialists = append(vm.Specialists, views.OptionVM{Value: "", Label: v.tr.T("desk.list.all_specialists", nil), Selected: v.specialist == uuid.Nil})
	for _, sp := range choices.Specialists {
		vm.Specialists = append(vm.Specialists, views.OptionVM{Value: sp.ID.String(), Label: sp.Name, Selected: sp.ID == v.specialist})
	}
	if vm.Form, err = s.phoneForm(ctx, u, v, form); err != nil {
		return err
	}
	return s.kit.Page(c, status, v.tr.T("desk.list.title", nil), views.Calendar(vm))
}

// CalendarStream answers GET /staff/live: the calendar's day blocks, live.
func (s *FrontDesk) CalendarStream(c echo.Context) error {
	v, err := s.readCalView(c)
	if err != nil {
		return err
	}
	slot, token := []byte(s.csrfSlot), []byte(s.kit.CSRFToken(c))
	return s.live.ServeHTMLStream(c, calSource{srv: s, v: v}, "staff:"+v.clinicID.String(), stream.Viewer{
		Access:      s.staffAccess(c),
		Personalize: func(b []byte) []byte { return bytes.ReplaceAll(b, slot, token) },
		SignedIn:    true,
		Shown:       s.streamRecord(c, privacy.PageCalendar).shown,
	})
}

// staffAccess is a staff stream's access check: its session is still in
// the store (not signed out, expired or deleted) and its account still
// exists and is not disabled, the session was not ended from a list of
// sessions, and the account has the second factor its clinic requires. The streams of one session share the check;
// a failed check keeps the stream.
func (s *FrontDesk) staffAccess(c echo.Context) func(context.Context) bool {
	sm := s.deps.Sessions
	token := sm.Token(c.Request().Context())
	id := httpx.StaffUser(c).ID
	key := stream.AccessKey("staff", id.String(), token)
	check := func(ctx context.Context) (bool, error) {
		// scs's Store takes no context (pgxstore is no scs.CtxStore): the
		// cache runs this on its own and stops waiting at ctx's end.
		_, found, err := sm.Store.Find(token)
		if err != nil || !found {
			return false, err
		}
		u, err := s.deps.Staff.SignedIn(ctx, id, staff.SessionHash(token))
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Unauthorized {
			return false, nil
		}
		// An account that must set up a second factor (its clinic came to
		// require one while the stream was open) sees nothing more.
		return err == nil && !u.MustSetUpSecondFactor(), err
	}
	return func(ctx context.Context) bool { return s.live.Allowed(ctx, key, check) }
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func dateUTC(d availability.Date) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

func sortEntries(es []views.CalendarEntryVM) {
	slices.SortStableFunc(es, func(a, b views.CalendarEntryVM) int { return strings.Compare(a.Time, b.Time) })
}
