package letters_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/internal/ics/icstest"
	"github.com/clinic/booking/internal/letters"
)

// A name a patient may type, which neither part may turn into markup.
const nasty = `<b>Tom & "Jerry"</b>`

// The links carry an "&", which the HTML part writes as "&amp;" and the
// text part as it is.
const (
	manageURL = "https://clinic.example/manage/tok-123?lang=de&from=mail"
	bookURL   = "https://clinic.example/c/praxis-mitte?from=mail&x=1"
)

var (
	clinic = clinics.Clinic{
		ID: uuid.New(), Slug: "praxis-mitte", Name: "Praxis Mitte", Address: "Hauptstraße 5, 10827 Berlin",
		Timezone: "Europe/Berlin", Language: "de", ContactPhone: "+49 30 1234567", ContactEmail: "praxis@example.org",
	}
	// 09:30 in Berlin (CET, UTC+1), and 09:00 the day after the clocks
	// went forward (CEST, UTC+2).
	december = time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC)
	spring   = time.Date(2027, 3, 29, 7, 0, 0, 0, time.UTC)
	now      = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	allKinds = []letters.Kind{letters.Confirmation, letters.Reminder, letters.Change, letters.Cancellation, letters.Lookup}
	// everyKind adds the waitlist's letters, which tell of no booking.
	everyKind = append(slices.Clone(allKinds), letters.WaitlistJoined, letters.WaitlistOffer)
)

func appointment(start time.Time, patient string) letters.Appointment {
	return letters.Appointment{
		Booking: booking.Booking{
			ID: uuid.New(), ClinicID: clinic.ID, AppointmentTypeID: uuid.New(), SpecialistID: uuid.New(),
			Start: start, End: start.Add(30 * time.Minute), Status: booking.StatusConfirmed,
			Patient: booking.Patient{Name: patient, Email: "tom@example.org", Phone: "+49 170 5550101"},
			Version: 1,
		},
		TypeName: "Consultation", Specialist: "Dr. Müller",
	}
}

// input is a letter of kind about an appointment at start, with
// everything any kind needs.
func input(kind letters.Kind, lang string, start time.Time) letters.Input {
	a := appointment(start, nasty)
	prev := appointment(start.Add(-72*time.Hour), nasty)
	return letters.Input{
		Kind: kind, Language: lang, Clinic: clinic, Appointment: a, Previous: &prev,
		ManageURL: manageURL, BookURL: bookURL, Now: now,
		List:     []letters.Listed{{Appointment: a, ManageURL: manageURL}},
		Waitlist: place(start),
		Offer:    &letters.Offer{Start: start, End: start.Add(30 * time.Minute), Specialist: "Dr. Müller", Until: now.Add(15 * time.Minute)},
	}
}

// place is a place on the waitlist for the days from start's to ten days
// later, mornings and evenings, with the letter's link.
func place(start time.Time) letters.Waitlist {
	from := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	return letters.Waitlist{
		Patient: nasty, TypeName: "Consultation", Specialist: "Dr. Müller",
		From: from, To: from.AddDate(0, 0, 10), Times: []string{"evening", "morning"}, URL: manageURL,
	}
}

func compose(t *testing.T, in letters.Input) letters.Letter {
	t.Helper()
	l, err := letters.Compose(in)
	if err != nil {
		t.Fatalf("%s in %q: %v", in.Kind, in.Language, err)
	}
	return l
}

// doc parses the HTML part.
func doc(t *testing.T, l letters.Letter) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(l.HTML))
	if err != nil {
		t.Fatalf("the HTML part does not parse: %v", err)
	}
	return d
}

// hrefs are the HTML part's link targets, unescaped.
func hrefs(d *goquery.Document) []string {
	var out []string
	d.Find("a[href]").Each(func(_ int, s *goquery.Selection) {
		h, _ := s.Attr("href")
		out = append(out, h)
	})
	return out
}

// Every kind, in both languages, at both instants: the time in the
// clinic's zone with the zone named, in the subject (not the list's),
// the text and the HTML part, and the letter's link in both parts.
func TestEveryKindShowsTheLocalTimeAndTheLink(t *testing.T) {
	t.Parallel()
	cases := []struct {
		lang     string
		start    time.Time
		when     string // as the body shows it
		day, clk string // as the subject shows it
	}{
		{"en", december, "Tuesday 1 December 2026, 09:30 (Berlin time)", "Tue 1 Dec", "09:30"},
		{"de", december, "Dienstag, 1. Dezember 2026, 09:30 (Berliner Zeit)", "Di., 1. Dez.", "09:30"},
		{"en", spring, "Monday 29 March 2027, 09:00 (Berlin time)", "Mon 29 Mar", "09:00"},
		{"de", spring, "Montag, 29. März 2027, 09:00 (Berliner Zeit)", "Mo., 29. März", "09:00"},
	}
	for _, c := range cases {
		for _, kind := range allKinds {
			l := compose(t, input(kind, c.lang, c.start))
			name := string(kind) + "/" + c.lang + "/" + c.start.Format(time.DateOnly)
			if kind != letters.Lookup && !(strings.Contains(l.Subject, c.day) && strings.Contains(l.Subject, c.clk)) {
				t.Errorf("%s: subject %q does not name %q at %q", name, l.Subject, c.day, c.clk)
			}
			if !strings.Contains(l.Text, c.when) {
				t.Errorf("%s: the text part does not say %q:\n%s", name, c.when, l.Text)
			}
			d := doc(t, l)
			if !strings.Contains(d.Text(), c.when) {
				t.Errorf("%s: the HTML part does not say %q", name, c.when)
			}
			link := manageURL
			if kind == letters.Cancellation {
				link = bookURL
			}
			if !slices.Contains(trimmedLines(l.Text), link) {
				t.Errorf("%s: the text part does not have %s on a line of its own", name, link)
			}
			if !slices.Contains(hrefs(d), link) {
				t.Errorf("%s: the HTML part does not link %s (links %q)", name, link, hrefs(d))
			}
			if lang, _ := d.Find("html").Attr("lang"); lang != c.lang {
				t.Errorf("%s: <html lang=%q>", name, lang)
			}
		}
	}
}

func textLines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// trimmedLines are the text part's lines without their indentation.
func trimmedLines(s string) []string {
	lines := textLines(s)
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}

// The subjects read as a person would write them.
func TestSubjects(t *testing.T) {
	t.Parallel()
	want := map[letters.Kind][2]string{
		letters.Confirmation:   {"Your appointment on Tue 1 Dec at 09:30 is booked", "Ihr Termin am Di., 1. Dez. um 09:30 ist gebucht"},
		letters.Reminder:       {"Reminder: your appointment on Tue 1 Dec at 09:30", "Erinnerung: Ihr Termin am Di., 1. Dez. um 09:30"},
		letters.Change:         {"Your appointment has moved to Tue 1 Dec at 09:30", "Ihr Termin wurde auf Di., 1. Dez. um 09:30 verschoben"},
		letters.Cancellation:   {"Your appointment on Tue 1 Dec at 09:30 is cancelled", "Ihr Termin am Di., 1. Dez. um 09:30 ist abgesagt"},
		letters.Lookup:         {"Your appointments at Praxis Mitte", "Ihre Termine bei Praxis Mitte"},
		letters.WaitlistJoined: {"You are on the waitlist for Consultation", "Sie stehen auf der Warteliste für Consultation"},
		letters.WaitlistOffer:  {"A time is free for you on Tue 1 Dec at 09:30", "Ein Termin ist für Sie frei: Di., 1. Dez. um 09:30"},
	}
	for _, kind := range everyKind {
		for i, lang := range []string{"en", "de"} {
			l := compose(t, input(kind, lang, december))
			if l.Subject != want[kind][i] {
				t.Errorf("%s in %s: subject %q, want %q", kind, lang, l.Subject, want[kind][i])
			}
			if title := doc(t, l).Find("title").Text(); title != l.Subject {
				t.Errorf("%s in %s: <title> %q, want the subject", kind, lang, title)
			}
		}
	}
}

// Confirmation, reminder and change carry the booking's .ics, the very
// file the manage page serves; cancellation and the list carry none.
func TestCalendarAttachment(t *testing.T) {
	t.Parallel()
	for _, start := range []time.Time{december, spring} {
		for _, kind := range everyKind {
			in := input(kind, "en", start)
			l := compose(t, in)
			if kind != letters.Confirmation && kind != letters.Reminder && kind != letters.Change {
				if len(l.Attachments) != 0 {
					t.Errorf("%s: %d attachments, want none", kind, len(l.Attachments))
				}
				continue
			}
			if len(l.Attachments) != 1 {
				t.Fatalf("%s: %d attachments, want the .ics", kind, len(l.Attachments))
			}
			att := l.Attachments[0]
			if att.Name != "appointment.ics" || att.ContentType != "text/calendar; method=PUBLISH; charset=utf-8" {
				t.Errorf("%s: attachment %q of type %q", kind, att.Name, att.ContentType)
			}
			ev := icstest.Event(t, string(att.Data))
			if got := icstest.Time(t, ev, "DTSTART"); !got.Equal(start) {
				t.Errorf("%s: DTSTART %s, want %s", kind, got, start)
			}
			if got := icstest.Time(t, ev, "DTSTAMP"); !got.Equal(now) {
				t.Errorf("%s: DTSTAMP %s, want the letter's Now %s", kind, got, now)
			}
			a := in.Appointment
			want := ics.Calendar(a.Booking, a.TypeName, a.Specialist, clinic, now)
			if !bytes.Equal(att.Data, []byte(want)) {
				t.Errorf("%s: the attachment is not ics.Calendar's file:\n%s", kind, att.Data)
			}
		}
	}
}

// Names, types and reasons are what people typed: the HTML part escapes
// them, the text part keeps them exactly, with no entities.
func TestUntrustedTextEscapedInHTMLKeptInText(t *testing.T) {
	t.Parallel()
	for _, kind := range everyKind {
		in := input(kind, "en", december)
		in.Appointment.TypeName = nasty
		in.List[0].Appointment.TypeName = nasty
		in.Waitlist.TypeName = nasty
		in.Reason = nasty
		l := compose(t, in)
		if strings.Contains(l.HTML, "<b>") || !strings.Contains(l.HTML, "&lt;b&gt;Tom &amp; &#34;Jerry&#34;&lt;/b&gt;") {
			t.Errorf("%s: the HTML part does not escape %s", kind, nasty)
		}
		if strings.Contains(l.HTML, "&y=") || strings.Contains(l.HTML, "lang=de&from") {
			t.Errorf("%s: a link's & is not escaped in the HTML part", kind)
		}
		if !strings.Contains(doc(t, l).Text(), nasty) {
			t.Errorf("%s: the HTML part does not read %s", kind, nasty)
		}
		if !strings.Contains(l.Text, nasty) {
			t.Errorf("%s: the text part does not say %s literally:\n%s", kind, nasty, l.Text)
		}
		for _, entity := range []string{"&amp;", "&lt;", "&gt;", "&#", "&quot;"} {
			if strings.Contains(l.Text, entity) {
				t.Errorf("%s: the text part has the entity %s", kind, entity)
			}
		}
		if !strings.Contains(l.Text, "?lang=de&from=mail") && !strings.Contains(l.Text, "?from=mail&x=1") {
			t.Errorf("%s: the text part's link lost its &", kind)
		}
	}
}

// The HTML part is safe to open anywhere: no scripts, no style sheets,
// nothing fetched from elsewhere, every style inline.
func TestHTMLIsSelfContained(t *testing.T) {
	t.Parallel()
	for _, kind := range everyKind {
		l := compose(t, input(kind, "de", december))
		d := doc(t, l)
		for _, sel := range []string{"script", "style", "link", "img", "iframe", "object", "form", "[src]", "[class]"} {
			if n := d.Find(sel).Length(); n > 0 {
				t.Errorf("%s: the HTML part has %d %s", kind, n, sel)
			}
		}
		if strings.Contains(l.HTML, "url(") || strings.Contains(strings.ToLower(l.HTML), "javascript:") {
			t.Errorf("%s: the HTML part refers to something outside", kind)
		}
		if d.Find("table").Length() == 0 || d.Find("[style]").Length() < 5 {
			t.Errorf("%s: not a table layout with inline styles", kind)
		}
		if foot := d.Find("table table tr").Last().Text(); !strings.Contains(foot, clinic.Name) || !strings.Contains(foot, clinic.Address) {
			t.Errorf("%s: the footer %q does not name the clinic and its address", kind, foot)
		}
	}
}

// The text part wraps at 76 characters; only a line holding a link may
// be longer.
func TestTextWrapsExceptLinks(t *testing.T) {
	t.Parallel()
	long := clinic
	long.Name = "Gemeinschaftspraxis für Allgemeinmedizin, Kinderheilkunde und Naturheilverfahren Dr. Öztürk & Kollegen"
	long.Address = "Große Hamburger Straße 123–125, Hinterhaus, 3. Obergeschoß, 10115 Berlin-Mitte"
	for _, kind := range everyKind {
		for _, lang := range []string{"en", "de"} {
			in := input(kind, lang, december)
			in.Clinic = long
			in.ManageURL = manageURL + "&pad=" + strings.Repeat("x", 80)
			in.List[0].ManageURL = in.ManageURL
			in.Waitlist.URL = in.ManageURL
			in.Reason = strings.Repeat("The specialist is ill today. ", 6)
			l := compose(t, in)
			if !strings.HasSuffix(l.Text, "\n") {
				t.Errorf("%s in %s: the text part does not end with a line break", kind, lang)
			}
			for _, line := range textLines(l.Text) {
				if utf8.RuneCountInString(line) > 76 && !strings.Contains(line, "://") {
					t.Errorf("%s in %s: line of %d characters: %q", kind, lang, utf8.RuneCountInString(line), line)
				}
			}
			if kind != letters.Cancellation && !slices.Contains(trimmedLines(l.Text), in.ManageURL) {
				t.Errorf("%s in %s: the long link is not written out whole", kind, lang)
			}
		}
	}
}
