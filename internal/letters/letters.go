// Package letters writes the e-mails to patients: how each reads and looks,
// in English or German, with its times in the clinic's zone. Sending them
// is someone else's job; Compose only turns what a letter is about into a
// subject, a plain-text part, an HTML part and its attachments.
//
// Both parts come from one model (views.EmailVM): the HTML part is a templ
// component, the text part is written by plainText.
package letters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/views"
)

// Kind is what a letter tells the patient.
type Kind string

// The letters there are.
const (
	Confirmation Kind = "confirmation" // a booking was made
	Reminder     Kind = "reminder"     // a booking is soon
	Change       Kind = "change"       // a booking moved to another time
	Cancellation Kind = "cancellation" // a booking was cancelled
	Lookup       Kind = "lookup"       // the upcoming bookings of an e-mail address
	// The waitlist's.
	WaitlistJoined Kind = "waitlist_joined" // a patient took a place on the waitlist
	WaitlistOffer  Kind = "waitlist_offer"  // a time is offered to a patient waiting
	// WaitlistWithdrawn: an offered time closed before it was taken; the
	// patient keeps their place.
	WaitlistWithdrawn Kind = "waitlist_withdrawn"
)

// Appointment is a booking with the names a letter shows.
type Appointment struct {
	Booking    booking.Booking // Start and End are instants; the letter shows them in the clinic's zone
	TypeName   string
	Specialist string
	// TypeTexts are the type's name in other languages than TypeName's.
	TypeTexts clinics.Translations
}

// typeIn is the appointment's type as a letter in lang names it.
func (a Appointment) typeIn(lang string) string { return a.TypeTexts.Name(lang, a.TypeName) }

// Listed is one appointment of a Lookup letter, with its own manage link.
type Listed struct {
	Appointment Appointment
	ManageURL   string
}

// Input is everything a letter says.
type Input struct {
	Kind        Kind
	Language    string         // "en" or "de"; any other gets English
	Clinic      clinics.Clinic // its Timezone must be an IANA zone
	Appointment Appointment    // the booking concerned; for Change the new one
	Previous    *Appointment   // Change: the booking before the move
	Reason      string         // Change, Cancellation: the reason staff gave, or empty
	ManageURL   string         // Confirmation, Reminder, Change: the absolute manage link
	BookURL     string         // Cancellation: the clinic's booking page (no button when empty)
	PrivacyURL  string         // every letter: the clinic's privacy page, linked from the footer (none when empty)
	List        []Listed       // Lookup: the upcoming bookings; Series, SeriesCancellation: the sessions; at least one
	Waitlist    Waitlist       // WaitlistJoined, WaitlistOffer, WaitlistWithdrawn: the place on the waitlist
	Offer       *Offer         // WaitlistOffer, WaitlistWithdrawn: the time offered
	Now         time.Time      // when the letter is written: the .ics DTSTAMP, and "today"/"tomorrow" of a reminder
}

// Attachment is a file the letter carries.
type Attachment struct {
	Name, ContentType string
	Data              []byte
}

// Letter is a composed e-mail.
type Letter struct {
	Subject, Text, HTML string
	Attachments         []Attachment
}

// ICSContentType is the calendar attachment's content type.
const ICSContentType = "text/calendar; method=PUBLISH; charset=utf-8"

// ICSName is the calendar attachment's file name, the one the manage
// page's download has.
const ICSName = "appointment.ics"

// Compose writes the letter in.Kind says. It fails on an unknown kind, a
// clinic zone that is not an IANA zone, or an input that lacks what its
// kind needs (a Change without Previous, a Lookup without bookings, a
// missing manage link, a waitlist letter without its link, an offer
// without its time).
func Compose(in Input) (Letter, error) {
	loc, err := clinicZone(in.Clinic.Timezone)
	if err != nil {
		return Letter{}, err
	}
	w := writer{in: in, l: i18n.For(in.Language), loc: loc}
	var vm views.EmailVM
	switch in.Kind {
	case Confirmation:
		vm, err = w.confirmation()
	case Reminder:
		vm, err = w.reminder()
	case Change:
		vm, err = w.change()
	case Cancellation:
		vm, err = w.cancellation()
	case Lookup:
		vm, err = w.lookup()
	case WaitlistJoined:
		vm, err = w.waitlistJoined()
	case WaitlistOffer:
		vm, err = w.waitlistOffer()
	case WaitlistWithdrawn:
		vm, err = w.waitlistWithdrawn()
	case Series:
		vm, err = w.series()
	case SeriesCancellation:
		vm, err = w.seriesCancellation()
	default:
		return Letter{}, fmt.Errorf("letters: unknown kind %q", in.Kind)
	}
	if err != nil {
		return Letter{}, fmt.Errorf("letters: %s: %w", in.Kind, err)
	}
	vm.Lang = w.l.Lang()
	vm.Title = oneLine(vm.Title)
	vm.Footer = w.footer()
	html, err := renderHTML(vm)
	if err != nil {
		return Letter{}, fmt.Errorf("letters: %s: %w", in.Kind, err)
	}
	letter := Letter{Subject: vm.Title, Text: plainText(vm), HTML: html}
	if in.Kind == Confirmation || in.Kind == Reminder || in.Kind == Change {
		letter.Attachments = []Attachment{w.calendar(in.Appointment)}
	}
	if in.Kind == Series {
		letter.Attachments = []Attachment{w.seriesCalendar()}
	}
	return letter, nil
}

// clinicZone loads an IANA zone; the empty name and "Local", which
// time.LoadLocation accepts, name no clinic's zone.
func clinicZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("letters: the clinic's time zone %q is not an IANA zone", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("letters: the clinic's time zone: %w", err)
	}
	return loc, nil
}

var (
	errNoManageURL = errors.New("no manage link")
	errNoPrevious  = errors.New("no previous booking")
	errEmptyList   = errors.New("no bookings to list")
	errNoLink      = errors.New("no link to the waitlist place")
	errNoOffer     = errors.New("no offered time")
)

func renderHTML(vm views.EmailVM) (string, error) {
	var buf bytes.Buffer
	if err := views.Email(vm).Render(context.Background(), &buf); err != nil {
		return "", fmt.Errorf("render the HTML part: %w", err)
	}
	return buf.String(), nil
}

// oneLine keeps a subject on one header line: control characters, line
// breaks among them, become spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)), " ")
}

// writer writes one letter's model in one language and zone.
type writer struct {
	in  Input
	l   *i18n.Localizer
	loc *time.Location
}

// when is the instant as the letter shows it: "Tuesday 1 December 2026,
// 09:30 (Berlin time)".
func (w writer) when(t time.Time) string {
	return w.l.LongDateTime(t.In(w.loc)) + " (" + w.zone() + ")"
}

// zone is the clinic's zone as the letter's language says it: "Berlin
// time", "Berliner Zeit".
func (w writer) zone() string { return w.l.Zone(w.loc.String()) }

// dayTime fills a subject's {{.Day}} and {{.Time}}: "Tue 1 Dec", "09:30".
func (w writer) dayTime(t time.Time) map[string]any {
	local := t.In(w.loc)
	return map[string]any{"Day": w.l.Day(local), "Time": w.l.Time(local)}
}

func (w writer) clinicData() map[string]any {
	return map[string]any{"Clinic": w.in.Clinic.Name}
}

// greeting names the patient the booking is for.
func (w writer) greeting(name string) string {
	if name = strings.TrimSpace(name); name == "" {
		return w.l.T("mail.greeting.anonymous", nil)
	}
	return w.l.T("mail.greeting", map[string]any{"Name": name})
}

// place is the clinic's name and address.
func (w writer) place() string {
	if w.in.Clinic.Address == "" {
		return w.in.Clinic.Name
	}
	return w.in.Clinic.Name + ", " + w.in.Clinic.Address
}

// reason is the reason's row of the facts, when staff gave one.
func (w writer) reason() []views.EmailFact {
	r := strings.TrimSpace(w.in.Reason)
	if r == "" {
		return nil
	}
	return []views.EmailFact{{Label: w.l.T("mail.reason", nil), Value: r}}
}

func (w writer) footer() views.EmailFooter {
	c := w.in.Clinic
	var contact []string
	if c.ContactPhone != "" {
		contact = append(contact, w.l.T("mail.footer.phone", map[string]any{"Phone": c.ContactPhone}))
	}
	if c.ContactEmail != "" {
		contact = append(contact, w.l.T("mail.footer.email", map[string]any{"Email": c.ContactEmail}))
	}
	note := "mail.footer.note"
	if w.in.Kind == WaitlistJoined || w.in.Kind == WaitlistOffer || w.in.Kind == WaitlistWithdrawn {
		note = "mail.footer.note_waitlist"
	}
	f := views.EmailFooter{
		Name: c.Name, Address: c.Address, Contact: strings.Join(contact, " · "),
		Note: w.l.T(note, w.clinicData()),
	}
	if w.in.PrivacyURL != "" {
		f.Privacy = views.EmailAction{Label: w.l.T("mail.footer.privacy", nil), URL: w.in.PrivacyURL}
	}
	return f
}

// calendar is the .ics of a, the file the manage page serves.
func (w writer) calendar(a Appointment) Attachment {
	data := ics.Calendar(a.Booking, a.typeIn(w.in.Clinic.Language), a.Specialist, w.in.Clinic, w.in.Now)
	return Attachment{Name: ICSName, ContentType: ICSContentType, Data: []byte(data)}
}
