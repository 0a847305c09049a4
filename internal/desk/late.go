package desk

import (
	"context"
	"fmt"
	"strings"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// LateCancels counts the clinic's bookings of a patient that the patient
// cancelled inside the change deadline, matched as NoShows matches.
// Nothing typed counts 0.
//
// Errors: FORBIDDEN.
func (b *Bookings) LateCancels(ctx context.Context, u staff.User, email, phone string) (int, error) {
	if err := u.May(staff.ActBook); err != nil {
		return 0, err
	}
	email, phone = strings.TrimSpace(email), strings.TrimSpace(phone)
	if email == "" && phone == "" {
		return 0, nil
	}
	n, err := db.New(b.pool).BookingLateCancelCount(ctx, db.BookingLateCancelCountParams{ClinicID: u.ClinicID, Email: email, Phone: phone})
	if err != nil {
		return 0, fmt.Errorf("count late cancellations: %w", err)
	}
	return int(n), nil
}
