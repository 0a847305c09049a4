package booking

// Manage links: the private token a patient opens their booking with.

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/secret"
)

// ByManageToken finds the booking a manage link points at.
//
// Errors: NOT_FOUND.
func (s *Service) ByManageToken(ctx context.Context, token string) (Booking, error) {
	row, err := db.New(s.pool).BookingGetByTokenHash(ctx, HashToken(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return Booking{}, apperr.NotFoundf("", "This link is not valid (any more).")
	}
	if err != nil {
		return Booking{}, fmt.Errorf("find booking by token: %w", err)
	}
	return fromRow(row), nil
}

func newManageToken() (token string, hash []byte, err error) {
	if token, err = secret.NewToken(32); err != nil {
		return "", nil, fmt.Errorf("manage token: %w", err)
	}
	return token, HashToken(token), nil
}

// HashToken is how manage and device tokens are stored (secret.Hash).
func HashToken(token string) []byte { return secret.Hash(token) }
