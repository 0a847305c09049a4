package booking

// A patient's details as a booking keeps them.

import (
	"net/mail"
	"strings"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/textfield"
)

// ValidatePatient trims the patient's details and names the first field that
// is wrong; textfield has the limits and the characters refused.
func ValidatePatient(p Patient) (Patient, error) {
	var nameErr, emailErr, phoneErr error
	p.Name, nameErr = textfield.PatientName.Check(p.Name)
	p.Email, emailErr = textfield.PatientEmail.Check(p.Email)
	p.Phone, phoneErr = textfield.PatientPhone.Check(p.Phone)
	switch {
	case nameErr != nil:
		return p, nameErr
	case p.Name == "":
		return p, apperr.Invalidf("patient.name", "Please enter your name.")
	case emailErr != nil:
		return p, emailErr
	case p.Email == "":
		return p, apperr.Invalidf("patient.email", "Please enter your e-mail address.")
	case !validEmail(p.Email):
		return p, apperr.Invalidf("patient.email", "That does not look like an e-mail address.")
	case phoneErr != nil:
		return p, phoneErr
	case !validPhone(p.Phone):
		return p, apperr.Invalidf("patient.phone", "A phone number has digits, spaces and + - ( ) only.")
	}
	return p, nil
}

func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s[strings.LastIndex(s, "@"):], ".")
}

func validPhone(s string) bool {
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune(" +-()./", r):
		default:
			return false
		}
	}
	return s == "" || digits >= 5
}

// language keeps a language the e-mails can speak, and nothing else.
func language(lang string) string {
	if i18n.IsSupported(lang) {
		return lang
	}
	return ""
}
