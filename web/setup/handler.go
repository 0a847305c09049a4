// Package setup is the admins' pages that set the clinic up: staff
// accounts (and their second factors), kiosk tokens, specialists and their
// hours, closures and public holidays, appointment types and the clinic's
// settings.
package setup

import (
	"log/slog"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/web/httpx"
)

// Deps is what the Admin uses of the server's dependencies.
type Deps struct {
	Access        *privacy.Recorder
	Assets        *httpx.Assets
	Clinics       *clinics.Service
	Holds         *holds.Store
	Logger        *slog.Logger
	Outbox        *outbox.Outbox
	PatientExport *privacy.Exporter
	Sessions      *scs.SessionManager
	Slots         *slots.Service
	SetupChanges  slots.SetupChanges
	StaffBookings *desk.Bookings
	Staff         *staff.Service
	Practice      *practice.Service
	Privacy       *privacy.Service
	// FeedBlock is a specialist's calendar address block, NamesBlock the
	// settings' block of the calendar feeds (web/feeds).
	FeedBlock  func(c echo.Context, specialistID uuid.UUID) (templ.Component, error)
	NamesBlock func(c echo.Context) (templ.Component, error)
}

// Admin holds the set-up page handlers.
type Admin struct {
	deps Deps
	kit  *httpx.Kit
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit) *Admin {
	return &Admin{deps: deps, kit: kit}
}
