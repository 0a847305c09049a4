package web

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
)

// fieldErrors turns an invalid-input error into a form's field map; any
// other error comes back to be handled as such.
func fieldErrors(err error) (map[string]string, error) {
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		return map[string]string{ae.Field(): ae.Message}, nil
	}
	return nil, err
}

func isStale(err error) bool {
	ae := apperr.As(err)
	return ae != nil && ae.Code == apperr.CodeConcurrencyConflict
}

func parseIDParam(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, apperr.NotFoundf("id", "Not found.")
	}
	return id, nil
}

// --- specialists ---

func (s *Server) specialistList(c echo.Context) error {
	return s.renderSpecialistList(c, http.StatusOK, nil)
}

func (s *Server) renderSpecialistList(c echo.Context, status int, errs map[string]string) error {
	sps, err := s.deps.Staff.Specialists(c.Request().Context(), staffUser(c))
	if err != nil {
		return err
	}
	rows := make([]views.SpecialistRowVM, len(sps))
	for i, sp := range sps {
		rows[i] = views.SpecialistRowVM{ID: sp.ID.String(), Name: sp.Name, Priority: sp.Priority, Active: sp.Active}
	}
	return s.page(c, status, "Specialists", views.SpecialistList(s.nav(c, "specialists"), rows, errs))
}

func (s *Server) specialistCreate(c echo.Context) error {
	prio, _ := strconv.Atoi(c.FormValue("priority"))
	sp, err := s.deps.Staff.CreateSpecialist(c.Request().Context(), staffUser(c), staff.SpecialistInput{
		Name: c.FormValue("name"), Priority: prio, Active: c.FormValue("active") != "",
	})
	if err != nil {
		errs, err := fieldErrors(err)
		if err != nil {
			return err
		}
		return s.renderSpecialistList(c, http.StatusUnprocessableEntity, errs)
	}
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+sp.ID.String())
}

var weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

func (s *Server) specialistVM(c echo.Context, id uuid.UUID) (views.SpecialistEditVM, error) {
	ctx := c.Request().Context()
	u := staffUser(c)
	sp, err := s.deps.Staff.Specialist(ctx, u, id)
	if err != nil {
		return views.SpecialistEditVM{}, err
	}
	hours, err := s.deps.Staff.WeeklyHours(ctx, u, id)
	if err != nil {
		return views.SpecialistEditVM{}, err
	}
	vm := views.SpecialistEditVM{Nav: s.nav(c, "specialists"), ID: sp.ID.String(), Name: sp.Name, Priority: sp.Priority,
		Active: sp.Active, Version: sp.Version, Errors: map[string]string{}}
	for _, wd := range weekdays {
		var parts []string
		for _, h := range hours {
			if h.Weekday == wd {
				parts = append(parts, staff.FormatMin(h.StartMin)+"-"+staff.FormatMin(h.EndMin))
			}
		}
		vm.Hours = append(vm.Hours, views.HoursDayVM{Key: "hours." + strings.ToLower(wd.String()), Label: wd.String(), Value: strings.Join(parts, ", ")})
	}
	loc, _ := s.deps.Slots.Zone(ctx, u.ClinicID)
	today := time.Now().In(loc)
	ovs, err := s.deps.Staff.Overrides(ctx, u, id, time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC))
	if err != nil {
		return views.SpecialistEditVM{}, err
	}
	for _, o := range ovs {
		what := "closed"
		if !o.Closed {
			what = staff.FormatMin(o.StartMin) + "–" + staff.FormatMin(o.EndMin) + " only"
		}
		vm.Overrides = append(vm.Overrides, views.OverrideVM{ID: fmt.Sprint(o.ID), Day: o.Day.Format("Mon 2 Jan 2006"), What: what, Note: o.Note})
	}
	if !sp.Active {
		fut, err := s.deps.Staff.FutureBookings(ctx, u, id)
		if err != nil {
			return views.SpecialistEditVM{}, err
		}
		for _, f := range fut {
			vm.Future = append(vm.Future, f.SlotStart.In(loc).Format("Mon 2 Jan 15:04")+" · "+f.TypeName+" · "+f.PatientName)
		}
	}
	return vm, nil
}

func (s *Server) specialistPage(c echo.Context) error {
	id, err := parseIDParam(c)
	if err != nil {
		return err
	}
	vm, err := s.specialistVM(c, id)
	if err != nil {
		return err
	}
	vm.Notice = s.deps.Sessions.PopString(c.Request().Context(), "notice")
	return s.page(c, http.StatusOK, vm.Name, views.SpecialistEdit(vm))
}

// specialistFail re-renders the specialist page with what went wrong: the
// field in place, or "changed by someone else" with the current values.
func (s *Server) specialistFail(c echo.Context, id uuid.UUID, err error) error {
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
		vm.Stale = apperr.As(err).Message
		return s.page(c, http.StatusConflict, vm.Name, views.SpecialistEdit(vm))
	}
	errs, err := fieldErrors(err)
	if err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Conflict {
			vm.Stale = ae.Message
			return s.page(c, http.StatusConflict, vm.Name, views.SpecialistEdit(vm))
		}
		return err
	}
	vm.Errors = errs
	return s.page(c, http.StatusUnprocessableEntity, vm.Name, views.SpecialistEdit(vm))
}

func (s *Server) specialistUpdate(c echo.Context) error {
	id, err := parseIDParam(c)
	if err != nil {
		return err
	}
	prio, perr := strconv.Atoi(strings.TrimSpace(c.FormValue("priority")))
	if perr != nil {
		return s.specialistFail(c, id, apperr.Invalidf("priority", "Priority is a whole number."))
	}
	_, err = s.deps.Staff.UpdateSpecialist(c.Request().Context(), staffUser(c), id, staff.SpecialistInput{
		Name: c.FormValue("name"), Priority: prio, Active: c.FormValue("active") != "", Version: atoi32(c.FormValue("version")),
	})
	if err != nil {
		return s.specialistFail(c, id, err)
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", "Saved.")
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+id.String())
}

// parseHours reads the hours form: per weekday "08:30-12:30, 13:30-17:00".
func parseHours(c echo.Context) ([]staff.Range, error) {
	var out []staff.Range
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
			start, err := staff.ParseClock(key, a)
			if err != nil {
				return nil, err
			}
			end, err := staff.ParseClock(key, b)
			if err != nil {
				return nil, err
			}
			out = append(out, staff.Range{Weekday: wd, StartMin: start, EndMin: end})
		}
	}
	return out, nil
}

func (s *Server) hoursUpdate(c echo.Context) error {
	id, err := parseIDParam(c)
	if err != nil {
		return err
	}
	rs, err := parseHours(c)
	if err == nil {
		_, err = s.deps.Staff.SetWeeklyHours(c.Request().Context(), staffUser(c), id, atoi32(c.FormValue("version")), rs)
	}
	if err != nil {
		return s.specialistFail(c, id, err)
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", "Hours saved.")
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+id.String())
}

func (s *Server) overrideCreate(c echo.Context) error {
	id, err := parseIDParam(c)
	if err != nil {
		return err
	}
	in := staff.OverrideInput{Closed: c.FormValue("closed") != "", Note: c.FormValue("note"), Version: atoi32(c.FormValue("version"))}
	if d := c.FormValue("day"); d != "" {
		if in.Day, err = time.Parse(time.DateOnly, d); err != nil {
			return s.specialistFail(c, id, apperr.Invalidf("day", "Pick a date."))
		}
	}
	if !in.Closed {
		if in.StartMin, err = staff.ParseClock("start", c.FormValue("start")); err != nil {
			return s.specialistFail(c, id, err)
		}
		if in.EndMin, err = staff.ParseClock("end", c.FormValue("end")); err != nil {
			return s.specialistFail(c, id, err)
		}
	}
	if err := s.deps.Staff.AddOverride(c.Request().Context(), staffUser(c), id, in); err != nil {
		return s.specialistFail(c, id, err)
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", "Override added.")
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+id.String())
}

func (s *Server) overrideDelete(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return apperr.NotFoundf("id", "No such override.")
	}
	ctx := c.Request().Context()
	u := staffUser(c)
	o, err := s.deps.Staff.Override(ctx, u, id)
	if err != nil {
		return apperr.NotFoundf("id", "No such override at this clinic.")
	}
	if err := s.deps.Staff.DeleteOverride(ctx, u, id, atoi32(c.FormValue("version"))); err != nil {
		return s.specialistFail(c, o.SpecialistID, err)
	}
	s.deps.Sessions.Put(ctx, "notice", "Override removed.")
	return c.Redirect(http.StatusSeeOther, "/staff/specialists/"+o.SpecialistID.String())
}

// --- appointment types ---

func (s *Server) typeList(c echo.Context) error {
	types, err := s.deps.Staff.Types(c.Request().Context(), staffUser(c))
	if err != nil {
		return err
	}
	rows := make([]views.TypeVM, len(types))
	for i, t := range types {
		rows[i] = views.TypeVM{ID: t.ID.String(), Name: t.Name, DurationMin: int(t.DurationMin)}
	}
	return s.page(c, http.StatusOK, "Appointment types", views.TypeList(s.nav(c, "types"), rows))
}

func (s *Server) typeFormVM(c echo.Context, t staff.AppointmentType, chosen []uuid.UUID) (views.TypeFormVM, error) {
	sps, err := s.deps.Staff.Specialists(c.Request().Context(), staffUser(c))
	if err != nil {
		return views.TypeFormVM{}, err
	}
	vm := views.TypeFormVM{Nav: s.nav(c, "types"), Name: t.Name, Description: t.Description,
		DurationMin: t.DurationMin, SlotStepMin: t.SlotStepMin, BufferBeforeMin: t.BufferBeforeMin, BufferAfterMin: t.BufferAfterMin,
		MinNoticeMin: t.MinNoticeMin, MaxAdvanceDays: t.MaxAdvanceDays, CooldownMin: t.CooldownMin,
		MaxHoldsPerClient: t.MaxHoldsPerClient, Version: t.Version, Errors: map[string]string{}}
	if t.ID != uuid.Nil {
		vm.ID = t.ID.String()
	}
	for _, sp := range sps {
		checked := false
		for _, id := range chosen {
			checked = checked || id == sp.ID
		}
		vm.Specialists = append(vm.Specialists, views.CheckVM{Value: sp.ID.String(), Label: sp.Name, Checked: checked})
	}
	return vm, nil
}

func (s *Server) typeNew(c echo.Context) error {
	if staffUser(c).Role != staff.RoleAdmin {
		return staff.Forbidden()
	}
	vm, err := s.typeFormVM(c, staff.AppointmentType{DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, CooldownMin: 1440, MaxHoldsPerClient: 1}, nil)
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, "New appointment type", views.TypeForm(vm))
}

func (s *Server) typePage(c echo.Context) error {
	id, err := parseIDParam(c)
	if err != nil {
		return err
	}
	t, chosen, err := s.deps.Staff.Type(c.Request().Context(), staffUser(c), id)
	if err != nil {
		return err
	}
	vm, err := s.typeFormVM(c, t, chosen)
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, t.Name, views.TypeForm(vm))
}

func (s *Server) typeSave(c echo.Context) error {
	var id uuid.UUID
	if c.Param("id") != "" {
		var err error
		if id, err = parseIDParam(c); err != nil {
			return err
		}
	}
	num := func(name string) int { n, _ := strconv.Atoi(strings.TrimSpace(c.FormValue(name))); return n }
	form, _ := c.FormParams()
	var chosen []uuid.UUID
	for _, v := range form["specialists"] {
		if sid, err := uuid.Parse(v); err == nil {
			chosen = append(chosen, sid)
		}
	}
	in := staff.TypeInput{
		Name: c.FormValue("name"), Description: c.FormValue("description"),
		DurationMin: num("durationMin"), SlotStepMin: num("slotStepMin"), BufferBeforeMin: num("bufferBeforeMin"),
		BufferAfterMin: num("bufferAfterMin"), MinNoticeMin: num("minNoticeMin"), MaxAdvanceDays: num("maxAdvanceDays"),
		CooldownMin: num("cooldownMin"), MaxHoldsPerClient: num("maxHoldsPerClient"), SpecialistIDs: chosen,
		Version: atoi32(c.FormValue("version")),
	}
	t, err := s.deps.Staff.SaveType(c.Request().Context(), staffUser(c), id, in)
	if err == nil {
		return c.Redirect(http.StatusSeeOther, "/staff/types/"+t.ID.String())
	}
	if isStale(err) && id != uuid.Nil {
		cur, curChosen, lerr := s.deps.Staff.Type(c.Request().Context(), staffUser(c), id)
		if lerr != nil {
			return lerr
		}
		vm, verr := s.typeFormVM(c, cur, curChosen)
		if verr != nil {
			return verr
		}
		vm.Stale = apperr.As(err).Message
		return s.page(c, http.StatusConflict, cur.Name, views.TypeForm(vm))
	}
	errs, err := fieldErrors(err)
	if err != nil {
		return err
	}
	vm, verr := s.typeFormVM(c, staff.AppointmentType{ID: id, Name: in.Name, Description: in.Description,
		DurationMin: int32(in.DurationMin), SlotStepMin: int32(in.SlotStepMin), BufferBeforeMin: int32(in.BufferBeforeMin),
		BufferAfterMin: int32(in.BufferAfterMin), MinNoticeMin: int32(in.MinNoticeMin), MaxAdvanceDays: int32(in.MaxAdvanceDays),
		CooldownMin: int32(in.CooldownMin), MaxHoldsPerClient: int32(in.MaxHoldsPerClient), Version: in.Version}, chosen)
	if verr != nil {
		return verr
	}
	vm.Errors = errs
	return s.page(c, http.StatusUnprocessableEntity, "Appointment type", views.TypeForm(vm))
}

// --- audit, search, accounts, kiosks ---

func (s *Server) auditPage(c echo.Context) error {
	ctx := c.Request().Context()
	u := staffUser(c)
	loc, _ := s.deps.Slots.Zone(ctx, u.ClinicID)
	f := staff.AuditFilter{Entity: c.QueryParam("entity"), Actor: c.QueryParam("actor"),
		From: time.Unix(0, 0), To: time.Now().Add(24 * time.Hour)}
	if v := c.QueryParam("from"); v != "" {
		t, err := time.ParseInLocation(time.DateOnly, v, loc)
		if err != nil {
			return apperr.Invalidf("from", "from must be a date.")
		}
		f.From = t
	}
	if v := c.QueryParam("to"); v != "" {
		t, err := time.ParseInLocation(time.DateOnly, v, loc)
		if err != nil {
			return apperr.Invalidf("to", "to must be a date.")
		}
		f.To = t.AddDate(0, 0, 1)
	}
	f.Page, _ = strconv.Atoi(c.QueryParam("page"))
	if f.Page < 1 {
		f.Page = 1
	}
	if last := math.MaxInt32 / staff.AuditPageSize; f.Page > last {
		// The row offset must fit the query's int32.
		return apperr.Invalidf("page", "page must be a number from 1 to %d.", last)
	}
	rows, err := s.deps.Staff.Audit(ctx, u, f)
	if err != nil {
		return err
	}
	vm := views.AuditVM{Nav: s.nav(c, "audit"), Entity: f.Entity, Actor: f.Actor, From: c.QueryParam("from"), To: c.QueryParam("to"), Page: f.Page}
	more := len(rows) > staff.AuditPageSize
	if more {
		rows = rows[:staff.AuditPageSize]
	}
	for _, r := range rows {
		vm.Rows = append(vm.Rows, views.AuditRowVM{At: r.At.In(loc).Format("2006-01-02 15:04:05"), Actor: r.Actor, Action: r.Action,
			Entity: r.Entity, EntityID: r.EntityID, Before: string(r.Before), After: string(r.After), Reason: r.Reason})
	}
	q := c.Request().URL.Query()
	pageURL := func(p int) string {
		q.Set("page", strconv.Itoa(p))
		return "/staff/audit?" + q.Encode()
	}
	if f.Page > 1 {
		vm.PrevURL = pageURL(f.Page - 1)
	}
	if more {
		vm.NextURL = pageURL(f.Page + 1)
	}
	return s.page(c, http.StatusOK, "Audit log", views.Audit(vm))
}

func (s *Server) bookingSearch(c echo.Context) error {
	ctx := c.Request().Context()
	u := staffUser(c)
	loc, _ := s.deps.Slots.Zone(ctx, u.ClinicID)
	from, to := time.Now().AddDate(-1, 0, 0), time.Now().AddDate(1, 0, 0)
	if v := c.QueryParam("from"); v != "" {
		if t, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
			from = t
		} else {
			return apperr.Invalidf("from", "from must be a date.")
		}
	}
	if v := c.QueryParam("to"); v != "" {
		if t, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
			to = t.AddDate(0, 0, 1)
		} else {
			return apperr.Invalidf("to", "to must be a date.")
		}
	}
	q := c.QueryParam("q")
	vm := views.TableVM{Nav: s.nav(c, "search"), Title: "Find a booking", Head: []string{"When", "Patient", "E-mail", "Phone", "Type", "Specialist", "Status"}}
	if q != "" || c.QueryParam("from") != "" {
		rows, err := s.deps.StaffBookings.Search(ctx, u, q, from, to)
		if err != nil {
			return err
		}
		for _, r := range rows {
			vm.Rows = append(vm.Rows, []string{r.SlotStart.In(loc).Format("Mon 2 Jan 2006 15:04"), r.PatientName, r.PatientEmail, r.PatientPhone, r.TypeName, r.SpecialistName, r.Status})
		}
		if len(rows) == 0 {
			vm.Notice = "No bookings match."
		}
	}
	return render(c, http.StatusOK, views.Page("Find a booking", s.deps.Assets), templChildren(views.Table(vm), views.SearchForm(q, c.QueryParam("from"), c.QueryParam("to"))))
}

func (s *Server) usersPage(c echo.Context) error {
	return s.renderUsers(c, http.StatusOK, "", "")
}

func (s *Server) renderUsers(c echo.Context, status int, notice, problem string) error {
	rows, err := s.deps.Staff.StaffUsers(c.Request().Context(), staffUser(c))
	if err != nil {
		return err
	}
	nav := s.nav(c, "users")
	vm := views.TableVM{Nav: nav, Title: "Staff accounts", Head: []string{"E-mail", "Name", "Role", "State"}, Notice: notice, Error: problem}
	var others []views.OptionVM
	for _, r := range rows {
		state := "active"
		if r.DisabledAt != nil {
			state = "disabled"
		}
		vm.Rows = append(vm.Rows, []string{r.Email, r.Name, r.Role, state})
		if r.ID != staffUser(c).ID {
			others = append(others, views.OptionVM{Value: r.ID.String(), Label: r.Email})
		}
	}
	return render(c, status, views.Page("Staff accounts", s.deps.Assets), templChildren(views.Table(vm), views.UserForm(nav, others)))
}

// userAccess answers POST /staff/users/access (id, action: disable or
// enable). A disabled account cannot sign in, and its open pages stop
// working at their next request, its streams within seconds.
func (s *Server) userAccess(c echo.Context) error {
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return s.renderUsers(c, http.StatusBadRequest, "", "Choose an account.")
	}
	action := c.FormValue("action")
	if action != "disable" && action != "enable" {
		return s.renderUsers(c, http.StatusBadRequest, "", "Choose to disable or enable the account.")
	}
	row, err := s.deps.Staff.SetDisabled(c.Request().Context(), staffUser(c), id, action == "disable")
	if err != nil {
		if ae := apperr.As(err); ae != nil && (ae.Kind == apperr.Invalid || ae.Kind == apperr.NotFound) {
			return s.renderUsers(c, statusOf[ae.Kind], "", ae.Message)
		}
		return err
	}
	return s.renderUsers(c, http.StatusOK, "Account "+row.Email+" "+action+"d.", "")
}

func (s *Server) userCreate(c echo.Context) error {
	_, err := s.deps.Staff.CreateStaffUser(c.Request().Context(), staffUser(c), c.FormValue("email"), c.FormValue("name"), c.FormValue("password"), c.FormValue("role"))
	if err != nil {
		ae := apperr.As(err)
		if ae != nil && (ae.Kind == apperr.Invalid || ae.Kind == apperr.Conflict) {
			return s.renderUsers(c, statusOf[ae.Kind], "", ae.Message)
		}
		return err
	}
	return s.renderUsers(c, http.StatusCreated, "Account created.", "")
}

func (s *Server) kiosksPage(c echo.Context) error {
	return s.renderKiosks(c, http.StatusOK, "", "")
}

func (s *Server) renderKiosks(c echo.Context, status int, notice, problem string) error {
	ctx := c.Request().Context()
	u := staffUser(c)
	rows, err := s.deps.Staff.KioskTokens(ctx, u)
	if err != nil {
		return err
	}
	nav := s.nav(c, "kiosks")
	vm := views.TableVM{Nav: nav, Title: "Kiosk screens", Head: []string{"Name", "Created", "State"}, Notice: notice, Error: problem}
	var revocable []views.OptionVM
	for _, r := range rows {
		state := "active"
		if r.RevokedAt != nil {
			state = "revoked"
		} else {
			revocable = append(revocable, views.OptionVM{Value: r.ID.String(), Label: r.Name})
		}
		vm.Rows = append(vm.Rows, []string{r.Name, r.CreatedAt.Format("2006-01-02"), state})
	}
	return render(c, status, views.Page("Kiosk screens", s.deps.Assets), templChildren(views.Table(vm), views.KioskForm(nav, revocable)))
}

func (s *Server) kioskCreate(c echo.Context) error {
	ctx := c.Request().Context()
	u := staffUser(c)
	token, err := s.deps.Staff.CreateKioskToken(ctx, u, c.FormValue("name"))
	if err != nil {
		if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
			return s.renderKiosks(c, http.StatusUnprocessableEntity, "", ae.Message)
		}
		return err
	}
	clinic, err := s.deps.Clinics.ByID(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	link := "/kiosk/" + clinic.Slug + "?device=" + url.QueryEscape(token)
	return s.renderKiosks(c, http.StatusCreated, "Open this address on the screen (shown once): "+link, "")
}

func (s *Server) kioskRevoke(c echo.Context) error {
	id, err := uuid.Parse(c.FormValue("id"))
	if err != nil {
		return apperr.NotFoundf("id", "No such kiosk token.")
	}
	if err := s.deps.Staff.RevokeKioskToken(c.Request().Context(), staffUser(c), id); err != nil {
		return err
	}
	return s.renderKiosks(c, http.StatusOK, "Revoked.", "")
}
