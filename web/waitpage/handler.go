// Package waitpage is the patients' waitlist pages: joining, a place on
// the list and the offers of a freed time.
package waitpage

import (
	"github.com/alexedwards/scs/v2"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/public"
)

// Deps is what the WaitPages uses of the server's dependencies.
type Deps struct {
	Clinics      *clinics.Service
	OfferLimiter *ratelimit.Limiter
	Sessions     *scs.SessionManager
	Slots        *slots.Service
	Waitlist     *waitlist.Service
}

// WaitPages holds the patients' waitlist page handlers.
type WaitPages struct {
	deps Deps
	kit  *httpx.Kit
	pub  *public.Public
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit, pub *public.Public) *WaitPages {
	return &WaitPages{deps: deps, kit: kit, pub: pub}
}
