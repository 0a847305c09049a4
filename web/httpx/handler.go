// Package httpx is the HTTP plumbing every audience shares: the error
// handler and its pages, rendering, CSRF, sessions and client ids,
// signed values, the staff's sign-in check, middleware, languages,
// assets and the request metrics.
package httpx

import (
	"log/slog"

	"github.com/alexedwards/scs/v2"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/staff"
)

// Deps is what the Kit uses of the server's dependencies.
type Deps struct {
	Assets            *Assets
	Clinics           *clinics.Service
	Logger            *slog.Logger
	PublicURL         string
	Sessions          *scs.SessionManager
	Staff             *staff.Service
	StaffWriteLimiter *ratelimit.Limiter
}

// Kit is the plumbing that needs the server's dependencies: the error
// handler, the middleware, sessions and client ids, pages.
type Kit struct {
	deps    Deps
	Signer  Signer
	Metrics *Metrics
}

// New makes the Kit.
func New(deps Deps, signer Signer, metrics *Metrics) *Kit {
	return &Kit{deps: deps, Signer: signer, Metrics: metrics}
}
