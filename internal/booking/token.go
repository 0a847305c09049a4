package booking

// Manage links: the private token a patient opens their booking with.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
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
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", nil, fmt.Errorf("manage token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(buf)
	return token, HashToken(token), nil
}

// HashToken is how manage tokens are stored: a leaked table does not leak links.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
