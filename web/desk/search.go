// The audit log and booking search: read-only pages, each for the roles
// the role table lets see it (the service checks).

package desk

import (
	"cmp"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// BookingSearch answers GET /staff/bookings/search.
func (s *FrontDesk) BookingSearch(c echo.Context) error {
	ctx := c.Request().Context()
	u := httpx.StaffUser(c)
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
	tr := httpx.Tr(c)
	w := func(key string) string { return tr.T(key, nil) }
	vm := views.TableVM{Nav: s.kit.Nav(c, "search"), Title: w("desk.search.title"), Head: []string{
		w("desk.word.when"), w("desk.word.patient"), w("desk.word.email"), w("desk.word.phone"), w("desk.word.type"), w("desk.word.specialist"), w("desk.word.status"),
	}}
	if q != "" || c.QueryParam("from") != "" {
		rows, err := s.deps.StaffBookings.Search(ctx, u, q, from, to)
		if err != nil {
			return err
		}
		// A result names its type as stored; the clinic's types say it in
		// the reader's language.
		types, err := s.deps.Clinics.AppointmentTypes(ctx, u.ClinicID)
		if err != nil {
			return err
		}
		names := make(map[string]string, len(types))
		for _, t := range types {
			names[t.Name] = t.NameIn(tr.Lang())
		}
		for _, r := range rows {
			vm.Rows = append(vm.Rows, []string{shortWhen(tr, r.SlotStart.In(loc)), r.PatientName, r.PatientEmail, r.PatientPhone,
				cmp.Or(names[r.TypeName], r.TypeName), r.SpecialistName, statusWord(tr, r.Status) + seriesSearchMark(tr, r.Series)})
			vm.RowLinks = append(vm.RowLinks, "/staff/bookings/"+r.ID.String())
		}
		if len(rows) == 0 {
			vm.Notice = w("desk.search.none")
		}
		ids := make([]uuid.UUID, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		if err := s.record(c, privacy.PageSearch, ids, nil); err != nil {
			return err
		}
	}
	return httpx.Render(c, http.StatusOK, views.Page(vm.Title, s.deps.Assets), httpx.TemplChildren(views.Table(vm), views.SearchForm(q, c.QueryParam("from"), c.QueryParam("to"))))
}
