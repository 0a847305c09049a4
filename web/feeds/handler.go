// Package feeds is the calendar subscriptions' pages: the feed itself,
// which phones read from its secret address with no session, and the
// staff's blocks that make, replace and stop addresses (on the
// specialist's page, the account page and the settings page).
package feeds

import (
	"github.com/clinic/booking/internal/feeds"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/web/httpx"
)

// Deps is what the Feeds handlers use of the server's dependencies.
type Deps struct {
	Feeds *feeds.Service
	Slots *slots.Service // the clinic's zone, for the times shown
	Staff *staff.Service // the accounts a specialist may be linked to
	// IPLimiter counts feed requests per client address, Limiter per feed
	// address.
	IPLimiter, Limiter *ratelimit.Limiter
}

// Feeds holds the calendar subscriptions' handlers.
type Feeds struct {
	deps Deps
	kit  *httpx.Kit
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit) *Feeds {
	return &Feeds{deps: deps, kit: kit}
}
