// The desk's series dialog: from a free time's booking dialog, a series
// of sessions with the same specialist (every N days or weeks, a number
// of sessions or a last date); the free times shown first, ticked, those
// that are not free with their nearest free times; the ticked ones
// booked in one go, all or none.

package desk

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/series"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// seriesForm is the series dialog as filled in.
type seriesForm struct {
	specialist uuid.UUID
	start      time.Time
	typeID     uuid.UUID
	every      string
	unit       string
	count      string
	until      string
	patient    booking.Patient
}

func readSeriesForm(c echo.Context) (seriesForm, error) {
	sp, start, err := readDeskTime(c.FormValue("specialist"), c.FormValue("start"))
	f := seriesForm{
		specialist: sp, start: start, every: c.FormValue("every"), unit: c.FormValue("unit"),
		count: c.FormValue("count"), until: c.FormValue("until"),
		patient: booking.Patient{Name: c.FormValue("name"), Email: c.FormValue("email"), Phone: c.FormValue("phone")},
	}
	f.typeID, _ = uuid.Parse(c.FormValue("type"))
	return f, err
}

// rhythm is the form's rhythm: every N weeks or days, a number of
// sessions or (without one) a last date.
func (f seriesForm) rhythm() (series.Rhythm, error) {
	n, err := strconv.Atoi(strings.TrimSpace(f.every))
	if err != nil || n < 1 || n > 52 {
		return series.Rhythm{}, apperr.Invalidf("every", "Every must be a number from 1 to 52.")
	}
	r := series.Rhythm{EveryDays: n}
	if f.unit != "days" {
		r.EveryDays = 7 * n
	}
	if s := strings.TrimSpace(f.count); s != "" {
		if r.Count, err = strconv.Atoi(s); err != nil || r.Count < 1 || r.Count > booking.MaxSeriesSessions {
			return series.Rhythm{}, apperr.Invalidf("count", "The number of sessions must be from 1 to %d.", booking.MaxSeriesSessions)
		}
		return r, nil
	}
	if r.Until, err = availability.ParseDate(strings.TrimSpace(f.until)); err != nil {
		return series.Rhythm{}, apperr.Invalidf("count", "Give a number of sessions or a last date.")
	}
	return r, nil
}

// DeskSeries answers POST /staff/desk/series: the booking dialog becomes
// the series dialog for its time, with what was typed. The booking
// dialog's hold goes: the series holds its times when it books them.
func (s *FrontDesk) DeskSeries(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActBook); err != nil {
		return err
	}
	f, err := readSeriesForm(c)
	if err != nil {
		return err
	}
	if client := c.FormValue("client"); client != "" {
		if err := s.desk().Release(c.Request().Context(), u, client); err != nil {
			return err
		}
	}
	f.every, f.count = "1", "6"
	vm, err := s.seriesVM(c, f)
	if err != nil {
		return err
	}
	return httpx.Render(c, http.StatusOK, nil, views.SeriesDialog(vm))
}

// DeskSeriesPlan answers POST /staff/desk/series/plan: the dialog with
// the series' sessions, free or not.
func (s *FrontDesk) DeskSeriesPlan(c echo.Context) error {
	f, err := readSeriesForm(c)
	if err != nil {
		return err
	}
	vm, err := s.seriesVM(c, f)
	if err != nil {
		return err
	}
	if err := s.planInto(c, f, &vm, nil); err != nil {
		return s.seriesRefusal(c, vm, err)
	}
	return httpx.Render(c, http.StatusOK, nil, views.SeriesDialog(vm))
}

// DeskSeriesBook answers POST /staff/desk/series/book: the ticked
// sessions booked, or none and the dialog again with why.
func (s *FrontDesk) DeskSeriesBook(c echo.Context) error {
	u := httpx.StaffUser(c)
	ctx := c.Request().Context()
	f, err := readSeriesForm(c)
	if err != nil {
		return err
	}
	vm, err := s.seriesVM(c, f)
	if err != nil {
		return err
	}
	r, err := f.rhythm()
	if err != nil {
		return s.seriesRefusal(c, vm, err)
	}
	var starts []time.Time
	for _, v := range c.Request().Form["starts"] {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return apperr.Invalidf("starts", "Each session must be a time in RFC 3339.")
		}
		starts = append(starts, t)
	}
	if len(starts) == 0 {
		_ = s.planInto(c, f, &vm, nil)
		return s.seriesRefusal(c, vm, apperr.Invalidf("starts", "Tick at least one session."))
	}
	planned := r.Count
	booked, err := s.deps.Series.Book(ctx, u, series.BookRequest{
		AppointmentTypeID: f.typeID, SpecialistID: f.specialist, Rhythm: r, Planned: planned, Starts: starts, Patient: f.patient,
		IdempotencyKey: c.FormValue("idempotency_key"),
	})
	if err != nil {
		// The plan again as it is now, the times still ticked that are
		// still free.
		_ = s.planInto(c, f, &vm, starts)
		return s.seriesRefusal(c, vm, err)
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	tr := httpx.Tr(c)
	got := booked.Receipt()
	msg := tr.T("series.booked", map[string]any{"N": len(got.Bookings), "Patient": got.PatientName, "When": when(tr, got.First, loc)})
	return httpx.Render(c, http.StatusCreated, nil, views.DeskBooked(msg, "/manage/"+got.ManageToken))
}

// seriesVM is the dialog for f without its plan.
func (s *FrontDesk) seriesVM(c echo.Context, f seriesForm) (views.SeriesDialogVM, error) {
	u := httpx.StaffUser(c)
	slot, err := s.desk().Slot(c.Request().Context(), u, f.specialist, f.start)
	if ae := apperr.As(err); err != nil && (ae == nil || ae.Kind != apperr.Conflict) {
		return views.SeriesDialogVM{}, err
	}
	tr := httpx.Tr(c)
	vm := views.SeriesDialogVM{
		CSRF: s.kit.CSRFToken(c), SpecialistID: f.specialist.String(), SpecialistName: slot.Specialist.Name,
		StartUTC: f.start.UTC().Format(time.RFC3339), Types: s.typeOptions(c, slot, f.typeID),
		Every: f.every, Count: f.count, Until: f.until,
		Name: f.patient.Name, Email: f.patient.Email, Phone: f.patient.Phone,
		Units: []views.OptionVM{
			{Value: "weeks", Label: tr.T("series.unit.weeks", nil), Selected: f.unit != "days"},
			{Value: "days", Label: tr.T("series.unit.days", nil), Selected: f.unit == "days"},
		},
	}
	if slot.Location != nil {
		vm.When = tr.LongDateTime(f.start.In(slot.Location))
	}
	return vm, nil
}

// planInto puts f's plan into vm: the free sessions ticked (those of
// keep, when given, and free), then those not free with their
// alternatives (ticked when in keep).
func (s *FrontDesk) planInto(c echo.Context, f seriesForm, vm *views.SeriesDialogVM, keep []time.Time) error {
	r, err := f.rhythm()
	if err != nil {
		return err
	}
	plan, err := s.deps.Series.Plan(c.Request().Context(), httpx.StaffUser(c), series.PlanRequest{
		AppointmentTypeID: f.typeID, SpecialistID: f.specialist, First: f.start, Rhythm: r,
	})
	if err != nil {
		return err
	}
	tr := httpx.Tr(c)
	kept := func(t time.Time, def bool) bool {
		if keep == nil {
			return def
		}
		for _, k := range keep {
			if k.Equal(t) {
				return true
			}
		}
		return false
	}
	label := func(t time.Time) string { return when(tr, t, plan.Location) }
	vm.Planned, vm.Free, vm.Taken, vm.IdempotencyKey = true, nil, nil, uuid.NewString()
	for i, ses := range plan.Sessions {
		if ses.Free {
			vm.Free = append(vm.Free, views.SeriesTimeVM{
				ID: "series-s" + strconv.Itoa(i+1), Value: ses.Start.UTC().Format(time.RFC3339), Checked: kept(ses.Start, true),
				Label: tr.T("series.session", map[string]any{"N": i + 1, "When": label(ses.Start)}),
			})
			continue
		}
		tk := views.SeriesTakenVM{Legend: tr.T("series.alternatives", map[string]any{"N": i + 1, "When": label(ses.Start)})}
		for j, a := range ses.Alternatives {
			tk.Alternatives = append(tk.Alternatives, views.SeriesTimeVM{
				ID: "series-a" + strconv.Itoa(i+1) + "-" + strconv.Itoa(j+1), Value: a.UTC().Format(time.RFC3339),
				Label: label(a), Checked: kept(a, false),
			})
		}
		vm.Taken = append(vm.Taken, tk)
	}
	return nil
}

// seriesRefusal shows why the dialog's request was refused, in the
// dialog: a lost time by its own words, a field to correct (422), any
// other conflict or limit by the desk's words. Other errors take the
// error page.
func (s *FrontDesk) seriesRefusal(c echo.Context, vm views.SeriesDialogVM, err error) error {
	ae := apperr.As(err)
	if ae == nil || ae.Kind == apperr.Internal || ae.Kind == apperr.NotFound || ae.Kind == apperr.Forbidden || ae.Kind == apperr.Unauthorized {
		return err
	}
	tr := httpx.Tr(c)
	status := httpx.StatusOf[ae.Kind]
	vm.Error = refusal(tr, ae)
	switch {
	case ae.Kind == apperr.Invalid:
		status, vm.ErrorField = http.StatusUnprocessableEntity, seriesField(ae.Field())
	case ae.Code == apperr.CodeSlotTaken:
		if at, ok := ae.Details["slotStartDate"].(string); ok {
			if t, perr := time.Parse(time.RFC3339, at); perr == nil {
				if loc, zerr := s.deps.Slots.Zone(c.Request().Context(), httpx.StaffUser(c).ClinicID); zerr == nil {
					vm.Error = tr.T("series.lost", map[string]any{"When": when(tr, t, loc)})
				}
			}
		}
	}
	httpx.SetRetryAfter(c, err)
	return httpx.Render(c, status, nil, views.SeriesDialog(vm))
}

// seriesField is the dialog's name for a field an error names.
func seriesField(f string) string {
	switch f {
	case "every", "count", "until":
		return f
	}
	return deskField(f)
}
