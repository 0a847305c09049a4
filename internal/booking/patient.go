package booking

// A patient's details as a booking keeps them.

import (
	"net/mail"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/i18n"
	"github.com/clinic/booking/internal/textfield"
)

// ValidatePatient trims the patient's details and names the first field that
// is wrong; textfield has the limits and the characters refused. The
// e-mail address is kept as typed: only its key (identity.EmailKey) is
// compared.
//
// Every way a patient's name enters goes through here, the staff desk's
// too: staff are trusted, but the name is written into the patient's
// e-mails, where a link in it would be the clinic's word.
func ValidatePatient(p Patient) (Patient, error) { return validatePatient(p, true) }

// ValidatePatientAs is ValidatePatient for a booking made by actor: a
// patient booking for themselves gives an e-mail address (it is where
// their confirmation and manage link go), staff booking for a caller
// may leave it out when there is a phone number, and the booking then
// sends no e-mail. Either way no one books with neither.
func ValidatePatientAs(actor string, p Patient) (Patient, error) {
	return validatePatient(p, actor == ActorPatient)
}

func validatePatient(p Patient, needEmail bool) (Patient, error) {
	var err error
	if p.Name, err = checkedName(p.Name); err != nil {
		return p, err
	}
	if p.Email, err = checkedEmail(p.Email, needEmail); err != nil {
		return p, err
	}
	if p.Email == "" && strings.TrimSpace(p.Phone) == "" {
		return p, apperr.Invalidf("patient.phone", "Give a phone number or an e-mail address, so the clinic can reach the patient.")
	}
	p.Phone, err = checkedPhone(p.Phone)
	return p, err
}

// PatientFieldErrors checks each of the patient's details on its own, as
// ValidatePatient does, so that a form can show every wrong field at once
// instead of the first; empty when ValidatePatient would pass.
func PatientFieldErrors(p Patient) map[string]error {
	out := map[string]error{}
	if _, err := checkedName(p.Name); err != nil {
		out["patient.name"] = err
	}
	if _, err := checkedEmail(p.Email, true); err != nil {
		out["patient.email"] = err
	}
	if _, err := checkedPhone(p.Phone); err != nil {
		out["patient.phone"] = err
	}
	return out
}

func checkedName(name string) (string, error) {
	name, err := textfield.PatientName.Check(name)
	switch {
	case err != nil:
		return name, err
	case name == "":
		return name, apperr.Invalidf("patient.name", "Please enter your name.")
	}
	return name, checkName(name)
}

// checkedEmail checks an e-mail address; an empty one passes unless need.
func checkedEmail(email string, need bool) (string, error) {
	email, err := textfield.PatientEmail.Check(email)
	switch {
	case err != nil:
		return email, err
	case email == "" && need:
		return email, apperr.Invalidf("patient.email", "Please enter your e-mail address.")
	case email == "":
		return email, nil
	}
	return email, checkEmail(email)
}

func checkedPhone(phone string) (string, error) {
	phone, err := textfield.PatientPhone.Check(phone)
	switch {
	case err != nil:
		return phone, err
	case !validPhone(phone):
		return phone, apperr.Invalidf("patient.phone", "A phone number has digits, spaces and + - ( ) only.")
	}
	return phone, nil
}

// checkName refuses a name that is not one: a name is letters, combining
// marks, spaces and the punctuation names are written with (apostrophes,
// hyphens, dots, commas, the Catalan middle dot). Nothing a mail client
// makes a link of gets through: no "<", ">", ":", "/" or "@" (none is
// allowed), no "www." and no word ending in a public suffix ("evil.com",
// "böse.de"; "St.Clair" and "J.R.R." end in none). Digits are refused
// too, not only in runs: a name never needs one (generations are written
// "III" and "Jr."), and any digits allowed would let a phone number or an
// amount through a few at a time ("0 9 0 0 …").
//
// Errors: INVALID_ARGUMENT naming patient.name.
func checkName(name string) error {
	if r, ok := textfield.Invisible(name); ok {
		return apperr.Invalidf("patient.name", "The name holds an invisible character (U+%04X). Please type it again without it.", r)
	}
	letters := 0
	for _, r := range name {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsMark(r), r == ' ', strings.ContainsRune(nameMarks, r):
		default:
			return apperr.Invalidf("patient.name", "A name has letters, spaces, apostrophes, hyphens and dots only: no digits, links or addresses.")
		}
	}
	if letters == 0 {
		return apperr.Invalidf("patient.name", "Please enter your name.")
	}
	if !textfield.Compatible(name) {
		return apperr.Invalidf("patient.name", "The name holds a special form of a letter (such as a full-width one). Please type it with ordinary letters.")
	}
	// Words end at spaces and at every mark of a name but the dot, so that
	// a quote or a hyphen around an address does not hide it ('evil.com').
	for _, word := range strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || (r != '.' && strings.ContainsRune(nameMarks, r)) }) {
		if linkLike(word) {
			return apperr.Invalidf("patient.name", "A name cannot hold a web address such as %q.", word)
		}
	}
	return nil
}

// nameMarks is the punctuation names are written with: apostrophes
// (straight, typographic, the modifier letter's), hyphens (ASCII and
// Unicode's own, non-breaking too), dots, commas and the middle dot of
// Catalan's "l·l".
const nameMarks = "'’‘ʼ-‐‑.,·"

// linkLike reports whether a word of a name reads as a web address: it
// starts with "www." or ends in a public suffix (a top-level domain such
// as .com or .de, or one under which people register names, such as
// .co.uk). Trailing dots, as in initials, do not count.
func linkLike(word string) bool {
	w := strings.ToLower(strings.TrimRight(word, "."))
	if strings.HasPrefix(w, "www.") {
		return true
	}
	if !strings.Contains(w, ".") {
		return false
	}
	if a, err := idna.ToASCII(w); err == nil {
		w = a
	}
	suffix, icann := publicsuffix.PublicSuffix(w)
	// An unknown last label is its own suffix by the list's default rule;
	// only a listed one names a domain.
	return (icann || strings.Contains(suffix, ".")) && suffix != w
}

// checkEmail refuses an address that is not one, or that is written to
// look like another: a character that shows nothing, a compatibility form
// (a full-width "ｅ"), or letters of two scripts in one part.
//
// Errors: INVALID_ARGUMENT naming patient.email.
func checkEmail(email string) error {
	if r, ok := textfield.Invisible(email); ok {
		return apperr.Invalidf("patient.email", "The e-mail address holds an invisible character (U+%04X). Please type it again without it.", r)
	}
	if !validEmail(email) {
		return apperr.Invalidf("patient.email", "That does not look like an e-mail address.")
	}
	if !textfield.Compatible(email) {
		return apperr.Invalidf("patient.email", "The e-mail address holds a special form of a letter (such as a full-width one). Please type it with ordinary letters.")
	}
	if textfield.MixedScripts(email) {
		return apperr.Invalidf("patient.email", "The e-mail address mixes letters of different alphabets in one part (such as a Cyrillic letter among Latin ones).")
	}
	return nil
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
