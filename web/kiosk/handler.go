// Package kiosk is the waiting-room board: its page and its live stream.
package kiosk

import (
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// Deps is what the Board uses of the server's dependencies.
type Deps struct {
	Assets   *httpx.Assets
	Clinics  *clinics.Service
	Practice *practice.Service
	Slots    *slots.Service
}

// Board holds the kiosk board's handlers.
type Board struct {
	deps Deps
	kit  *httpx.Kit
	live *stream.Live
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit, live *stream.Live) *Board {
	return &Board{deps: deps, kit: kit, live: live}
}
