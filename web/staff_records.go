// The audit log and booking search: read-only pages, each for the roles
// the role table lets see it (the service checks).

package web

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
)

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
			vm.Rows = append(vm.Rows, []string{r.SlotStart.In(loc).Format(staffTimeLayout), r.PatientName, r.PatientEmail, r.PatientPhone, r.TypeName, r.SpecialistName, r.Status})
			vm.RowLinks = append(vm.RowLinks, "/staff/bookings/"+r.ID.String())
		}
		if len(rows) == 0 {
			vm.Notice = "No bookings match."
		}
	}
	return render(c, http.StatusOK, views.Page("Find a booking", s.deps.Assets), templChildren(views.Table(vm), views.SearchForm(q, c.QueryParam("from"), c.QueryParam("to"))))
}
