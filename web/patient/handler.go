// Package patient is the patients' pages: the clinic's page, the booking
// pages (hold, heartbeat, release, confirm), "find my booking" and the
// manage links (cancel, reschedule, calendar file).
package patient

import (
	"github.com/alexedwards/scs/v2"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/verify"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/public"
	"github.com/clinic/booking/web/stream"
)

// Deps is what the Pages uses of the server's dependencies.
type Deps struct {
	Assets           *httpx.Assets
	Bookings         *booking.Service
	Checkout         *checkout.Service
	Clinics          *clinics.Service
	FindEmailLimiter *ratelimit.Limiter
	FindIPLimiter    *ratelimit.Limiter
	Grid             *grid.Service
	HoldLimiter      *ratelimit.Limiter
	Holds            *holds.Store
	MoveLimiter      *ratelimit.Limiter
	Outbox           *outbox.Outbox
	Sessions         *scs.SessionManager
	Slots            *slots.Service
	Verify           *verify.Service
	Views            *liveview.Store
}

// Pages holds the patients' page handlers.
type Pages struct {
	deps Deps
	kit  *httpx.Kit
	live *stream.Live
	pub  *public.Public
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit, live *stream.Live, pub *public.Public) *Pages {
	return &Pages{deps: deps, kit: kit, live: live, pub: pub}
}
