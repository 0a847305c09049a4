package booking

// Errors of the gate.

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinic/booking/internal/apperr"
)

// ErrVersionMismatch is a stale If-Match or form version.
func ErrVersionMismatch(current int32) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.PreconditionFailed, Code: apperr.CodeConcurrencyConflict,
		Message: "This booking changed since you loaded it. Reload it and try again.",
		Details: map[string]any{"currentVersion": current},
	}
}

func isSQLState(err error, codes ...string) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	for _, c := range codes {
		if pgErr.Code == c {
			return true
		}
	}
	return false
}
