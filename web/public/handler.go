// Package public is what the public JSON API and the patient pages share:
// the claim of a time in line, the limits on heartbeats, on moves by
// manage link and on waitlist joins, and the live view's page data.
package public

import (
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/web/httpx"
)

// Deps is what the Public uses of the server's dependencies.
type Deps struct {
	Checkout             *checkout.Service
	HeartbeatHoldLimiter *ratelimit.Limiter
	HeartbeatIPLimiter   *ratelimit.Limiter
	MoveLinkLimiter      *ratelimit.Limiter
	Slots                *slots.Service
	Views                *liveview.Store
	WaitlistEmailLimiter *ratelimit.Limiter
	WaitlistIPLimiter    *ratelimit.Limiter
}

// Public holds what the API's and the pages' handlers share.
type Public struct {
	deps Deps
	kit  *httpx.Kit
	// claims lines up this instance's claims of one time.
	claims *checkout.ClaimLine
}

// New makes the shared handlers; claims line up for claimLineWait at most.
func New(deps Deps, kit *httpx.Kit) *Public {
	return &Public{deps: deps, kit: kit, claims: checkout.NewClaimLine(claimLineWait)}
}
