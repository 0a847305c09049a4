package patient

// A series' session on its manage page: the course's sessions, and the
// cancel of this session with every later one (one e-mail for them all).

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/views"
	"github.com/clinic/booking/web/httpx"
)

// seriesVM is the booking's series as its page shows it.
func (m manageData) seriesVM() views.SeriesManageVM {
	if len(m.series) == 0 {
		return views.SeriesManageVM{}
	}
	out := views.SeriesManageVM{N: m.b.SeriesPosition, Total: len(m.series)}
	for _, x := range m.series {
		s := views.SeriesSessionVM{N: x.SeriesPosition, When: httpx.LocalWhen(m.tr, x.Start, m.loc), Status: x.Status, This: x.ID == m.b.ID}
		out.Sessions = append(out.Sessions, s)
		if x.SeriesPosition >= m.b.SeriesPosition && x.Status == booking.StatusConfirmed {
			out.Later = append(out.Later, s)
		}
	}
	if m.b.Status == booking.StatusConfirmed && len(out.Later) > 1 {
		out.CancelURL = "/manage/" + m.token + "/cancel-series"
	}
	return out
}

// ManageCancelSeriesPage answers GET /manage/:token/cancel-series: the
// page that asks before cancelling this session and every later one; the
// booking's own page once there is nothing of the kind to cancel.
func (s *Pages) ManageCancelSeriesPage(c echo.Context) error {
	m, err := s.loadManage(c)
	if err != nil {
		return err
	}
	vm := m.vm()
	if vm.Series.CancelURL == "" {
		return c.Redirect(http.StatusSeeOther, "/manage/"+m.token)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return s.kit.Page(c, http.StatusOK, m.tr.T("cancel.series.title", nil), views.CancelSeriesConfirm(vm))
}

// ManageCancelSeries answers POST /manage/:token/cancel-series: first a
// confirmation, then the cancel of this session and every later one.
func (s *Pages) ManageCancelSeries(c echo.Context) error {
	m, err := s.loadManage(c)
	if err != nil {
		return err
	}
	vm := m.vm()
	if vm.Series.CancelURL == "" {
		return httpx.Redirect(c, "/manage/"+m.token)
	}
	if c.FormValue("confirm") != "yes" {
		return s.kit.Page(c, http.StatusOK, m.tr.T("cancel.series.title", nil), views.CancelSeriesConfirm(vm))
	}
	done, err := s.deps.Checkout.CancelSeriesFrom(c.Request().Context(), m.b.ID, m.token, c.FormValue("reason"))
	if err != nil {
		return err
	}
	s.deps.Sessions.Put(c.Request().Context(), "notice", m.tr.T("manage.series.cancelled_notice", map[string]any{"N": len(done)}))
	return httpx.Redirect(c, "/manage/"+m.token)
}
