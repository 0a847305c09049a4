package booking

// The clinic's verification mode a booking was let through under, checked
// in the booking's transaction.

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
)

// ErrVerificationChanged: the clinic's verification mode is no longer the
// one the booking request was let through under (BookRequest.
// ClinicVerification); nothing was written. The caller reads the mode
// again and decides anew.
var ErrVerificationChanged = errors.New("booking: the clinic's verification mode changed")

// sqlStateVerificationChanged is the error verification_stands raises.
const sqlStateVerificationChanged = "CV001"

// standsFor is the check that the clinic still asks what req assumed,
// or nil when it assumed nothing.
func standsFor(req BookRequest, clinicID uuid.UUID) *db.VerificationStandsParams {
	if req.ClinicVerification == "" {
		return nil
	}
	return &db.VerificationStandsParams{ClinicID: clinicID, Verification: req.ClinicVerification}
}

// verificationStands runs the check of req's assumed verification mode
// of the clinic on q, in the booking's transaction.
func verificationStands(ctx context.Context, q *db.Queries, req BookRequest, clinicID uuid.UUID) error {
	stands := standsFor(req, clinicID)
	if stands == nil {
		return nil
	}
	if err := q.VerificationStands(ctx, *stands); err != nil {
		if isSQLState(err, sqlStateVerificationChanged) {
			return ErrVerificationChanged
		}
		return err
	}
	return nil
}
