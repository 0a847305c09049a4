package slots

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/holds"
)

// SetupChanges retires what the processes keep of a clinic's calendar
// once a change of its set-up (settings, hours, overrides, types,
// specialists, its zone) is committed: this process's cached slot lists,
// live views and kept clinic page at once, and every process's open pages
// and kept answers through a calendar event.
type SetupChanges struct {
	Slots *Service
	// Views are this process's live views and the answers it keeps of
	// the clinic's set-up; nil: none.
	Views interface{ SetupChanged(clinicID uuid.UUID) }
	// Holds publishes the calendar event.
	Holds  *holds.Store
	Logger *slog.Logger
}

// Changed retires the clinic's cached lists, drops its live views and
// tells its open pages to refresh. A failure to publish is logged: the
// pages then refresh on their next reading.
func (c SetupChanges) Changed(ctx context.Context, clinicID uuid.UUID) {
	c.Slots.Invalidate(ctx, clinicID)
	if c.Views != nil {
		c.Views.SetupChanged(clinicID)
	}
	if err := c.Holds.Publish(ctx, holds.Event{Type: holds.EventCalendar, Hold: holds.Hold{ClinicID: clinicID}}); err != nil {
		c.Logger.Warn("publish calendar change", "err", err)
	}
}

// ZoneChanged is Changed after a change of the clinic's zone (res, as
// clinics.Service.SaveSettings returned it), which also forgets the
// availability bitmaps of the days the recent and coming bookings fell on
// under the old zone: their bits count minutes from the old zone's
// midnight.
func (c SetupChanges) ZoneChanged(ctx context.Context, clinicID uuid.UUID, res clinics.SaveResult) {
	c.Changed(ctx, clinicID)
	if old, err := clinics.LoadZone(res.OldZone); err == nil {
		for _, sp := range res.Spans {
			c.Slots.Bitmap.Clear(ctx, old, clinicID, sp.SpecialistID, sp.Start, sp.End)
		}
	}
}
