package ics_test

// The calendar file: valid iCalendar (RFC 5545) carrying the right
// instants across daylight-saving changes.

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/internal/ics/icstest"
)

func testBooking(start time.Time, minutes int) booking.Booking {
	return booking.Booking{
		ID: uuid.New(), ClinicID: uuid.New(), AppointmentTypeID: uuid.New(), SpecialistID: uuid.New(),
		Start: start.UTC(), End: start.Add(time.Duration(minutes) * time.Minute).UTC(),
		Status: booking.StatusConfirmed, Patient: booking.Patient{Name: "Ada Lovelace", Email: "ada@example.org"},
		Version: 1,
	}
}

var testClinic = clinics.Clinic{ID: uuid.New(), Slug: "praxis", Name: "Praxis Mitte", Timezone: "Europe/Berlin", Address: "Hauptstraße 5, 10827 Berlin"}

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestCalendarHasTheRequiredProperties(t *testing.T) {
	t.Parallel()
	b := testBooking(time.Date(2026, 6, 16, 10, 30, 0, 0, berlin(t)), 30)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	raw := ics.Calendar(b, "Consultation", "Dr. Müller", testClinic, now)
	ev := icstest.Event(t, raw)
	if ev["UID"] != b.ID.String()+"@clinic-booking" {
		t.Errorf("UID %q: want the booking's id, globally unique", ev["UID"])
	}
	if got := icstest.Time(t, ev, "DTSTAMP"); !got.Equal(now) {
		t.Errorf("DTSTAMP %v, want %v", got, now)
	}
	if got := icstest.Time(t, ev, "DTSTART"); !got.Equal(b.Start) || ev["DTSTART"] != "20260616T083000Z" {
		t.Errorf("DTSTART %q, want 20260616T083000Z", ev["DTSTART"])
	}
	if got := icstest.Time(t, ev, "DTEND"); !got.Equal(b.End) || ev["DTEND"] != "20260616T090000Z" {
		t.Errorf("DTEND %q, want 20260616T090000Z", ev["DTEND"])
	}
	if s := icstest.Unescape(ev["SUMMARY"]); s != "Consultation with Dr. Müller" {
		t.Errorf("SUMMARY %q", s)
	}
	if l := icstest.Unescape(ev["LOCATION"]); l != "Praxis Mitte, Hauptstraße 5, 10827 Berlin" {
		t.Errorf("LOCATION %q", l)
	}
	if strings.Contains(ev["LOCATION"], ", ") && !strings.Contains(ev["LOCATION"], `\, `) {
		t.Errorf("LOCATION commas are not escaped: %q", ev["LOCATION"])
	}
	if ev["STATUS"] != "CONFIRMED" {
		t.Errorf("STATUS %q", ev["STATUS"])
	}
	if strings.Contains(raw, "Ada") || strings.Contains(raw, "ada@example.org") {
		t.Error("the calendar file carries the patient's details")
	}
	cancelled := b
	cancelled.Status = booking.StatusCancelled
	if ev := icstest.Event(t, ics.Calendar(cancelled, "Consultation", "Dr. Müller", testClinic, now)); ev["STATUS"] != "CANCELLED" {
		t.Errorf("cancelled booking STATUS %q", ev["STATUS"])
	}
}

// The file speaks the clinic's language.
func TestCalendarInTheClinicsLanguage(t *testing.T) {
	t.Parallel()
	de := testClinic
	de.Language = "de"
	b := testBooking(time.Date(2026, 6, 16, 10, 30, 0, 0, berlin(t)), 30)
	ev := icstest.Event(t, ics.Calendar(b, "Beratung", "Dr. Müller", de, time.Now()))
	if s := icstest.Unescape(ev["SUMMARY"]); s != "Beratung bei Dr. Müller" {
		t.Errorf("SUMMARY %q, want German", s)
	}
	if d := icstest.Unescape(ev["DESCRIPTION"]); !strings.Contains(d, "Zeitzone") || !strings.Contains(d, "Berliner Zeit") {
		t.Errorf("DESCRIPTION %q, want German naming the zone", d)
	}
}

func TestCalendarInstantsAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	loc := berlin(t)
	// Europe/Berlin springs forward on Sunday 2026-03-29 (02:00 CET -> 03:00
	// CEST) and falls back on Sunday 2026-10-25.
	for _, tc := range []struct {
		local      time.Time
		start, end string
	}{
		{time.Date(2026, 3, 28, 9, 0, 0, 0, loc), "20260328T080000Z", "20260328T083000Z"},
		{time.Date(2026, 3, 29, 9, 0, 0, 0, loc), "20260329T070000Z", "20260329T073000Z"},
		{time.Date(2026, 3, 30, 9, 0, 0, 0, loc), "20260330T070000Z", "20260330T073000Z"},
		{time.Date(2026, 10, 24, 9, 0, 0, 0, loc), "20261024T070000Z", "20261024T073000Z"},
		{time.Date(2026, 10, 26, 9, 0, 0, 0, loc), "20261026T080000Z", "20261026T083000Z"},
	} {
		ev := icstest.Event(t, ics.Calendar(testBooking(tc.local, 30), "Consultation", "Dr. A", testClinic, time.Now()))
		if ev["DTSTART"] != tc.start || ev["DTEND"] != tc.end {
			t.Errorf("%s local: DTSTART %s DTEND %s, want %s %s", tc.local.Format("2006-01-02 15:04 MST"), ev["DTSTART"], ev["DTEND"], tc.start, tc.end)
		}
		if !icstest.Time(t, ev, "DTSTART").Equal(tc.local) {
			t.Errorf("%s: DTSTART is another instant", tc.local)
		}
	}
}

// Long values are folded at 75 octets, counting the leading space of a
// continuation line, without splitting a UTF-8 character, and unfold back
// to exactly what was escaped.
func TestCalendarFoldsLongLinesWithin75Octets(t *testing.T) {
	t.Parallel()
	long := testClinic
	long.Name = "Gemeinschaftspraxis für Allgemeinmedizin, Kinderheilkunde und Naturheilverfahren Dr. Öztürk & Kollegen"
	long.Address = "Große Hamburger Straße 123–125, Hinterhaus, 3. Obergeschoß; Aufzug vorhanden, 10115 Berlin-Mitte"
	typeName := "Ausführliche Erstuntersuchung mit Blutabnahme, Ultraschall und ärztlichem Abschlussgespräch"
	spec := "Prof. Dr. med. Jürgen Weißmüller-Schönfeld"
	b := testBooking(time.Date(2026, 5, 5, 7, 0, 0, 0, time.UTC), 90)
	raw := ics.Calendar(b, typeName, spec, long, time.Now())
	ev := icstest.Event(t, raw) // checks every physical line is at most 75 octets
	if got := icstest.Unescape(ev["SUMMARY"]); got != typeName+" with "+spec {
		t.Errorf("SUMMARY unfolds to %q", got)
	}
	if got := icstest.Unescape(ev["LOCATION"]); got != long.Name+", "+long.Address {
		t.Errorf("LOCATION unfolds to %q", got)
	}
	if !strings.Contains(ev["LOCATION"], `\;`) {
		t.Errorf("LOCATION semicolon not escaped: %q", ev["LOCATION"])
	}
	// Every value longer than one line must have been folded, not cut.
	if !strings.Contains(raw, "\r\n ") {
		t.Error("nothing was folded")
	}
}
