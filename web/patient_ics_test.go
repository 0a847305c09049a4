package web_test

// The "add to calendar" file: valid iCalendar (RFC 5545) carrying the right
// instants across daylight-saving changes.

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/web"
)

// icsProp is one content line: NAME;PARAMS:VALUE.
type icsProp struct {
	Name, Params, Value string
}

// parseICS checks the physical lines (CRLF, at most 75 octets) and
// returns the unfolded content lines.
func parseICS(t *testing.T, raw string) []icsProp {
	t.Helper()
	if !strings.HasSuffix(raw, "\r\n") {
		t.Errorf("the file does not end with CRLF")
	}
	body := strings.TrimSuffix(raw, "\r\n")
	phys := strings.Split(body, "\r\n")
	var logical []string
	for i, l := range phys {
		if strings.ContainsAny(l, "\r\n") {
			t.Errorf("line %d has a bare CR or LF: %q", i+1, l)
		}
		if len(l) > 75 {
			t.Errorf("line %d is %d octets, more than 75: %q", i+1, len(l), l)
		}
		if !utf8.ValidString(l) {
			t.Errorf("line %d splits a UTF-8 character: %q", i+1, l)
		}
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			if len(logical) == 0 {
				t.Fatalf("the file starts with a continuation line")
			}
			logical[len(logical)-1] += l[1:]
			continue
		}
		logical = append(logical, l)
	}
	var out []icsProp
	for _, l := range logical {
		// The name and parameters end at the first ':' outside a quoted parameter value.
		inQuote, cut := false, -1
		for i, r := range l {
			if r == '"' {
				inQuote = !inQuote
			}
			if r == ':' && !inQuote {
				cut = i
				break
			}
		}
		if cut <= 0 {
			t.Errorf("content line without a name: %q", l)
			continue
		}
		name, params, _ := strings.Cut(l[:cut], ";")
		out = append(out, icsProp{Name: strings.ToUpper(name), Params: params, Value: l[cut+1:]})
	}
	return out
}

// icsUnescape undoes TEXT escaping.
func icsUnescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\;`, ";", `\,`, ",", `\n`, "\n", `\N`, "\n").Replace(s)
}

// icsEvent is the one VEVENT's properties (name -> value), checking the
// calendar's structure on the way.
func icsEvent(t *testing.T, raw string) map[string]string {
	t.Helper()
	props := parseICS(t, raw)
	if len(props) < 2 || props[0] != (icsProp{Name: "BEGIN", Value: "VCALENDAR"}) || props[len(props)-1] != (icsProp{Name: "END", Value: "VCALENDAR"}) {
		t.Fatalf("not a VCALENDAR: %+v", props)
	}
	cal := map[string]string{}
	ev := map[string]string{}
	depth, events := 0, 0
	for _, p := range props[1 : len(props)-1] {
		switch {
		case p.Name == "BEGIN":
			depth++
			if p.Value == "VEVENT" {
				events++
			}
		case p.Name == "END":
			depth--
		case depth == 0:
			cal[p.Name] = p.Value
		case depth == 1:
			if _, dup := ev[p.Name]; dup && p.Name != "ATTENDEE" {
				t.Errorf("property %s twice in the event", p.Name)
			}
			ev[p.Name] = p.Value
			if p.Params != "" {
				ev[p.Name+";"] = p.Params
			}
		}
	}
	if depth != 0 || events != 1 {
		t.Fatalf("want exactly one VEVENT and balanced BEGIN/END (events %d, depth %d)", events, depth)
	}
	if cal["VERSION"] != "2.0" || cal["PRODID"] == "" {
		t.Errorf("calendar VERSION %q PRODID %q", cal["VERSION"], cal["PRODID"])
	}
	return ev
}

// icsTime reads a UTC DATE-TIME ("20260330T070000Z").
func icsTime(t *testing.T, ev map[string]string, name string) time.Time {
	t.Helper()
	v := ev[name]
	if ev[name+";"] != "" {
		t.Errorf("%s has parameters %q; want a plain UTC value", name, ev[name+";"])
	}
	if !strings.HasSuffix(v, "Z") {
		t.Fatalf("%s = %q: want UTC (…Z)", name, v)
	}
	tm, err := time.Parse("20060102T150405Z", v)
	if err != nil {
		t.Fatalf("%s = %q: %v", name, v, err)
	}
	return tm
}

func icsBooking(start time.Time, minutes int) booking.Booking {
	return booking.Booking{
		ID: uuid.New(), ClinicID: uuid.New(), AppointmentTypeID: uuid.New(), SpecialistID: uuid.New(),
		Start: start.UTC(), End: start.Add(time.Duration(minutes) * time.Minute).UTC(),
		Status: booking.StatusConfirmed, Patient: booking.Patient{Name: "Ada Lovelace", Email: "ada@example.org"},
		Version: 1,
	}
}

var icsClinic = clinics.Clinic{ID: uuid.New(), Slug: "praxis", Name: "Praxis Mitte", Timezone: "Europe/Berlin", Address: "Hauptstraße 5, 10827 Berlin"}

func TestICSHasTheRequiredProperties(t *testing.T) {
	t.Parallel()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	b := icsBooking(time.Date(2026, 6, 16, 10, 30, 0, 0, berlin), 30)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	raw := web.ICS(b, "Consultation", "Dr. Müller", icsClinic, now)
	ev := icsEvent(t, raw)
	if ev["UID"] != b.ID.String()+"@clinic-booking" {
		t.Errorf("UID %q: want the booking's id, globally unique", ev["UID"])
	}
	if got := icsTime(t, ev, "DTSTAMP"); !got.Equal(now) {
		t.Errorf("DTSTAMP %v, want %v", got, now)
	}
	if got := icsTime(t, ev, "DTSTART"); !got.Equal(b.Start) || ev["DTSTART"] != "20260616T083000Z" {
		t.Errorf("DTSTART %q, want 20260616T083000Z", ev["DTSTART"])
	}
	if got := icsTime(t, ev, "DTEND"); !got.Equal(b.End) || ev["DTEND"] != "20260616T090000Z" {
		t.Errorf("DTEND %q, want 20260616T090000Z", ev["DTEND"])
	}
	if s := icsUnescape(ev["SUMMARY"]); s != "Consultation with Dr. Müller" {
		t.Errorf("SUMMARY %q", s)
	}
	if l := icsUnescape(ev["LOCATION"]); l != "Praxis Mitte, Hauptstraße 5, 10827 Berlin" {
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
	if ev := icsEvent(t, web.ICS(cancelled, "Consultation", "Dr. Müller", icsClinic, now)); ev["STATUS"] != "CANCELLED" {
		t.Errorf("cancelled booking STATUS %q", ev["STATUS"])
	}
}

func TestICSInstantsAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// Europe/Berlin springs forward on Sunday 2026-03-29 (02:00 CET -> 03:00
	// CEST) and falls back on Sunday 2026-10-25.
	for _, tc := range []struct {
		local      time.Time
		start, end string
	}{
		{time.Date(2026, 3, 28, 9, 0, 0, 0, berlin), "20260328T080000Z", "20260328T083000Z"},
		{time.Date(2026, 3, 29, 9, 0, 0, 0, berlin), "20260329T070000Z", "20260329T073000Z"},
		{time.Date(2026, 3, 30, 9, 0, 0, 0, berlin), "20260330T070000Z", "20260330T073000Z"},
		{time.Date(2026, 10, 24, 9, 0, 0, 0, berlin), "20261024T070000Z", "20261024T073000Z"},
		{time.Date(2026, 10, 26, 9, 0, 0, 0, berlin), "20261026T080000Z", "20261026T083000Z"},
	} {
		ev := icsEvent(t, web.ICS(icsBooking(tc.local, 30), "Consultation", "Dr. A", icsClinic, time.Now()))
		if ev["DTSTART"] != tc.start || ev["DTEND"] != tc.end {
			t.Errorf("%s local: DTSTART %s DTEND %s, want %s %s", tc.local.Format("2006-01-02 15:04 MST"), ev["DTSTART"], ev["DTEND"], tc.start, tc.end)
		}
		if !icsTime(t, ev, "DTSTART").Equal(tc.local) {
			t.Errorf("%s: DTSTART is another instant", tc.local)
		}
	}
}

// Long values are folded at 75 octets, counting the leading space of a
// continuation line, without splitting a UTF-8 character, and unfold back
// to exactly what was escaped.
func TestICSFoldsLongLinesWithin75Octets(t *testing.T) {
	t.Parallel()
	long := icsClinic
	long.Name = "Gemeinschaftspraxis für Allgemeinmedizin, Kinderheilkunde und Naturheilverfahren Dr. Öztürk & Kollegen"
	long.Address = "Große Hamburger Straße 123–125, Hinterhaus, 3. Obergeschoß; Aufzug vorhanden, 10115 Berlin-Mitte"
	typeName := "Ausführliche Erstuntersuchung mit Blutabnahme, Ultraschall und ärztlichem Abschlussgespräch"
	spec := "Prof. Dr. med. Jürgen Weißmüller-Schönfeld"
	b := icsBooking(time.Date(2026, 5, 5, 7, 0, 0, 0, time.UTC), 90)
	raw := web.ICS(b, typeName, spec, long, time.Now())
	ev := icsEvent(t, raw) // checks every physical line is at most 75 octets
	if got := icsUnescape(ev["SUMMARY"]); got != typeName+" with "+spec {
		t.Errorf("SUMMARY unfolds to %q", got)
	}
	if got := icsUnescape(ev["LOCATION"]); got != long.Name+", "+long.Address {
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

func TestICSDownloadThroughTheRouter(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(3, 9, 0)
	cl := a.newClient(t)
	token := bookViaPages(t, cl, c, typ, sp.ID, start, "Emmy Noether", "emmy@example.org")
	page := cl.Get("/manage/" + token).Want(http.StatusOK)
	href, _ := page.Doc().Find(`a[download]`).Attr("href")
	if href != "/manage/"+token+"/calendar.ics" {
		t.Fatalf("calendar link %q", href)
	}
	// Opened from another browser (a calendar app fetching the link).
	r := a.newClient(t).Get(href).Want(http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/calendar") {
		t.Errorf("Content-Type %q, want text/calendar", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, ".ics") {
		t.Errorf("Content-Disposition %q", cd)
	}
	ev := icsEvent(t, r.Body)
	if !icsTime(t, ev, "DTSTART").Equal(start) || !icsTime(t, ev, "DTEND").Equal(start.Add(30*time.Minute)) {
		t.Errorf("DTSTART %s DTEND %s, want %s", ev["DTSTART"], ev["DTEND"], start.UTC())
	}
	if s := icsUnescape(ev["SUMMARY"]); s != "Consultation with "+sp.Name {
		t.Errorf("SUMMARY %q", s)
	}
	if l := icsUnescape(ev["LOCATION"]); l != c.Name+", "+c.Address {
		t.Errorf("LOCATION %q", l)
	}
	if !strings.HasSuffix(ev["UID"], "@clinic-booking") || len(ev["UID"]) < 36 {
		t.Errorf("UID %q", ev["UID"])
	}
	icsTime(t, ev, "DTSTAMP")
}
