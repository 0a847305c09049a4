package desk

// The calendar's changes to bookings: a booking for a caller, a cancel
// and a move, each answered on the calendar or grid it came from.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// PhoneBooking answers POST /staff/bookings: a booking made for a caller.
// From the calendar's htmx form it answers with the form alone, the
// outcome beside it; a refusal keeps what was typed.
func (s *FrontDesk) PhoneBooking(c echo.Context) error {
	u := httpx.StaffUser(c)
	ctx := c.Request().Context()
	v, err := s.readCalView(c)
	if err != nil {
		return err
	}
	form := views.PhoneFormVM{
		Date: c.FormValue("date"), Time: c.FormValue("time"),
		Name: c.FormValue("name"), Email: c.FormValue("email"), Phone: c.FormValue("phone"),
	}
	typeID, err1 := uuid.Parse(c.FormValue("type"))
	spID, err2 := uuid.Parse(c.FormValue("specialist"))
	date, err3 := availability.ParseDate(form.Date)
	minutes, err4 := practice.ParseClock("time", form.Time)
	var conf booking.Confirmation
	err = firstErr(err1, err2, err3, err4)
	if err != nil {
		err = apperr.Invalidf("time", "Choose a type, a specialist, a date and a time.")
	} else {
		var start time.Time
		if start, err = desk.WallStart("time", v.loc, date, minutes); err == nil {
			conf, err = s.deps.StaffBookings.BookForPatient(ctx, u, typeID, spID, start, booking.Patient{Name: form.Name, Email: form.Email, Phone: form.Phone})
		}
	}
	ae := apperr.As(err)
	if err != nil && (ae == nil || ae.Kind == apperr.Internal) {
		return err
	}
	status := http.StatusCreated
	form.TypeID, form.SpecialistID = c.FormValue("type"), c.FormValue("specialist")
	if err != nil {
		form.Error, status = refusal(v.tr, ae), httpx.StatusOf[ae.Kind]
		if ae.Kind == apperr.Invalid && c.Request().Header.Get("HX-Request") == "true" {
			status = http.StatusUnprocessableEntity
		}
	} else {
		form = views.PhoneFormVM{TypeID: form.TypeID, SpecialistID: form.SpecialistID, Notice: v.tr.T("desk.caller.booked", map[string]any{
			"Patient": conf.Booking.Patient.Name, "When": when(v.tr, conf.Booking.Start, v.loc), "Link": "/manage/" + conf.ManageToken,
		})}
	}
	if c.Request().Header.Get("HX-Request") != "true" {
		return s.renderCalendarForm(c, v, status, "", "", form)
	}
	httpx.SetRetryAfter(c, err)
	if form, err = s.phoneForm(ctx, u, v, form); err != nil {
		return err
	}
	return httpx.Render(c, status, nil, views.PhoneBookingForm(s.kit.Nav(c, "calendar"), form))
}

// phoneForm fills the caller form's choices: the types, each with who
// performs it, and the specialists, the typed ones chosen; the date is
// today's in the clinic's zone unless one was typed.
func (s *FrontDesk) phoneForm(ctx context.Context, u staff.User, v calView, f views.PhoneFormVM) (views.PhoneFormVM, error) {
	types, err := s.deps.Clinics.AppointmentTypes(ctx, u.ClinicID)
	if err != nil {
		return f, err
	}
	choices, err := s.deps.StaffBookings.CalendarChoices(ctx, u)
	if err != nil {
		return f, err
	}
	typeID, _ := uuid.Parse(f.TypeID)
	spID, _ := uuid.Parse(f.SpecialistID)
	f.Types, f.Specialists = nil, nil
	for _, t := range types {
		ids := make([]string, len(t.Specialists))
		for i, sp := range t.Specialists {
			ids[i] = sp.ID.String()
		}
		f.Types = append(f.Types, views.TypeOptionVM{
			OptionVM: views.OptionVM{Value: t.ID.String(), Label: t.NameIn(v.tr.Lang()), Selected: t.ID == typeID}, Specialists: strings.Join(ids, " "),
		})
	}
	for _, sp := range choices.Specialists {
		if sp.Active {
			f.Specialists = append(f.Specialists, views.OptionVM{Value: sp.ID.String(), Label: sp.Name, Selected: sp.ID == spID})
		}
	}
	if f.Date == "" {
		f.Date = availability.DateOf(time.Now(), v.loc).String()
	}
	return f, nil
}

// StaffCancel answers POST /staff/bookings/:id/cancel.
func (s *FrontDesk) StaffCancel(c echo.Context) error {
	v, id, err := s.readBookingAction(c)
	if err != nil {
		return err
	}
	if c.FormValue("later") == "1" {
		return s.staffCancelSeries(c, v, id)
	}
	b, err := s.deps.StaffBookings.Cancel(c.Request().Context(), httpx.StaffUser(c), id, c.FormValue("reason"))
	if err != nil {
		return s.calendarRefusal(c, v, err)
	}
	return s.renderCalendar(c, v, http.StatusOK, v.tr.T("desk.booking.cancelled", map[string]any{"Patient": b.Patient.Name}), "")
}

// staffCancelSeries cancels the booking and the later sessions of its
// series (the cancel form's "later" box).
func (s *FrontDesk) staffCancelSeries(c echo.Context, v calView, id uuid.UUID) error {
	done, err := s.deps.StaffBookings.CancelSeriesFrom(c.Request().Context(), httpx.StaffUser(c), id, c.FormValue("reason"))
	if err != nil {
		return s.calendarRefusal(c, v, err)
	}
	if len(done) == 0 {
		return s.calendarRefusal(c, v, apperr.New(apperr.Conflict, apperr.CodeBookingNotActive, "This booking was cancelled or moved already."))
	}
	notice := v.tr.T("series.cancelled_later", map[string]any{"N": len(done), "Patient": done[0].Patient.Name})
	return s.renderCalendar(c, v, http.StatusOK, notice, "")
}

// StaffReschedule answers POST /staff/bookings/:id/reschedule.
func (s *FrontDesk) StaffReschedule(c echo.Context) error {
	v, id, err := s.readBookingAction(c)
	if err != nil {
		return err
	}
	start, err := desk.ParseLocalTime("start", c.FormValue("start"), v.loc)
	if err != nil {
		return s.renderCalendar(c, v, http.StatusBadRequest, "", refusal(v.tr, apperr.As(err)))
	}
	version := httpx.Atoi32(c.FormValue("version"))
	if version <= 0 {
		return s.renderCalendar(c, v, http.StatusBadRequest, "", v.tr.T("desk.list.no_version", nil))
	}
	// Another specialist, when the form names one (the move dialog's
	// times); none keeps the booking's own.
	specialist := uuid.Nil
	if sp := c.FormValue("specialist"); sp != "" {
		if specialist, err = uuid.Parse(sp); err != nil {
			return s.renderCalendar(c, v, http.StatusBadRequest, "", v.tr.T("desk.list.choose_specialist", nil))
		}
	}
	b, err := s.deps.StaffBookings.Reschedule(c.Request().Context(), httpx.StaffUser(c), id, start, specialist, version, c.FormValue("reason"))
	if err != nil {
		return s.calendarRefusal(c, v, err)
	}
	notice := v.tr.T("desk.move.done", map[string]any{"When": when(v.tr, b.Start, v.loc)})
	if b.ResourceID != uuid.Nil {
		// The move kept the booking's room or gave it another: say which.
		room, err := s.deps.StaffBookings.RoomName(c.Request().Context(), b.ClinicID, b.ResourceID)
		if err != nil {
			return err
		}
		notice += " " + v.tr.T("rooms.moved_room", map[string]any{"Room": room})
	}
	return s.renderCalendar(c, v, http.StatusOK, notice, "")
}

// readBookingAction reads the calendar view a booking's form came from and
// the booking's id in the path.
func (s *FrontDesk) readBookingAction(c echo.Context) (calView, uuid.UUID, error) {
	v, err := s.readCalView(c)
	if err != nil {
		return calView{}, uuid.Nil, err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return calView{}, uuid.Nil, apperr.NotFoundf("id", "No such booking.")
	}
	return v, id, nil
}

// calendarRefusal shows a refused change to a booking on the calendar it
// came from, with the refusal's status; a booking that is not there (or
// not the clinic's) and internal failures take the error page.
func (s *FrontDesk) calendarRefusal(c echo.Context, v calView, err error) error {
	if ae := apperr.As(err); ae != nil && ae.Kind != apperr.Internal && ae.Kind != apperr.NotFound {
		return s.renderCalendar(c, v, httpx.StatusOf[ae.Kind], "", refusal(v.tr, ae))
	}
	return err
}

// gridBack is the day grid or week view the htmx request came from (a
// move or cancel in its dialog), which it goes back to (on the day moved
// to), else the calendar page other.
func gridBack(c echo.Context, other string) string {
	from, err := url.Parse(c.Request().Header.Get("HX-Current-URL"))
	if err != nil || (from.Path != "/staff/day" && from.Path != "/staff/week") {
		return other
	}
	// A move names the day it moves to: the grid shows that day.
	q := from.Query()
	if d := c.QueryParam("date"); d != "" {
		q.Set("date", d)
	}
	return (&url.URL{Path: from.Path, RawQuery: q.Encode()}).RequestURI()
}
