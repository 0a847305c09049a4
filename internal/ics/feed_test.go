package ics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/internal/ics/icstest"
)

// A subscribed calendar: its name and refresh interval, one event per
// booking with its instants in UTC, and the same bytes when nothing
// changed.
func TestFeed(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	changed := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	ev := ics.FeedEvent{ID: uuid.New(), Start: time.Date(2026, 3, 30, 9, 0, 0, 0, loc), End: time.Date(2026, 3, 30, 9, 30, 0, 0, loc),
		Summary: "Beratung – Müller, Anna; Dr.", Description: "Gebucht", Changed: changed}
	raw := ics.Feed("Praxis Mitte – Dr. Öztürk", []ics.FeedEvent{ev}, 90*time.Second)
	props := icstest.Parse(t, raw)
	cal := map[string]string{}
	for _, p := range props {
		if _, ok := cal[p.Name]; !ok {
			cal[p.Name] = p.Value
		}
	}
	if cal["X-WR-CALNAME"] != "Praxis Mitte – Dr. Öztürk" || cal["REFRESH-INTERVAL"] != "PT1M" || cal["X-PUBLISHED-TTL"] != "PT1M" {
		t.Errorf("calendar properties: %v", cal)
	}
	got := icstest.Event(t, raw)
	if got["DTSTART"] != "20260330T070000Z" || got["DTEND"] != "20260330T073000Z" || got["DTSTAMP"] != "20260301T080000Z" {
		t.Errorf("event instants: %v", got)
	}
	if icstest.Unescape(got["SUMMARY"]) != ev.Summary || got["STATUS"] != "CONFIRMED" {
		t.Errorf("event: %v", got)
	}
	if again := ics.Feed("Praxis Mitte – Dr. Öztürk", []ics.FeedEvent{ev}, 90*time.Second); again != raw {
		t.Error("the same bookings give other bytes: every refresh would be a change")
	}
	empty := ics.Feed("x", nil, time.Minute)
	if strings.Contains(empty, "VEVENT") || !strings.HasSuffix(empty, "END:VCALENDAR\r\n") {
		t.Errorf("an empty calendar: %q", empty)
	}
}
