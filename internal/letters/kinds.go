package letters

import (
	"time"

	"github.com/clinic/booking/views"
)

// facts are what, with whom, when and where, the rows every letter about
// one booking starts with.
func (w writer) facts(a Appointment) []views.EmailFact {
	return []views.EmailFact{
		{Label: w.l.T("mail.what", nil), Value: a.typeIn(w.l.Lang())},
		{Label: w.l.T("mail.with", nil), Value: a.Specialist},
		{Label: w.l.T("mail.when", nil), Value: w.when(a.Booking.Start)},
		{Label: w.l.T("mail.where", nil), Value: w.place()},
	}
}

// manage is the button to the booking's manage page.
func (w writer) manage() (views.EmailAction, error) {
	if w.in.ManageURL == "" {
		return views.EmailAction{}, errNoManageURL
	}
	return views.EmailAction{Label: w.l.T("mail.manage", nil), URL: w.in.ManageURL}, nil
}

func (w writer) confirmation() (views.EmailVM, error) {
	a := w.in.Appointment
	action, err := w.manage()
	if err != nil {
		return views.EmailVM{}, err
	}
	return views.EmailVM{
		Title:      w.l.T("mail.confirmation.subject", w.dayTime(a.Booking.Start)),
		Heading:    w.l.T("mail.confirmation.heading", nil),
		Greeting:   w.greeting(a.Booking.Patient.Name),
		Paragraphs: []string{w.l.T("mail.confirmation.intro", w.clinicData())},
		Facts:      w.facts(a),
		Action:     action,
		After:      []string{w.l.T("mail.private", nil), w.l.T("mail.ics_attached", nil)},
	}, nil
}

func (w writer) reminder() (views.EmailVM, error) {
	a := w.in.Appointment
	action, err := w.manage()
	if err != nil {
		return views.EmailVM{}, err
	}
	return views.EmailVM{
		Title:      w.l.T("mail.reminder.subject", w.dayTime(a.Booking.Start)),
		Heading:    w.reminderHeading(a.Booking.Start),
		Greeting:   w.greeting(a.Booking.Patient.Name),
		Paragraphs: []string{w.l.T("mail.reminder.intro", w.clinicData())},
		Facts:      w.facts(a),
		Action:     action,
		After: []string{
			w.l.T("mail.reminder.cannot_come", nil), w.l.T("mail.private", nil), w.l.T("mail.ics_attached", nil),
		},
	}, nil
}

// reminderHeading says "today" or "tomorrow" when the appointment's day in
// the clinic's zone is the letter's day or the next, else "coming up".
func (w writer) reminderHeading(start time.Time) string {
	day := func(t time.Time) time.Time {
		y, m, d := t.In(w.loc).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	}
	today := day(w.in.Now)
	switch day(start) {
	case today:
		return w.l.T("mail.reminder.heading.today", nil)
	case today.AddDate(0, 0, 1):
		return w.l.T("mail.reminder.heading.tomorrow", nil)
	}
	return w.l.T("mail.reminder.heading.soon", nil)
}

func (w writer) change() (views.EmailVM, error) {
	a, prev := w.in.Appointment, w.in.Previous
	if prev == nil {
		return views.EmailVM{}, errNoPrevious
	}
	action, err := w.manage()
	if err != nil {
		return views.EmailVM{}, err
	}
	facts := []views.EmailFact{
		{Label: w.l.T("mail.what", nil), Value: a.typeIn(w.l.Lang())},
		{Label: w.l.T("mail.change.new_time", nil), Value: w.when(a.Booking.Start)},
		{Label: w.l.T("mail.change.old_time", nil), Value: w.when(prev.Booking.Start)},
		{Label: w.l.T("mail.with", nil), Value: a.Specialist},
	}
	if prev.Specialist != "" && prev.Specialist != a.Specialist {
		facts = append(facts, views.EmailFact{Label: w.l.T("mail.change.old_with", nil), Value: prev.Specialist})
	}
	facts = append(facts, views.EmailFact{Label: w.l.T("mail.where", nil), Value: w.place()})
	return views.EmailVM{
		Title:      w.l.T("mail.change.subject", w.dayTime(a.Booking.Start)),
		Heading:    w.l.T("mail.change.heading", nil),
		Greeting:   w.greeting(a.Booking.Patient.Name),
		Paragraphs: []string{w.l.T("mail.change.intro", w.clinicData())},
		Facts:      append(facts, w.reason()...),
		Action:     action,
		After:      []string{w.l.T("mail.private", nil), w.l.T("mail.change.calendar", nil)},
	}, nil
}

func (w writer) cancellation() (views.EmailVM, error) {
	a := w.in.Appointment
	vm := views.EmailVM{
		Title:      w.l.T("mail.cancellation.subject", w.dayTime(a.Booking.Start)),
		Heading:    w.l.T("mail.cancellation.heading", nil),
		Greeting:   w.greeting(a.Booking.Patient.Name),
		Paragraphs: []string{w.l.T("mail.cancellation.intro", w.clinicData())},
		Facts:      append(w.facts(a), w.reason()...),
		After:      []string{w.l.T("mail.cancellation.calendar", nil)},
	}
	if w.in.BookURL != "" {
		vm.Action = views.EmailAction{Label: w.l.T("mail.cancellation.book", nil), URL: w.in.BookURL}
	}
	return vm, nil
}

func (w writer) lookup() (views.EmailVM, error) {
	if len(w.in.List) == 0 {
		return views.EmailVM{}, errEmptyList
	}
	items := make([]views.EmailItem, 0, len(w.in.List))
	for _, it := range w.in.List {
		if it.ManageURL == "" {
			return views.EmailVM{}, errNoManageURL
		}
		a := it.Appointment
		items = append(items, views.EmailItem{
			Heading: w.when(a.Booking.Start),
			Lines:   []string{w.l.T("mail.lookup.item", map[string]any{"Type": a.typeIn(w.l.Lang()), "Specialist": a.Specialist})},
			Action:  views.EmailAction{Label: w.l.T("mail.lookup.manage", nil), URL: it.ManageURL},
		})
	}
	return views.EmailVM{
		Title:      w.l.T("mail.lookup.subject", w.clinicData()),
		Heading:    w.l.T("mail.lookup.heading", nil),
		Greeting:   w.greeting(""),
		Paragraphs: []string{w.l.T("mail.lookup.intro", w.clinicData())},
		Items:      items,
		After:      []string{w.l.T("mail.lookup.private", nil), w.l.T("mail.lookup.not_you", nil)},
	}, nil
}
