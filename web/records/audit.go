package records

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// AuditPage answers GET /staff/audit.
func (s *Records) AuditPage(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
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
	vm := views.AuditVM{Nav: s.kit.Nav(c, "audit"), Entity: f.Entity, Actor: f.Actor, From: c.QueryParam("from"), To: c.QueryParam("to"), Page: f.Page}
	more := len(rows) > staff.AuditPageSize
	if more {
		rows = rows[:staff.AuditPageSize]
	}
	if err := s.recordAudit(c, rows); err != nil {
		return err
	}
	l := httpx.Tr(c)
	for _, r := range rows {
		vm.Rows = append(vm.Rows, views.AuditRowVM{At: r.At.In(loc).Format("2006-01-02 15:04:05"), Actor: r.Actor, Action: r.Action,
			Entity: words(l, entityPrefix, r.Entity), EntityID: r.EntityID, Before: string(r.Before), After: string(r.After), Reason: r.Reason})
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
	return s.kit.Page(c, http.StatusOK, httpx.T(c, "records.audit.title"), views.Audit(vm))
}

// recordAudit records the bookings, waitlist places and e-mails whose
// audit rows a page shows: their before and after may hold the patient's
// details.
func (s *Records) recordAudit(c echo.Context, rows []staff.AuditEntry) error {
	var bookings, places, messages []uuid.UUID
	for _, r := range rows {
		id, err := uuid.Parse(r.EntityID)
		if err != nil {
			continue
		}
		switch r.Entity {
		case "booking":
			bookings = append(bookings, id)
		case "waitlist_entry":
			places = append(places, id)
		case "message":
			messages = append(messages, id)
		}
	}
	u := httpx.StaffUser(c)
	return s.deps.Access.Record(c.Request().Context(), privacy.Access{
		ClinicID: u.ClinicID, StaffID: u.ID, Page: privacy.PageAuditLog, Bookings: bookings, Waitlist: places, Messages: messages,
	})
}
