package booking

// The patient cooldown: who counts as one patient, and for how long a
// booking of theirs keeps them from booking its type again.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/identity"
)

// CancelKeepsCooldown is how long a booking the patient cancelled online
// (through its manage link or the API) still counts for their cooldown
// of its type, at most: without it, booking and cancelling in a loop
// would let anyone send a stranger one confirmation and one cancellation
// after another. A cancel by staff lifts the cooldown at once.
const CancelKeepsCooldown = time.Hour

// keys are the identity keys of p's e-mail address and phone number, the
// phone read in region (the clinic's country).
func keys(p Patient, region string) (emailKey, phoneKey string) {
	return identity.EmailKey(p.Email), identity.PhoneKey(p.Phone, region)
}

// clinicRegion is the clinic's country, which a phone number written
// without its country code is read in.
func clinicRegion(ctx context.Context, q *db.Queries, clinicID uuid.UUID) (string, error) {
	region, err := q.BookingClinicCountry(ctx, clinicID)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.DefaultRegion, nil
	}
	if err != nil {
		return "", fmt.Errorf("load clinic's country: %w", err)
	}
	return region, nil
}

// cooldownUntil is when the cooldown of the patient with these keys for
// the type ends, bookings other than exclude counted; the epoch when none
// runs.
func cooldownUntil(ctx context.Context, q *db.Queries, typeID uuid.UUID, emailKey, phoneKey string, exclude uuid.UUID) (time.Time, error) {
	until, err := q.BookingPatientCooldownUntil(ctx, db.BookingPatientCooldownUntilParams{
		AppointmentTypeID: typeID, EmailKey: emailKey, PhoneKey: phoneKey, ExcludeID: exclude,
		CancelKeepsSec: int32(CancelKeepsCooldown / time.Second),
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("check cooldown: %w", err)
	}
	return until, nil
}

// PatientKeys are the identity keys of p's e-mail address and phone
// number at the clinic, the phone read in the clinic's country when it
// has no country code: what the cooldown compares.
func PatientKeys(ctx context.Context, q *db.Queries, clinicID uuid.UUID, p Patient) (emailKey, phoneKey string, err error) {
	region := identity.DefaultRegion
	if identity.NeedsRegion(p.Phone) {
		if region, err = clinicRegion(ctx, q, clinicID); err != nil {
			return "", "", err
		}
	}
	emailKey, phoneKey = keys(p, region)
	return emailKey, phoneKey, nil
}

// PatientCooldownUntil is when p's cooldown for the type at the clinic
// ends, by the booking gate's own test, at the database's time now; the
// epoch when none runs.
func PatientCooldownUntil(ctx context.Context, q *db.Queries, clinicID, typeID uuid.UUID, p Patient) (time.Time, error) {
	emailKey, phoneKey, err := PatientKeys(ctx, q, clinicID, p)
	if err != nil {
		return time.Time{}, err
	}
	return cooldownUntil(ctx, q, typeID, emailKey, phoneKey, uuid.Nil)
}
