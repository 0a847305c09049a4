package feeds

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/web/httpx"
)

// Serve answers GET /calendar/:file (the token, then ".ics"): the feed,
// or 304 when the reader's copy (If-None-Match) is current. Requests are
// counted per client address before the token is looked at, so guessing
// costs a stranger their allowance, and per feed address after, so that
// an address that leaked cannot be used to load the server.
func (h *Feeds) Serve(c echo.Context) error {
	if err := httpx.OverLimit(c, h.deps.IPLimiter, "calendar requests"); err != nil {
		return err
	}
	token, ok := strings.CutSuffix(c.Param("file"), ".ics")
	if !ok || token == "" {
		return apperr.NotFoundf("", "No such calendar.")
	}
	b, err := h.deps.Feeds.Serve(c.Request().Context(), token)
	if err != nil {
		return err
	}
	if err := httpx.OverLimitFor(c, h.deps.Limiter, b.ID.String(), "calendar requests", "address"); err != nil {
		return err
	}
	hdr := c.Response().Header()
	// The address is the secret: no shared cache keeps the calendar, no
	// page it is opened from learns it, no search engine lists it.
	hdr.Set("Cache-Control", "private, no-cache")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Robots-Tag", "noindex")
	hdr.Set("ETag", b.ETag)
	if matches(c.Request().Header.Get("If-None-Match"), b.ETag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "text/calendar; charset=utf-8", b.Text)
}

// matches says whether an If-None-Match header names etag (weakly, as
// RFC 9110 compares for GET).
func matches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}
