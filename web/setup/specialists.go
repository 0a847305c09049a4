package setup

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// SpecialistList answers GET /staff/specialists.
func (s *Admin) SpecialistList(c echo.Context) error {
	return s.renderSpecialistList(c, http.StatusOK, nil)
}

func (s *Admin) renderSpecialistList(c echo.Context, status int, errs map[string]string) error {
	sps, err := s.deps.Practice.Specialists(c.Request().Context(), httpx.StaffUser(c))
	if err != nil {
		return err
	}
	rows := make([]views.SpecialistRowVM, len(sps))
	for i, sp := range sps {
		rows[i] = views.SpecialistRowVM{ID: sp.ID.String(), Name: sp.Name, Priority: sp.Priority, Active: sp.Active}
	}
	return s.kit.Page(c, status, httpx.Tr(c).T("admin.specialists.title", nil), views.SpecialistList(s.kit.Nav(c, "specialists"), rows, errs))
}

// SpecialistCreate answers POST /staff/specialists.
func (s *Admin) SpecialistCreate(c echo.Context) error {
	prio, _ := strconv.Atoi(c.FormValue("priority"))
	sp, err := s.deps.Practice.CreateSpecialist(c.Request().Context(), httpx.StaffUser(c), practice.SpecialistInput{
		Name: c.FormValue("name"), Priority: prio, Active: c.FormValue("active") != "",
	})
	if err != nil {
		errs, err := fieldErrors(c, err)
		if err != nil {
			return err
		}
		return s.renderSpecialistList(c, http.StatusUnprocessableEntity, errs)
	}
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+sp.ID.String())
}

var weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

// hoursDays are a week's hours as the hours form shows them: one row a
// weekday, its ranges written "09:00-12:00, 13:00-17:00".
func hoursDays(l *i18n.Localizer, hours []practice.Range) []views.HoursDayVM {
	var days []views.HoursDayVM
	for _, wd := range weekdays {
		var parts []string
		for _, h := range hours {
			if h.Weekday == wd {
				parts = append(parts, practice.FormatMin(h.StartMin)+"-"+practice.FormatMin(h.EndMin))
			}
		}
		days = append(days, views.HoursDayVM{Key: "hours." + strings.ToLower(wd.String()), Label: weekdayName(l, wd), Value: strings.Join(parts, ", ")})
	}
	return days
}

// weekdayName is wd in l's words ("Montag").
func weekdayName(l *i18n.Localizer, wd time.Weekday) string {
	key := "admin.weekday." + strings.ToLower(wd.String())
	return l.T(key, nil)
}

func (s *Admin) specialistVM(c echo.Context, id uuid.UUID) (views.SpecialistEditVM, error) {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	l := httpx.Tr(c)
	sp, err := s.deps.Practice.Specialist(ctx, u, id)
	if err != nil {
		return views.SpecialistEditVM{}, err
	}
	hours, err := s.deps.Practice.WeeklyHours(ctx, u, id)
	if err != nil {
		return views.SpecialistEditVM{}, err
	}
	vm := views.SpecialistEditVM{Nav: s.kit.Nav(c, "specialists"), ID: sp.ID.String(), Name: sp.Name, Priority: sp.Priority,
		Active: sp.Active, Version: sp.Version, Errors: map[string]string{}}
	vm.Hours = hoursDays(l, hours)
	loc, _ := s.deps.Slots.Zone(ctx, u.ClinicID)
	today := time.Now().In(loc)
	ovs, err := s.deps.Practice.Overrides(ctx, u, id, time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC))
	if err != nil {
		return views.SpecialistEditVM{}, err
	}
	for _, o := range ovs {
		what := l.T("admin.specialists.closed", nil)
		if !o.Closed {
			what = l.T("admin.specialists.open_only", map[string]any{"From": practice.FormatMin(o.StartMin), "To": practice.FormatMin(o.EndMin)})
		}
		vm.Overrides = append(vm.Overrides, views.OverrideVM{ID: fmt.Sprint(o.ID), Day: l.Day(o.Day) + " " + strconv.Itoa(o.Day.Year()), What: what, Note: o.Note})
	}
	if !sp.Active {
		fut, err := s.deps.Practice.FutureBookings(ctx, u, id)
		if err != nil {
			return views.SpecialistEditVM{}, err
		}
		for _, f := range fut {
			at := f.SlotStart.In(loc)
			vm.Future = append(vm.Future, l.Day(at)+" "+l.Time(at)+" · "+f.TypeName+" · "+f.PatientName)
		}
	}
	return vm, nil
}

// SpecialistPage answers GET /staff/specialists/:id.
func (s *Admin) SpecialistPage(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	vm, err := s.specialistVM(c, id)
	if err != nil {
		return err
	}
	vm.Notice = s.deps.Sessions.PopString(c.Request().Context(), "notice")
	if vm.Feed, err = s.deps.FeedBlock(c, id); err != nil {
		return err
	}
	return s.kit.Page(c, http.StatusOK, vm.Name, views.SpecialistEdit(vm))
}

// specialistFail re-renders the specialist page with what went wrong: the
// field in place, or "changed by someone else" with the current values.
func (s *Admin) specialistFail(c echo.Context, id uuid.UUID, err error) error {
	vm, verr := s.specialistVM(c, id)
	if verr != nil {
		return verr
	}
	if _, typed := c.Request().PostForm["hours.monday"]; typed && !isStale(err) {
		// Invalid hours stay as typed, next to the message about them.
		for i := range vm.Hours {
			vm.Hours[i].Value = c.FormValue(vm.Hours[i].Key)
		}
	}
	if isStale(err) {
		vm.Stale = staleMessage(c, err)
		return s.kit.Page(c, http.StatusConflict, vm.Name, views.SpecialistEdit(vm))
	}
	errs, err := fieldErrors(c, err)
	if err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Conflict {
			vm.Stale = said(c, ae.Message, "admin.specialists.conflict")
			return s.kit.Page(c, http.StatusConflict, vm.Name, views.SpecialistEdit(vm))
		}
		return err
	}
	vm.Errors = errs
	return s.kit.Page(c, http.StatusUnprocessableEntity, vm.Name, views.SpecialistEdit(vm))
}

// SpecialistUpdate answers POST /staff/specialists/:id.
func (s *Admin) SpecialistUpdate(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	prio, perr := strconv.Atoi(strings.TrimSpace(c.FormValue("priority")))
	if perr != nil {
		return s.specialistFail(c, id, apperr.Invalidf("priority", "Priority is a whole number."))
	}
	_, err = s.deps.Practice.UpdateSpecialist(c.Request().Context(), httpx.StaffUser(c), id, practice.SpecialistInput{
		Name: c.FormValue("name"), Priority: prio, Active: c.FormValue("active") != "", Version: httpx.Atoi32(c.FormValue("version")),
	})
	if err != nil {
		return s.specialistFail(c, id, err)
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", httpx.Tr(c).T("admin.saved", nil))
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+id.String())
}

// parseHours reads the hours form: per weekday "08:30-12:30, 13:30-17:00".
func parseHours(c echo.Context) ([]practice.Range, error) {
	var out []practice.Range
	for _, wd := range weekdays {
		key := "hours." + strings.ToLower(wd.String())
		for _, part := range strings.Split(c.FormValue(key), ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			a, b, ok := strings.Cut(part, "-")
			if !ok {
				return nil, apperr.Invalidf(key, "%s: write ranges like 08:30-12:30.", wd)
			}
			start, err := practice.ParseClock(key, a)
			if err != nil {
				return nil, err
			}
			end, err := practice.ParseClock(key, b)
			if err != nil {
				return nil, err
			}
			out = append(out, practice.Range{Weekday: wd, StartMin: start, EndMin: end})
		}
	}
	return out, nil
}

// HoursUpdate answers POST /staff/specialists/:id/hours.
func (s *Admin) HoursUpdate(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	rs, err := parseHours(c)
	if err == nil {
		_, err = s.deps.Practice.SetWeeklyHours(c.Request().Context(), httpx.StaffUser(c), id, httpx.Atoi32(c.FormValue("version")), rs)
	}
	if err != nil {
		return s.specialistFail(c, id, err)
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", httpx.Tr(c).T("admin.specialists.hours_saved", nil))
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+id.String())
}

// OverrideCreate answers POST /staff/specialists/:id/overrides.
func (s *Admin) OverrideCreate(c echo.Context) error {
	id, err := httpx.ParseIDParam(c)
	if err != nil {
		return err
	}
	in := practice.OverrideInput{Closed: c.FormValue("closed") != "", Note: c.FormValue("note"), Version: httpx.Atoi32(c.FormValue("version"))}
	if d := c.FormValue("day"); d != "" {
		if in.Day, err = time.Parse(time.DateOnly, d); err != nil {
			return s.specialistFail(c, id, apperr.Invalidf("day", "Pick a date."))
		}
	}
	if !in.Closed {
		if in.StartMin, err = practice.ParseClock("start", c.FormValue("start")); err != nil {
			return s.specialistFail(c, id, err)
		}
		if in.EndMin, err = practice.ParseClock("end", c.FormValue("end")); err != nil {
			return s.specialistFail(c, id, err)
		}
	}
	if err := s.deps.Practice.AddOverride(c.Request().Context(), httpx.StaffUser(c), id, in); err != nil {
		return s.specialistFail(c, id, err)
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", httpx.Tr(c).T("admin.specialists.override_added", nil))
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+id.String())
}

// OverrideDelete answers POST /staff/overrides/:id/delete.
func (s *Admin) OverrideDelete(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return apperr.NotFoundf("id", "No such override.")
	}
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	o, err := s.deps.Practice.Override(ctx, u, id)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.NotFound {
		return apperr.NotFoundf("id", "No such override at this clinic.")
	}
	if err != nil {
		return err
	}
	if err := s.deps.Practice.DeleteOverride(ctx, u, id, httpx.Atoi32(c.FormValue("version"))); err != nil {
		return s.specialistFail(c, o.SpecialistID, err)
	}
	s.deps.Sessions.Put(ctx, "notice", httpx.Tr(c).T("admin.specialists.override_removed", nil))
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+o.SpecialistID.String())
}
