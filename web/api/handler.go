// Package api is the JSON API: the public one under /v1 (appointment types,
// times, holds, appointments, waitlist joins) and the staff's under
// /v1/staff (a specialist and their hours).
package api

import (
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/verify"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/public"
)

// Deps is what the Endpoints uses of the server's dependencies.
type Deps struct {
	APIHoldLimiter *ratelimit.Limiter
	Checkout       *checkout.Service
	Clinics        *clinics.Service
	Grid           *grid.Service
	MoveLimiter    *ratelimit.Limiter
	Practice       *practice.Service
	Slots          *slots.Service
	Verify         *verify.Service
	Views          *liveview.Store
	Waitlist       *waitlist.Service
}

// Endpoints holds the public and staff JSON API's handlers.
type Endpoints struct {
	deps Deps
	kit  *httpx.Kit
	pub  *public.Public
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit, pub *public.Public) *Endpoints {
	return &Endpoints{deps: deps, kit: kit, pub: pub}
}
