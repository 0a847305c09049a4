package records

import (
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/web/httpx"
)

// words is a stored value (a status, a kind, a state) in l's words: the
// message prefix+value, or the value as stored when the catalogue has no
// words for it.
func words(l *i18n.Localizer, prefix, value string) string {
	if value == "" {
		return ""
	}
	key := prefix + value
	if w := l.T(key, nil); w != key {
		return w
	}
	return value
}

// heldReason matches the reason the cap on e-mails to one address stores
// for a message it holds back (in English, as the outbox writes it).
var heldReason = regexp.MustCompile(`^Held back: this address got (\d+) e-mails that online requests to (this clinic|the clinics of this server) caused`)

// heldWords is a held-back message's reason in l's words; a reason the
// outbox wrote otherwise is shown as stored.
func heldWords(l *i18n.Localizer, reason string) string {
	m := heldReason.FindStringSubmatch(reason)
	if m == nil || l.Lang() == i18n.English {
		return reason
	}
	key := "records.outbox.held_clinic"
	if m[2] != "this clinic" {
		key = "records.outbox.held_server"
	}
	return l.T(key, map[string]any{"Count": m[1]})
}

// statusPrefix names the words of a booking's status
// ("records.status.confirmed" is "Booked").
const statusPrefix = "records.status."

// contactRefusals are the privacy service's refusals of a patient's
// address or number; each key's English text is the service's message.
var contactRefusals = []httpx.Known{
	{Key: "records.error.contact_required"}, {Key: "records.error.contact_required_lower"}, {Key: "records.error.email_at"},
	{Key: "records.error.phone_digits"}, {Key: "records.error.phone_digits_lower"}, {Key: "records.error.nothing_held"},
	{Key: "records.error.nothing_exported"},
}

// contactProblem is the privacy service's refusal of a patient's address
// or number in the page's language; one not listed keeps its English.
func contactProblem(c echo.Context, err *apperr.Error) string {
	return httpx.InWords(httpx.Tr(c), err.Message, contactRefusals)
}

// The prefixes of the words of an e-mail's status, a waitlist place's
// state and an offer's state.
const (
	mailPrefix  = "records.mail."
	placePrefix = "records.place."
	offerPrefix = "records.offer."

	attendancePrefix = "records.attendance."
	entityPrefix     = "records.entity."
	partPrefix       = "records.part."
)

// typeNames names the clinic's appointment types in the page's language:
// the privacy service reads a type's own name, the clinic may have given
// it another for the reader. A name that is no type's (renamed since, or
// the types could not be read) stays as it is.
func (s *Records) typeNames(c echo.Context) func(string) string {
	lang := httpx.Tr(c).Lang()
	types, err := s.deps.Clinics.AppointmentTypes(c.Request().Context(), httpx.StaffUser(c).ClinicID)
	if err != nil {
		httpx.LoggerFrom(c).Warn("read the types' names", "err", err)
	}
	names := make(map[string]string, len(types))
	for _, t := range types {
		names[t.Name] = t.NameIn(lang)
	}
	return func(name string) string {
		if n, ok := names[name]; ok {
			return n
		}
		return name
	}
}

// pageWords is the name of a page a view was recorded on (as the record
// stores it, "day grid") in l's words.
func pageWords(l *i18n.Localizer, page string) string {
	key := "records.viewed." + strings.ReplaceAll(page, " ", "_")
	if w := l.T(key, nil); w != key {
		return w
	}
	return page
}
