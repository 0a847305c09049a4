package letters

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/views"
)

// Waitlist is a patient's place on the waitlist, as its letters show it.
type Waitlist struct {
	Patient  string // the name they gave, for the greeting
	TypeName string // the appointment type they wait for
	// TypeTexts are the type's name in other languages than TypeName's.
	TypeTexts  clinics.Translations
	Specialist string    // the one they wait for; empty: any specialist
	From, To   time.Time // the days they can come, as dates (the date in the time's own location counts)
	Times      []string  // parts of the day, "morning", "afternoon", "evening"; none: any time
	URL        string    // the absolute link: the place's page, or for an offer the offer's page
	// Unconfirmed: the place waits for its patient to confirm it, which
	// the letter of the place taken asks them to do (on the link's page).
	Unconfirmed bool
}

// typeIn is the type waited for as a letter in lang names it.
func (p Waitlist) typeIn(lang string) string { return p.TypeTexts.Name(lang, p.TypeName) }

// Offer is a time offered to a patient waiting.
type Offer struct {
	Start, End time.Time // instants; the letter shows them in the clinic's zone
	Specialist string    // who the time is with
	Until      time.Time // the instant the offer ends and passes to the next patient
}

// partsOfDay are the parts of the day an entry may name, in the order a
// letter lists them, each with its message.
var partsOfDay = []struct{ name, key string }{
	{"morning", "mail.waitlist.morning"},
	{"afternoon", "mail.waitlist.afternoon"},
	{"evening", "mail.waitlist.evening"},
}

func (w writer) waitlistJoined() (views.EmailVM, error) {
	p := w.in.Waitlist
	if p.URL == "" {
		return views.EmailVM{}, errNoLink
	}
	facts := []views.EmailFact{
		{Label: w.l.T("mail.what", nil), Value: p.typeIn(w.l.Lang())},
		{Label: w.l.T("mail.with", nil), Value: w.anySpecialist(p.Specialist)},
		{Label: w.l.T("mail.waitlist.days", nil), Value: w.days(p.From, p.To)},
	}
	if times := w.partsOfDay(p.Times); times != "" {
		facts = append(facts, views.EmailFact{Label: w.l.T("mail.waitlist.times", nil), Value: times})
	}
	facts = append(facts, views.EmailFact{Label: w.l.T("mail.where", nil), Value: w.place()})
	if p.Unconfirmed {
		return views.EmailVM{
			Title:      w.l.T("mail.waitlist_joined.subject", map[string]any{"Type": p.typeIn(w.l.Lang())}),
			Heading:    w.l.T("mail.waitlist_confirm.heading", nil),
			Greeting:   w.greeting(p.Patient),
			Paragraphs: []string{w.l.T("mail.waitlist_confirm.intro", w.clinicData()), w.l.T("mail.waitlist_confirm.within", nil)},
			Facts:      facts,
			Action:     views.EmailAction{Label: w.l.T("mail.waitlist_confirm.action", nil), URL: p.URL},
			After: []string{w.l.T("mail.waitlist_joined.nothing_booked", nil), w.l.T("mail.waitlist_confirm.not_you", nil),
				w.l.T("mail.waitlist_joined.private", nil)},
		}, nil
	}
	return views.EmailVM{
		Title:      w.l.T("mail.waitlist_joined.subject", map[string]any{"Type": p.typeIn(w.l.Lang())}),
		Heading:    w.l.T("mail.waitlist_joined.heading", nil),
		Greeting:   w.greeting(p.Patient),
		Paragraphs: []string{w.l.T("mail.waitlist_joined.intro", w.clinicData())},
		Facts:      facts,
		Action:     views.EmailAction{Label: w.l.T("mail.waitlist_joined.action", nil), URL: p.URL},
		After:      []string{w.l.T("mail.waitlist_joined.nothing_booked", nil), w.l.T("mail.waitlist_joined.private", nil)},
	}, nil
}

func (w writer) waitlistOffer() (views.EmailVM, error) {
	p, o := w.in.Waitlist, w.in.Offer
	if p.URL == "" {
		return views.EmailVM{}, errNoLink
	}
	if o == nil || o.Start.IsZero() || o.Until.IsZero() {
		return views.EmailVM{}, errNoOffer
	}
	return views.EmailVM{
		Title:    w.l.T("mail.waitlist_offer.subject", w.dayTime(o.Start)),
		Heading:  w.l.T("mail.waitlist_offer.heading", nil),
		Greeting: w.greeting(p.Patient),
		Paragraphs: []string{
			w.l.T("mail.waitlist_offer.intro", w.clinicData()),
			w.l.T("mail.waitlist_offer.until", map[string]any{"Until": w.until(o.Until)}),
		},
		Facts: []views.EmailFact{
			{Label: w.l.T("mail.what", nil), Value: p.typeIn(w.l.Lang())},
			{Label: w.l.T("mail.with", nil), Value: o.Specialist},
			{Label: w.l.T("mail.when", nil), Value: w.span(o.Start, o.End)},
			{Label: w.l.T("mail.where", nil), Value: w.place()},
		},
		Action: views.EmailAction{Label: w.l.T("mail.waitlist_offer.action", nil), URL: p.URL},
		After:  []string{w.l.T("mail.waitlist_offer.after", nil), w.l.T("mail.waitlist_offer.private", nil)},
	}, nil
}

func (w writer) waitlistWithdrawn() (views.EmailVM, error) {
	p, o := w.in.Waitlist, w.in.Offer
	if p.URL == "" {
		return views.EmailVM{}, errNoLink
	}
	if o == nil || o.Start.IsZero() {
		return views.EmailVM{}, errNoOffer
	}
	return views.EmailVM{
		Title:      w.l.T("mail.waitlist_withdrawn.subject", w.dayTime(o.Start)),
		Heading:    w.l.T("mail.waitlist_withdrawn.heading", nil),
		Greeting:   w.greeting(p.Patient),
		Paragraphs: []string{w.l.T("mail.waitlist_withdrawn.intro", w.clinicData()), w.l.T("mail.waitlist_withdrawn.keep", nil)},
		Facts: []views.EmailFact{
			{Label: w.l.T("mail.what", nil), Value: p.typeIn(w.l.Lang())},
			{Label: w.l.T("mail.with", nil), Value: o.Specialist},
			{Label: w.l.T("mail.when", nil), Value: w.span(o.Start, o.End)},
		},
		Action: views.EmailAction{Label: w.l.T("mail.waitlist_joined.action", nil), URL: p.URL},
		After:  []string{w.l.T("mail.waitlist_joined.private", nil)},
	}, nil
}

// anySpecialist is the specialist waited for, or "any specialist".
func (w writer) anySpecialist(name string) string {
	if strings.TrimSpace(name) == "" {
		return w.l.T("mail.waitlist.any_specialist", nil)
	}
	return name
}

// date is a day as a letter names it: "Tuesday 1 December 2026",
// "Dienstag, 1. Dezember 2026". The date is the one t has where it is.
func (w writer) date(t time.Time) string {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return w.l.LongDay(d) + " " + strconv.Itoa(d.Year())
}

// days is the range of days waited for, or the one day.
func (w writer) days(from, to time.Time) string {
	if from.Year() == to.Year() && from.YearDay() == to.YearDay() {
		return w.date(from)
	}
	return w.l.T("mail.waitlist.days_range", map[string]any{"From": w.date(from), "To": w.date(to)})
}

// partsOfDay lists the parts of the day waited for with their hours, in
// the clinic's zone and naming it; "" when any time will do.
func (w writer) partsOfDay(times []string) string {
	var out []string
	for _, p := range partsOfDay {
		if slices.Contains(times, p.name) {
			out = append(out, w.l.T(p.key, nil))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, ", ") + " (" + w.zone() + ")"
}

// span is a time from start to end: "Tuesday 1 December 2026, 09:30–10:00
// (Europe/Berlin)".
func (w writer) span(start, end time.Time) string {
	s := w.l.LongDateTime(start.In(w.loc))
	if end.After(start) {
		s += "–" + w.l.Time(end.In(w.loc))
	}
	return s + " (" + w.zone() + ")"
}

// until is when an offer ends: "09:45 (Europe/Berlin)", with the day in
// front when that is not the day the letter is written.
func (w writer) until(t time.Time) string {
	local, now := t.In(w.loc), w.in.Now.In(w.loc)
	s := w.l.Time(local)
	if local.Year() != now.Year() || local.YearDay() != now.YearDay() {
		s = w.l.Day(local) + ", " + s
	}
	return s + " (" + w.zone() + ")"
}
