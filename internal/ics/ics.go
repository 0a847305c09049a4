// Package ics renders bookings as iCalendar (RFC 5545): one booking
// (Calendar: the manage page's "add to calendar" download and the file the
// e-mails to patients carry) and a specialist's subscribed calendar (Feed).
package ics

import (
	"strings"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
)

// stamp is a UTC DATE-TIME; every instant is written in UTC, which every
// calendar reads right across daylight-saving changes.
const stamp = "20060102T150405Z"

// Calendar is the booking as one VEVENT, in the clinic's language
// whoever asks for it. now is the file's DTSTAMP. The patient's details
// are not in it.
func Calendar(b booking.Booking, typeName, specialist string, clinic clinics.Clinic, now time.Time) string {
	l := i18n.For(clinic.Language)
	status := "CONFIRMED"
	if b.Status != booking.StatusConfirmed {
		status = "CANCELLED"
	}
	lines := []string{
		"BEGIN:VCALENDAR",
		"VERSION:2.0",
		"PRODID:-//Clinic Booking//EN",
		"CALSCALE:GREGORIAN",
		"METHOD:PUBLISH",
		"BEGIN:VEVENT",
		"UID:" + b.ID.String() + "@clinic-booking",
		"DTSTAMP:" + now.UTC().Format(stamp),
		"DTSTART:" + b.Start.UTC().Format(stamp),
		"DTEND:" + b.End.UTC().Format(stamp),
		"SUMMARY:" + escape(l.T("ics.summary", map[string]any{"Type": typeName, "Specialist": specialist})),
		"LOCATION:" + escape(clinic.Name+", "+clinic.Address),
		"DESCRIPTION:" + escape(l.T("ics.description", map[string]any{"Type": typeName, "Clinic": clinic.Name, "Zone": l.Zone(clinic.Timezone)})),
		"STATUS:" + status,
		"END:VEVENT",
		"END:VCALENDAR",
	}
	return write(lines)
}

var escaper = strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\n", `\n`)

// escape writes s as a TEXT value.
func escape(s string) string { return escaper.Replace(s) }

// fold folds lines at 75 octets, as RFC 5545 requires; a continuation
// line's leading space is one of its 75.
func fold(l string) string {
	if len(l) <= 75 {
		return l
	}
	var b strings.Builder
	limit := 75
	for len(l) > limit {
		cut := limit
		for cut > 0 && (l[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		b.WriteString(l[:cut])
		b.WriteString("\r\n ")
		l = l[cut:]
		limit = 74
	}
	b.WriteString(l)
	return b.String()
}
