package desk

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// The day sheet: a clinic's day on paper, one page per specialist.

// DaySheet answers GET /staff/day/sheet?date=YYYY-MM-DD (today without
// one).
func (s *FrontDesk) DaySheet(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(staff.ActCalendar); err != nil {
		return err
	}
	ctx := c.Request().Context()
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	day := availability.DateOf(time.Now(), loc)
	if d := c.QueryParam("date"); d != "" {
		if day, err = availability.ParseDate(d); err != nil {
			return apperr.Invalidf("date", "date must be YYYY-MM-DD.")
		}
	}
	sheet, err := s.deps.StaffBookings.DaySheet(ctx, u, day)
	if err != nil {
		return err
	}
	var ids []uuid.UUID
	for _, part := range sheet.Specialists {
		for _, b := range part.Bookings {
			ids = append(ids, b.ID)
		}
	}
	if err := s.record(c, privacy.PageDaySheet, ids, nil); err != nil {
		return err
	}
	tr := httpx.Tr(c)
	names, err := s.typeNames(ctx, u.ClinicID, tr.Lang())
	if err != nil {
		return err
	}
	noon := time.Date(day.Year, day.Month, day.Day, 12, 0, 0, 0, loc)
	vm := views.DaySheetVM{
		Nav: s.kit.Nav(c, "calendar"), Date: day.String(), Label: longDate(tr, noon), Timezone: loc.String(),
		PrevURL: "/staff/day/sheet?date=" + day.AddDays(-1).String(), NextURL: "/staff/day/sheet?date=" + day.AddDays(1).String(),
		DayURL: "/staff?view=day&date=" + day.String(),
	}
	for _, part := range sheet.Specialists {
		sp := views.DaySheetSpecialistVM{ID: part.Specialist.ID.String(), Name: part.Specialist.Name, Inactive: !part.Specialist.Active}
		for _, b := range part.Bookings {
			status := statusWord(tr, booking.StatusConfirmed)
			if b.Attendance != desk.NotMarked {
				status = markWord(tr, b.Attendance)
			}
			sp.Rows = append(sp.Rows, views.DaySheetRowVM{
				ID: b.ID.String(), Time: tr.Time(b.Start.In(loc)) + "–" + tr.Time(b.End.In(loc)),
				Patient: b.PatientName, Phone: b.PatientPhone, TypeName: typeName(names, b.AppointmentTypeID, b.TypeName), Attendance: b.Attendance, Status: status,
			})
		}
		vm.Specialists = append(vm.Specialists, sp)
	}
	return s.kit.Page(c, http.StatusOK, tr.T("desk.sheet.title", map[string]any{"Day": tr.DayMonthYear(noon)}), views.DaySheet(vm))
}
