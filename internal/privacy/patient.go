// Package privacy answers for the patient data a clinic holds: finding
// every place one patient's details are stored, erasing them on request,
// handing them to the patient, and ending them when the clinic's
// retention period has passed.
package privacy

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
)

// Patient is one patient of a clinic as staff name them: by an e-mail
// address, a phone number or both, compared by the identity keys of the
// public path (every spelling of one mailbox or number is the same
// patient). A patient booked by phone may have no e-mail address.
type Patient struct {
	ClinicID uuid.UUID
	EmailKey string // empty: no address given
	PhoneKey string // empty: no number given
}

// PatientOf is the patient with this address and number at the clinic,
// the number read in the clinic's country when written without a country
// code. At least one of them must be given.
func PatientOf(ctx context.Context, q *db.Queries, clinicID uuid.UUID, email, phone string) (Patient, error) {
	email, phone = strings.TrimSpace(email), strings.TrimSpace(phone)
	if email == "" && phone == "" {
		return Patient{}, apperr.Invalidf("email", "an e-mail address or a phone number is required")
	}
	emailKey, phoneKey, err := PatientKeysOf(ctx, q, clinicID, email, phone)
	if err != nil {
		return Patient{}, err
	}
	if emailKey == "" && phoneKey == "" {
		// Only a number without a digit has no key ("abc", "+").
		return Patient{}, apperr.Invalidf("phone", "a phone number needs digits")
	}
	return Patient{ClinicID: clinicID, EmailKey: emailKey, PhoneKey: phoneKey}, nil
}

// Bookings are every booking of p, past and future, in any state, oldest
// first.
func Bookings(ctx context.Context, q *db.Queries, p Patient) ([]db.Booking, error) {
	rows, err := q.PrivacyPatientBookings(ctx, db.PrivacyPatientBookingsParams{
		ClinicID: p.ClinicID, EmailKey: p.EmailKey, PhoneKey: p.PhoneKey,
	})
	if err != nil {
		return nil, fmt.Errorf("patient's bookings: %w", err)
	}
	return rows, nil
}
