package setup

// The public holidays page: a year's holidays as one list, a date and a
// name a line, saved as one (after listing the bookings on the dates).

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// holidayYear reads the year of the query or form: this year when
// absent.
func (s *Admin) holidayYear(c echo.Context) (int, error) {
	today, _ := s.today(c)
	v := c.FormValue("year")
	if v == "" {
		return today.Year(), nil
	}
	y, err := strconv.Atoi(v)
	if err != nil || y < 2000 || y > 2200 {
		return 0, apperr.Invalidf("year", "Give a year like %d.", today.Year())
	}
	return y, nil
}

// HolidaysPage answers GET /staff/holidays?year=.
func (s *Admin) HolidaysPage(c echo.Context) error {
	if err := httpx.StaffUser(c).May(staff.ActClosures); err != nil {
		return err
	}
	year, err := s.holidayYear(c)
	if err != nil {
		return err
	}
	u := httpx.StaffUser(c)
	hs, err := s.deps.Practice.Holidays(c.Request().Context(), u, year)
	if err != nil {
		return err
	}
	vm := views.HolidaysVM{
		Nav: s.kit.Nav(c, "closures"), Year: year, Text: practice.FormatHolidays(hs),
		CanEdit: u.May(staff.ActClinicClosures) == nil,
		Notice:  s.deps.Sessions.PopString(c.Request().Context(), "notice"),
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("closures.holidays_title", map[string]any{"Year": year}), views.Holidays(vm))
}

// HolidaysSave answers POST /staff/holidays: with bookings on the dates
// and no confirm, the page again listing them; else the year's list
// replaced.
func (s *Admin) HolidaysSave(c echo.Context) error {
	if err := httpx.StaffUser(c).May(staff.ActClinicClosures); err != nil {
		return err
	}
	year, err := s.holidayYear(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
	tr := httpx.Tr(c)
	vm := views.HolidaysVM{Nav: s.kit.Nav(c, "closures"), Year: year, Text: c.FormValue("holidays"), CanEdit: true}
	title := tr.T("closures.holidays_title", map[string]any{"Year": year})
	hs, err := practice.ParseHolidays(year, vm.Text)
	if err == nil && c.FormValue("confirm") == "" {
		var bs []practice.AffectedBooking
		if bs, err = s.deps.Practice.HolidayBookings(ctx, u, hs); err == nil && len(bs) > 0 {
			_, loc := s.today(c)
			vm.Preview = affectedVMs(bs, loc)
			if err := s.recordLook(c, "holidays preview", vm.Preview); err != nil {
				return err
			}
			return s.kit.Page(c, http.StatusOK, title, views.Holidays(vm))
		}
	}
	if err == nil {
		err = s.deps.Practice.SetHolidays(ctx, u, year, hs)
	}
	if le := (*practice.LineError)(nil); errors.As(err, &le) {
		vm.Error = tr.T("closures.error_holidays", map[string]any{"Year": year, "Line": le.Line})
		return s.kit.Page(c, http.StatusUnprocessableEntity, title, views.Holidays(vm))
	}
	if err != nil {
		return err
	}
	s.deps.Sessions.Put(ctx, "notice", tr.T("closures.holidays_saved", nil))
	return c.Redirect(http.StatusSeeOther, "/staff/holidays?year="+strconv.Itoa(year))
}
