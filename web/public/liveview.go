package public

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/liveview"
)

// PageMeta is what a booking page shows besides its grid and panel. It is
// kept with the week's live view: a change of any of it is a calendar
// change, which drops the view.
type PageMeta struct {
	Clinic      clinics.Clinic
	Typ         clinics.AppointmentType
	Specialists []clinics.Specialist
	Loc         *time.Location
	First, Last availability.Date // the booking window, as of the reading
}

// PageMetaOf is the page data kept with a view (nil without a view or data).
func PageMetaOf(v *liveview.View) *PageMeta {
	if v == nil {
		return nil
	}
	m, _ := v.Meta().(*PageMeta)
	return m
}

// WriteAnswer writes a live answer with its ETag, or 304 when the client
// has it already. no-cache: a browser may keep it, and asks before using
// it again. The answer's length is sent ahead: a body past net/http's
// small buffer would otherwise go chunked, one more write to the
// connection per answer (a week's timeslots are 10-20 kB, its page more).
func WriteAnswer(c echo.Context, contentType string, a liveview.Answer) error {
	h := c.Response().Header()
	h.Set("ETag", a.ETag)
	h.Set("Cache-Control", "no-cache")
	if etagMatches(c.Request().Header.Get("If-None-Match"), a.ETag) {
		return c.NoContent(http.StatusNotModified)
	}
	h.Set("Content-Length", strconv.Itoa(len(a.Body)))
	return c.Blob(http.StatusOK, contentType, a.Body)
}

// etagMatches is If-None-Match's weak comparison against tag.
func etagMatches(header, tag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == tag {
			return true
		}
	}
	return false
}
