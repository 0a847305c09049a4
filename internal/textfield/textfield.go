// Package textfield is the one place that says what free text the
// application stores: every field a person types, with its length limit,
// and the characters no field may hold.
//
// No field takes a control character (Unicode category Cc: NUL, which
// PostgreSQL refuses in text; carriage return and line feed, which end a
// line of an event stream), a line or paragraph separator (U+2028,
// U+2029), or a bidirectional override or isolate (U+202A-U+202E,
// U+2066-U+2069), which make a name or an address read differently from
// what it is. Every form field is a one-line input, so a line break can
// only come from a script; none is kept.
//
// A patient's name and e-mail address, which the clinic compares and
// writes into its e-mails, pass stricter tests besides (Invisible,
// Compatible, MixedScripts), applied by the booking's validation.
package textfield

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clinic/booking/internal/apperr"
)

// Field is one kind of free text.
type Field struct {
	Name  string // what an INVALID_ARGUMENT error names, as the form or the API calls it
	Label string // what a message calls it, capitalised: "The name"
	Max   int    // the most it may hold, in characters (runes)
}

// emailMax is the longest address SMTP carries (RFC 5321's path limit).
const emailMax = 254

// Every free-text field and its limit. Passwords are below: they are
// counted in bytes.
var (
	PatientName    = Field{"patient.name", "The name", 200}
	PatientEmail   = Field{"patient.email", "The e-mail address", emailMax}
	PatientPhone   = Field{"patient.phone", "The phone number", 40}
	Reason         = Field{"reason", "The reason", 500}
	Note           = Field{"note", "The note", 500}
	SpecialistName = Field{"name", "The name", 200}
	TypeName       = Field{"name", "The name", 200}
	Description    = Field{"description", "The description", 2000}
	KioskName      = Field{"name", "The screen's name", 100}
	RoomName       = Field{"name", "The name", 100}
	StaffName      = Field{"name", "The name", 200}
	StaffEmail     = Field{"email", "The e-mail address", emailMax}
)

// Password limits, in bytes: bcrypt reads no further than 72, so a longer
// password would be cut without a word.
const (
	PasswordMinBytes = 10
	PasswordMaxBytes = 72
)

// Check returns s without surrounding white space.
//
// Errors: INVALID_ARGUMENT naming f when s holds a character no field
// takes, or is longer than f.Max characters.
func (f Field) Check(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !Plain(s) {
		return s, apperr.Invalidf(f.Name, "%s holds a character that is not allowed (a control character, a line break or a text-direction control).", f.Label)
	}
	if utf8.RuneCountInString(s) > f.Max {
		return s, apperr.Invalidf(f.Name, "%s is too long (%d characters at most).", f.Label, f.Max)
	}
	return s, nil
}

// CheckPassword refuses a password bcrypt cannot take whole, or one too
// short to be worth having.
//
// Errors: INVALID_ARGUMENT naming "password".
func CheckPassword(pw string) error {
	switch {
	case len(pw) < PasswordMinBytes:
		return apperr.Invalidf("password", "A password needs at least %d characters.", PasswordMinBytes)
	case len(pw) > PasswordMaxBytes:
		return apperr.Invalidf("password", "A password can be at most %d bytes long (%d plain letters; accented letters and symbols take two to four bytes each).", PasswordMaxBytes, PasswordMaxBytes)
	}
	return nil
}

// Plain reports whether s is UTF-8 without a character any field refuses.
func Plain(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
		if refused(r) {
			return false
		}
	}
	return true
}

func refused(r rune) bool {
	switch {
	case unicode.IsControl(r): // Cc: U+0000-U+001F, U+007F-U+009F
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}
