// Package signin is what every staff member does for themselves: signing
// in (password, then the second factor's code), a one-time welcome link
// that sets a password, signing out, and their own account (password,
// second factor, the list of their sessions).
package signin

import (
	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/web/httpx"
)

// Deps is what SignIn uses of the server's dependencies.
type Deps struct {
	Clinics             *clinics.Service
	LoginAccountLimiter *ratelimit.Limiter
	LoginDeviceLimiter  *ratelimit.Limiter
	CodeAccountLimiter  *ratelimit.Limiter
	LoginIPLimiter      *ratelimit.Limiter
	Sessions            *scs.SessionManager
	Staff               *staff.Service
	// FeedBlock is the account's own calendar address block (web/feeds).
	FeedBlock func(c echo.Context) (templ.Component, error)
}

// SignIn holds the sign-in and own-account page handlers.
type SignIn struct {
	deps Deps
	kit  *httpx.Kit
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit) *SignIn {
	return &SignIn{deps: deps, kit: kit}
}
