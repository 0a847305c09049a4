package httpx

import (
	"bytes"
	"context"
	"io"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/views"
)

// Render writes a page: the body alone for htmx requests, inside the
// layout otherwise. It renders into a buffer first, so a failing component
// is still a clean error response rather than half a page.
func Render(c echo.Context, status int, layout, body templ.Component) error {
	c.Response().Header().Add("Vary", "HX-Request")
	var buf bytes.Buffer
	ctx := c.Request().Context()
	var err error
	if c.Request().Header.Get("HX-Request") == "true" || layout == nil {
		err = body.Render(ctx, &buf)
	} else {
		err = layout.Render(templ.WithChildren(ctx, body), &buf)
	}
	if err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// TemplChildren renders parent with child as its children.
func TemplChildren(parent, child templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return parent.Render(templ.WithChildren(ctx, child), w)
	})
}

// PublicBase is the start of the links the server hands out (a board's QR
// code, a sign-in link): PUBLIC_URL when the operator set it, else the
// scheme (as Echo reads it, so a TLS-terminating proxy's X-Forwarded-Proto
// counts) and host this request came with. A board draws its QR code on its
// own page only, never in the shared live fragments, so one request's Host
// cannot reach another screen.
func (s *Kit) PublicBase(c echo.Context) string {
	if s.deps.PublicURL != "" {
		return s.deps.PublicURL
	}
	return c.Scheme() + "://" + c.Request().Host
}

// Page renders a body inside the layout (or alone for htmx).
func (s *Kit) Page(c echo.Context, status int, title string, body templ.Component) error {
	return Render(c, status, views.Page(title, s.deps.Assets), body)
}
