package ics

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// FeedEvent is one booking of a subscribed calendar, its words already in
// the clinic's language.
type FeedEvent struct {
	ID          uuid.UUID
	Start, End  time.Time
	Summary     string
	Description string
	// Changed is the event's DTSTAMP: when the booking last changed, so
	// that a feed rebuilt without a change is the same bytes.
	Changed time.Time
}

// Feed is a subscribed calendar (a phone's "subscribe to calendar"): the
// whole list of events, which a reader replaces its copy with on each
// refresh, so an event left out is an event removed. Instants are UTC, as
// in Calendar. refresh is the interval readers are asked to refresh at.
func Feed(name string, events []FeedEvent, refresh time.Duration) string {
	interval := "PT" + formatMinutes(refresh) + "M"
	lines := []string{
		"BEGIN:VCALENDAR",
		"VERSION:2.0",
		"PRODID:-//Clinic Booking//EN",
		"CALSCALE:GREGORIAN",
		"METHOD:PUBLISH",
		"NAME:" + escape(name),
		"X-WR-CALNAME:" + escape(name),
		"REFRESH-INTERVAL;VALUE=DURATION:" + interval,
		"X-PUBLISHED-TTL:" + interval,
	}
	for _, e := range events {
		lines = append(lines,
			"BEGIN:VEVENT",
			"UID:"+e.ID.String()+"@clinic-booking",
			"DTSTAMP:"+e.Changed.UTC().Format(stamp),
			"DTSTART:"+e.Start.UTC().Format(stamp),
			"DTEND:"+e.End.UTC().Format(stamp),
			"SUMMARY:"+escape(e.Summary),
			"DESCRIPTION:"+escape(e.Description),
			"STATUS:CONFIRMED",
			"END:VEVENT",
		)
	}
	lines = append(lines, "END:VCALENDAR")
	return write(lines)
}

// formatMinutes is d in whole minutes, at least one.
func formatMinutes(d time.Duration) string { return strconv.Itoa(max(int(d/time.Minute), 1)) }

// write joins lines as iCalendar wants them: folded, each ended by CRLF.
func write(lines []string) string {
	var out strings.Builder
	for _, l := range lines {
		out.WriteString(fold(l))
		out.WriteString("\r\n")
	}
	return out.String()
}
