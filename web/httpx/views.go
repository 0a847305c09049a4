package httpx

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/views"
)

// StaffTimeLayout is how staff pages show an instant, in the clinic's zone.
const StaffTimeLayout = "Mon 2 Jan 2006 15:04"

// StaffWhen is an instant as the staff pages show it, in the clinic's
// zone and l's words: "Tue 24 Nov 2026 14:30", "Di., 24. Nov. 2026 14:30"
// (StaffTimeLayout in English).
func StaffWhen(l *i18n.Localizer, t time.Time, loc *time.Location) string {
	t = t.In(loc)
	return l.Day(t) + " " + strconv.Itoa(t.Year()) + " " + l.Time(t)
}

// MinutesOf is d in whole minutes, rounded up, at least one.
func MinutesOf(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Minute-1)/time.Minute)))
}

// ClinicVM is a clinic as the pages show it.
func ClinicVM(r clinics.Clinic) views.ClinicVM {
	return views.ClinicVM{Slug: r.Slug, Name: r.Name, Address: r.Address, Timezone: r.Timezone,
		ContactPhone: r.ContactPhone, ContactEmail: r.ContactEmail}
}

// LocalWhen is a time in full in l's language, with the clinic's zone as
// people say it: "Tuesday 24 November 2026, 10:00 (Berlin time)".
func LocalWhen(l *i18n.Localizer, t time.Time, loc *time.Location) string {
	return l.LongDateTime(t.In(loc)) + " (" + l.Zone(loc.String()) + ")"
}

// Redirect sends the browser on: HX-Redirect for htmx, 303 otherwise.
func Redirect(c echo.Context, to string) error {
	if c.Request().Header.Get("HX-Request") == "true" {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusOK)
	}
	return c.Redirect(http.StatusSeeOther, to)
}

// ItoaInt is strconv.Itoa, for templates and query strings.
func ItoaInt(n int) string { return strconv.Itoa(n) }

// Atoi32 reads a form's number; anything else is 0, which the services refuse.
func Atoi32(s string) int32 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	return int32(n)
}

// MinDate is the earlier of a and b.
func MinDate(a, b availability.Date) availability.Date {
	if b.Before(a) {
		return b
	}
	return a
}
