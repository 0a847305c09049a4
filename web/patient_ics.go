package web

import (
	"strings"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
)

// icsCalendar renders a booking as an iCalendar file (RFC 5545).
func icsCalendar(b booking.Booking, typeName, specialist string, clinic clinics.Clinic, now time.Time) string {
	const stamp = "20060102T150405Z"
	l := i18n.For(clinic.Language) // the clinic's language, whoever downloads it
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
		"SUMMARY:" + icsEscape(l.T("ics.summary", map[string]any{"Type": typeName, "Specialist": specialist})),
		"LOCATION:" + icsEscape(clinic.Name+", "+clinic.Address),
		"DESCRIPTION:" + icsEscape(l.T("ics.description", map[string]any{"Type": typeName, "Clinic": clinic.Name, "Zone": clinic.Timezone})),
		"STATUS:" + status,
		"END:VEVENT",
		"END:VCALENDAR",
	}
	var out strings.Builder
	for _, l := range lines {
		out.WriteString(icsFold(l))
		out.WriteString("\r\n")
	}
	return out.String()
}

func icsEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\n", `\n`)
	return r.Replace(s)
}

// icsFold folds lines at 75 octets, as RFC 5545 requires; a continuation
// line's leading space is one of its 75.
func icsFold(l string) string {
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
