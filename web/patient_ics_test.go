package web_test

// The "add to calendar" download of the manage page: the file package ics
// writes (its own tests check the lines and the instants), served to
// whoever holds the link.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/internal/ics/icstest"
)

// The calendar file readers the web tests share.
var (
	icsEvent    = icstest.Event
	icsTime     = icstest.Time
	icsUnescape = icstest.Unescape
)

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
	// Byte for byte the file ics.Calendar writes, the one the e-mails attach.
	id, err := uuid.Parse(strings.TrimSuffix(ev["UID"], "@clinic-booking"))
	if err != nil {
		t.Fatalf("UID %q: %v", ev["UID"], err)
	}
	b := booking.Booking{ID: id, Start: start.UTC(), End: start.Add(30 * time.Minute).UTC(), Status: booking.StatusConfirmed}
	cc := clinics.Clinic{Name: c.Name, Address: c.Address, Timezone: c.Timezone, Language: c.Language}
	if want := ics.Calendar(b, typ.Name, sp.Name, cc, icsTime(t, ev, "DTSTAMP")); r.Body != want {
		t.Errorf("the download is not ics.Calendar's file:\n%q\nwant\n%q", r.Body, want)
	}
}
