package desk

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/web/httpx"
)

// The desk's words in the reader's language: a booking's state and
// attendance, the clinic's type names, times and the refusals the desk
// shows in place.

// statusKeys say a booking's state one way on every desk page.
var statusKeys = map[string]string{
	booking.StatusConfirmed:   "desk.status.booked",
	booking.StatusCancelled:   "desk.status.cancelled",
	booking.StatusRescheduled: "desk.status.moved",
}

// statusWord is a booking's state in l's words ("Booked" for a confirmed
// one); an unknown state is shown as it is stored.
func statusWord(l *i18n.Localizer, status string) string {
	if key, ok := statusKeys[status]; ok {
		return l.T(key, nil)
	}
	return status
}

// markKeys name the attendance marks.
var markKeys = map[string]string{
	desk.NotMarked: "desk.mark.not_marked",
	desk.Arrived:   "desk.mark.arrived",
	desk.NoShow:    "desk.mark.no_show",
	desk.Completed: "desk.mark.completed",
}

// markWord is an attendance mark in l's words ("Not marked", "No-show").
func markWord(l *i18n.Localizer, mark string) string {
	if key, ok := markKeys[mark]; ok {
		return l.T(key, nil)
	}
	return mark
}

// markInSentence is a mark as a sentence says it ("Mark Ada as
// arrived").
func markInSentence(l *i18n.Localizer, mark string) string {
	if key, ok := markInSentenceKeys[mark]; ok {
		return l.T(key, nil)
	}
	return mark
}

var markInSentenceKeys = map[string]string{
	desk.Arrived:   "desk.mark.as.arrived",
	desk.NoShow:    "desk.mark.as.no_show",
	desk.Completed: "desk.mark.as.completed",
}

// languageWord names the language of a patient's e-mails ("German");
// none is none.
func languageWord(l *i18n.Localizer, lang string) string {
	if key, ok := languageKeys[lang]; ok {
		return l.T(key, nil)
	}
	return lang
}

var languageKeys = map[string]string{
	i18n.English: "desk.page.language.en",
	i18n.German:  "desk.page.language.de",
}

// mailWord is an e-mail's kind or state in l's words ("Confirmation",
// "Sent"); one the catalogue does not name is shown as it is stored.
func mailWord(l *i18n.Localizer, what, value string) string {
	key := "desk.mail." + what + "." + value
	if w := l.T(key, nil); w != key {
		return w
	}
	return value
}

// typeNames are the clinic's appointment types' names in lang: the
// clinic's own translation where it has one, else the name it was
// created with.
func (s *FrontDesk) typeNames(ctx context.Context, clinicID uuid.UUID, lang string) (map[uuid.UUID]string, error) {
	types, err := s.deps.Clinics.AppointmentTypes(ctx, clinicID)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]string, len(types))
	for _, t := range types {
		out[t.ID] = t.NameIn(lang)
	}
	return out, nil
}

// typeName is id's name from names, or fallback (the stored name) for a
// type names does not hold.
func typeName(names map[uuid.UUID]string, id uuid.UUID, fallback string) string {
	if n, ok := names[id]; ok && n != "" {
		return n
	}
	return fallback
}

// when is a time in full in l's language with the clinic's zone as
// people say it: "Tuesday 24 November 2026, 10:00 (Berlin time)".
func when(l *i18n.Localizer, t time.Time, loc *time.Location) string {
	return httpx.LocalWhen(l, t, loc)
}

// longDate is a day with its year: "Tuesday 24 November 2026",
// "Dienstag, 24. November 2026".
func longDate(l *i18n.Localizer, t time.Time) string {
	return l.LongDay(t) + " " + t.Format("2006")
}

// shortWhen is a day and time in short: "Tue 24 Nov 2026 14:30",
// "Di., 24. Nov. 2026 14:30".
func shortWhen(l *i18n.Localizer, t time.Time) string {
	return l.Day(t) + " " + t.Format("2006") + " " + l.Time(t)
}

// deskErrorKeys are the refusals the desk says in its own words; the
// others take the patient pages' words for their code.
var deskErrorKeys = map[string]string{
	apperr.CodeSlotTaken:           "desk.error.SLOT_TAKEN",
	apperr.CodeSlotUnavailable:     "desk.error.SLOT_UNAVAILABLE",
	apperr.CodeSlotHeld:            "desk.error.SLOT_HELD",
	apperr.CodeHoldExpired:         "desk.error.HOLD_EXPIRED",
	apperr.CodeHoldGone:            "desk.error.HOLD_EXPIRED",
	apperr.CodeBookingNotActive:    "desk.error.BOOKING_NOT_ACTIVE",
	apperr.CodeConcurrencyConflict: "desk.error.CONCURRENCY_CONFLICT",
	desk.CodeAttendanceNotYet:      "desk.error.ATTENDANCE_NOT_YET",
	desk.CodeAttendanceClosed:      "desk.error.ATTENDANCE_CLOSED",
	desk.CodeNoShowTooEarly:        "desk.error.NO_SHOW_TOO_EARLY",
}

// deskFieldKeys are the desk's words for a field a refusal names.
var deskFieldKeys = map[string]string{
	"patient.name": "desk.error.field.name", "name": "desk.error.field.name",
	"patient.email": "desk.error.field.email", "email": "desk.error.field.email",
	"patient.phone": "desk.error.field.phone", "phone": "desk.error.field.phone",
	"reason": "desk.error.field.reason", "start": "desk.error.field.start",
	"type": "desk.dialog.choose_type", "appointmentTypeId": "desk.dialog.choose_type",
	"time": "desk.caller.incomplete",
}

// refusal is what a desk page says for a refused change: in English the
// error's own message, in another language the desk's words for its code
// or field, else the patient pages' words for the code.
func refusal(l *i18n.Localizer, ae *apperr.Error) string { return refusalOf(l, ae, nil) }

// refusalOf is refusal with data for the placeholders of the desk's
// words (the Day and Time of the booking a mark refusal is about).
func refusalOf(l *i18n.Localizer, ae *apperr.Error, data map[string]any) string {
	if ae.Code == apperr.CodeSlotTaken && ae.Details["reason"] == booking.RoomTakenReason {
		return l.T("rooms.error.room_taken", nil)
	}
	if l.Lang() == i18n.English {
		return ae.Message
	}
	if ae.Code == apperr.CodeInvalidArgument {
		if key, ok := deskFieldKeys[ae.Field()]; ok {
			return l.T(key, nil)
		}
	}
	if key, ok := deskErrorKeys[ae.Code]; ok {
		all := map[string]any{"Seconds": 0, "Day": "", "Time": ""}
		if n, ok := ae.Details["retryAfterSeconds"].(int); ok {
			all["Seconds"] = n
		}
		for k, v := range data {
			all[k] = v
		}
		return l.T(key, all)
	}
	return httpx.LocalMessage(l, ae.Code, ae.Message, ae.Details)
}
