// Package records is the admins' pages of what the clinic holds and who
// saw it: the e-mails kept without a mail server (the Outbox), the audit
// log, one patient's data (what is held, its export and its erasure) and
// the record of who looked at which bookings.
package records

import (
	"github.com/alexedwards/scs/v2"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/web/httpx"
)

// Deps is what Records uses of the server's dependencies.
type Deps struct {
	Access        *privacy.Recorder
	Clinics       *clinics.Service
	Outbox        *outbox.Outbox
	PatientExport *privacy.Exporter
	Privacy       *privacy.Service
	Sessions      *scs.SessionManager
	Slots         *slots.Service
	Staff         *staff.Service
}

// Records holds the handlers of those pages.
type Records struct {
	deps Deps
	kit  *httpx.Kit
}

// New makes the handlers.
func New(deps Deps, kit *httpx.Kit) *Records {
	return &Records{deps: deps, kit: kit}
}
