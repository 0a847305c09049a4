package ics

import (
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
)

// Series is the sessions of a series as one calendar, a VEVENT each, in
// the clinic's language. Each session is written as its own instants in
// UTC, so a series that crosses a change of daylight-saving time shows
// every session at the wall-clock time it was booked for (no RRULE,
// which a reader would expand in its own zone). now is the DTSTAMP.
func Series(sessions []booking.Booking, typeName, specialist string, clinic clinics.Clinic, now time.Time) string {
	l := i18n.For(clinic.Language)
	lines := []string{
		"BEGIN:VCALENDAR",
		"VERSION:2.0",
		"PRODID:-//Clinic Booking//EN",
		"CALSCALE:GREGORIAN",
		"METHOD:PUBLISH",
	}
	for _, b := range sessions {
		status := "CONFIRMED"
		if b.Status != booking.StatusConfirmed {
			status = "CANCELLED"
		}
		lines = append(lines,
			"BEGIN:VEVENT",
			"UID:"+b.ID.String()+"@clinic-booking",
			"DTSTAMP:"+now.UTC().Format(stamp),
			"DTSTART:"+b.Start.UTC().Format(stamp),
			"DTEND:"+b.End.UTC().Format(stamp),
			"SUMMARY:"+escape(l.T("ics.summary", map[string]any{"Type": typeName, "Specialist": specialist})),
			"LOCATION:"+escape(clinic.Name+", "+clinic.Address),
			"DESCRIPTION:"+escape(l.T("ics.description", map[string]any{"Type": typeName, "Clinic": clinic.Name, "Zone": l.Zone(clinic.Timezone)})),
			"STATUS:"+status,
			"END:VEVENT",
		)
	}
	return write(append(lines, "END:VCALENDAR"))
}
