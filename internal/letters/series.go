package letters

import (
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/ics"
	"github.com/clinic/booking/views"
)

// The series' letters.
const (
	Series             Kind = "series"              // the sessions of a series were booked
	SeriesCancellation Kind = "series_cancellation" // sessions of a series were cancelled, from one on
)

// ICSSeriesName is the file name of a series' calendar attachment.
const ICSSeriesName = "sessions.ics"

// seriesItems are the sessions of in.List as a letter lists them, each
// with its own manage link when it has one.
func (w writer) seriesItems() []views.EmailItem {
	items := make([]views.EmailItem, 0, len(w.in.List))
	for i, it := range w.in.List {
		a := it.Appointment
		item := views.EmailItem{
			Heading: w.l.T("mail.series.item", map[string]any{"N": i + 1, "When": w.when(a.Booking.Start)}),
			Lines:   []string{w.l.T("mail.lookup.item", map[string]any{"Type": a.typeIn(w.l.Lang()), "Specialist": a.Specialist})},
		}
		if it.ManageURL != "" {
			item.Action = views.EmailAction{Label: w.l.T("mail.lookup.manage", nil), URL: it.ManageURL}
		}
		items = append(items, item)
	}
	return items
}

func (w writer) series() (views.EmailVM, error) {
	if len(w.in.List) == 0 {
		return views.EmailVM{}, errEmptyList
	}
	first := w.in.List[0].Appointment
	data := map[string]any{"N": len(w.in.List), "Day": w.l.Day(first.Booking.Start.In(w.loc)), "Clinic": w.in.Clinic.Name,
		"Type": first.typeIn(w.l.Lang()), "Specialist": first.Specialist}
	return views.EmailVM{
		Title:      w.l.T("mail.series.subject", data),
		Heading:    w.l.T("mail.series.heading", data),
		Greeting:   w.greeting(first.Booking.Patient.Name),
		Paragraphs: []string{w.l.T("mail.series.intro", data), w.l.T("mail.where", nil) + ": " + w.place()},
		Items:      w.seriesItems(),
		After:      []string{w.l.T("mail.lookup.private", nil), w.l.T("mail.series.ics_attached", nil)},
	}, nil
}

func (w writer) seriesCancellation() (views.EmailVM, error) {
	if len(w.in.List) == 0 {
		return views.EmailVM{}, errEmptyList
	}
	first := w.in.List[0].Appointment
	data := map[string]any{"N": len(w.in.List), "Day": w.l.Day(first.Booking.Start.In(w.loc)), "Clinic": w.in.Clinic.Name}
	vm := views.EmailVM{
		Title:      w.l.T("mail.series_cancel.subject", data),
		Heading:    w.l.T("mail.series_cancel.heading", data),
		Greeting:   w.greeting(first.Booking.Patient.Name),
		Paragraphs: []string{w.l.T("mail.series_cancel.intro", data)},
		Items:      w.seriesItems(),
		After:      []string{w.l.T("mail.cancellation.calendar", nil)},
	}
	if r := w.reason(); len(r) > 0 {
		vm.Facts = r
	}
	if w.in.BookURL != "" {
		vm.Action = views.EmailAction{Label: w.l.T("mail.cancellation.book", nil), URL: w.in.BookURL}
	}
	return vm, nil
}

// seriesCalendar is the .ics of every session the letter lists.
func (w writer) seriesCalendar() Attachment {
	sessions := make([]booking.Booking, len(w.in.List))
	for i, it := range w.in.List {
		sessions[i] = it.Appointment.Booking
	}
	a := w.in.List[0].Appointment
	data := ics.Series(sessions, a.typeIn(w.in.Clinic.Language), a.Specialist, w.in.Clinic, w.in.Now)
	return Attachment{Name: ICSSeriesName, ContentType: ICSContentType, Data: []byte(data)}
}
