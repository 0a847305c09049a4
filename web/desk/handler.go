// Package desk is the staff's front desk: the calendar, the day and week
// grids with their desk dialog, bookings by phone and their moves,
// attendance, the day sheet, the booking search and the staff's waitlist
// with its offers by hand.
package desk

import (
	"log/slog"

	"github.com/alexedwards/scs/v2"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/series"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/web/httpx"
	"github.com/clinic/booking/web/stream"
)

// Deps is what the FrontDesk uses of the server's dependencies.
type Deps struct {
	Access        *privacy.Recorder
	Assets        *httpx.Assets
	Bookings      *booking.Service
	Clinics       *clinics.Service
	Desk          *desk.Desk
	Holds         *holds.Store
	Logger        *slog.Logger
	Outbox        *outbox.Outbox
	Sessions      *scs.SessionManager
	Slots         *slots.Service
	Staff         *staff.Service
	StaffBookings *desk.Bookings
	Waitlist      *waitlist.Service
	Series        *series.Service
}

// FrontDesk holds the front desk's page handlers.
type FrontDesk struct {
	deps Deps
	kit  *httpx.Kit
	live *stream.Live
	// csrfSlot stands for the viewer's CSRF token in the staff calendar's
	// shared live fragments; random, so no text in them can contain it.
	csrfSlot string
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit, live *stream.Live) *FrontDesk {
	return &FrontDesk{deps: deps, kit: kit, live: live, csrfSlot: "csrf-" + httpx.RandomHex(16)}
}
