// The record of who looked, for admins: who saw one patient's bookings
// and waitlist places, and what one staff account looked at.

package records

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// AccessPatient answers GET /staff/access?email=&phone=: the form, and
// with an address or a number, who looked at that patient's bookings.
func (s *Records) AccessPatient(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(privacy.ActReadAccess); err != nil {
		return err
	}
	ctx := c.Request().Context()
	email, phone := strings.TrimSpace(c.QueryParam("email")), strings.TrimSpace(c.QueryParam("phone"))
	vm := views.AccessPatientVM{Nav: s.kit.Nav(c, "users"), Email: email, Phone: phone}
	title := httpx.T(c, "records.access.title")
	if email == "" && phone == "" {
		return s.kit.Page(c, http.StatusOK, title, views.AccessPatient(vm))
	}
	found, err := s.deps.Access.ByPatient(ctx, u, email, phone)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Invalid {
		vm.Error = contactProblem(c, ae)
		return s.kit.Page(c, http.StatusBadRequest, title, views.AccessPatient(vm))
	}
	if err != nil {
		return err
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	vm.Searched, vm.Waitlist = true, len(found.Waitlist)
	tl := httpx.Tr(c)
	when := map[uuid.UUID]string{}
	for _, b := range found.Bookings {
		when[b.ID] = httpx.StaffWhen(tl, b.Start, loc)
		vm.Bookings = append(vm.Bookings, views.AccessBookingVM{When: when[b.ID], Status: words(tl, statusPrefix, b.Status), URL: "/staff/bookings/" + b.ID.String()})
	}
	for _, l := range found.Looks {
		look := views.AccessLookVM{When: httpx.StaffWhen(tl, l.At, loc), Staff: l.StaffEmail, Page: pageWords(tl, l.Page), Shown: shownWords(tl, l, when)}
		if l.StaffEmail == "" {
			look.Staff = tl.T("records.deleted_account", nil)
		} else {
			look.StaffURL = views.StaffAccessPath(l.StaffID)
		}
		vm.Looks = append(vm.Looks, look)
	}
	if len(found.Looks) >= privacy.LookLimit {
		vm.Notice = newestViews(c)
	}
	return s.kit.Page(c, http.StatusOK, title, views.AccessPatient(vm))
}

// newestViews says a list of views is cut at the newest ones.
func newestViews(c echo.Context) string {
	return httpx.Tr(c).T("records.newest_views", map[string]any{"Count": strconv.Itoa(privacy.LookLimit)})
}

// shownWords says which of the patient's bookings (by time) and how many
// waitlist places a view showed.
func shownWords(tl *i18n.Localizer, l privacy.Look, when map[uuid.UUID]string) string {
	parts := make([]string, 0, len(l.Bookings)+1)
	for _, id := range l.Bookings {
		parts = append(parts, tl.T("records.access.shown_booking", map[string]any{"When": when[id]}))
	}
	if n := len(l.Waitlist); n == 1 {
		parts = append(parts, tl.T("records.access.shown_place", nil))
	} else if n > 1 {
		parts = append(parts, tl.T("records.access.shown_places", map[string]any{"Count": strconv.Itoa(n)}))
	}
	return strings.Join(parts, ", ")
}

// AccessStaff answers GET /staff/users/:id/access: what one staff account
// of the clinic looked at, newest first.
func (s *Records) AccessStaff(c echo.Context) error {
	u := httpx.StaffUser(c)
	if err := u.May(privacy.ActReadAccess); err != nil {
		return err
	}
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return apperr.NotFoundf("id", "No such staff account at this clinic.")
	}
	ctx := c.Request().Context()
	email, looks, err := s.deps.Access.ByStaff(ctx, u, id)
	if err != nil {
		return err
	}
	loc, err := s.deps.Slots.Zone(ctx, u.ClinicID)
	if err != nil {
		return err
	}
	vm := views.AccessStaffVM{Nav: s.kit.Nav(c, "users"), Email: email}
	tl := httpx.Tr(c)
	for _, l := range looks {
		vm.Rows = append(vm.Rows, views.AccessStaffRowVM{
			When: l.At.In(loc).Format(time.DateTime), Page: pageWords(tl, l.Page), Bookings: strconv.Itoa(l.Bookings),
			Waitlist: strconv.Itoa(l.WaitlistPlaces), Messages: strconv.Itoa(l.Messages),
		})
	}
	if len(looks) >= privacy.LookLimit {
		vm.Notice = newestViews(c)
	}
	return s.kit.Page(c, http.StatusOK, httpx.Tr(c).T("records.access.staff_title", map[string]any{"Email": email}), views.AccessStaff(vm))
}
