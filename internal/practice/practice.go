// Package practice is the clinic's set-up as its staff keep it: the
// specialists, their weekly hours and date overrides, the appointment
// types, the clinic's settings and the kiosk screens' device tokens. Each
// action takes a staff.User and checks its action in the role table
// first; every query is scoped by the user's clinic; every change runs in
// one transaction with its audit row, carries the version the editor saw
// and tells the notifier once it committed, so caches are retired and
// open pages refresh.
package practice

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
)

// Service keeps a clinic's set-up.
type Service struct {
	pool    *pgxpool.Pool
	changed staff.Notifier
}

// New is the set-up service; changed (may be nil) is told after every
// committed change.
func New(pool *pgxpool.Pool, changed staff.Notifier) *Service {
	return &Service{pool: pool, changed: changed}
}

// tx runs fn in a transaction, then tells the notifier.
func (s *Service) tx(ctx context.Context, u staff.User, fn func(q *db.Queries) error) error {
	return staff.Change(ctx, s.pool, s.changed, u, fn)
}

func isSQLState(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}
