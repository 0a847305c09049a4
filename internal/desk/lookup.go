package desk

// The front desk's look-up of patients the clinic has seen, as the
// receptionist types a caller's name or phone number.

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// PatientMatch is a patient the look-up offers: their details as their
// latest booking has them, and that booking (what was shown of whom).
type PatientMatch struct {
	BookingID uuid.UUID
	Name      string
	Email     string
	Phone     string
}

// LookupLimit is how many patients one look-up offers at most: a
// receptionist picks from a few, and types on to narrow them.
const LookupLimit = 8

// A look-up needs this much typed before it shows anyone: one letter
// would list half the clinic's patients.
const (
	lookupMinLetters = 2
	lookupMinDigits  = 3
)

// LookUpPatients are the clinic's patients whose name holds name or
// whose phone number holds the digits of phone, the most recently booked
// first; none while too little is typed.
//
// Errors: FORBIDDEN.
func (b *Bookings) LookUpPatients(ctx context.Context, u staff.User, name, phone string) ([]PatientMatch, error) {
	if err := u.May(staff.ActBook); err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, phone)
	if utf8.RuneCountInString(name) < lookupMinLetters || !strings.ContainsFunc(name, unicode.IsLetter) {
		name = ""
	}
	if len(digits) < lookupMinDigits {
		digits = ""
	}
	if name == "" && digits == "" {
		return nil, nil
	}
	rows, err := db.New(b.pool).BookingPatientLookup(ctx, db.BookingPatientLookupParams{
		ClinicID: u.ClinicID, NamePart: likeEscape(name), Digits: digits, MaxRows: LookupLimit,
	})
	if err != nil {
		return nil, fmt.Errorf("look up patients: %w", err)
	}
	out := make([]PatientMatch, len(rows))
	for i, r := range rows {
		out[i] = PatientMatch{BookingID: r.ID, Name: r.PatientName, Email: r.PatientEmail, Phone: r.PatientPhone}
	}
	return out, nil
}

// likeEscape makes s match only itself in a LIKE pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
