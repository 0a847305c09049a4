// Package staff is who the clinic's staff are and what they may do: the
// accounts, signing in, passwords and their policy, the one-time sign-in
// links (welcome and reset), the second factor (TOTP and recovery codes)
// and the account's list of sessions, the roles with their table of
// actions (User.May), and reading the audit log. The calendar and the front desk
// (internal/desk) and the clinic's set-up (internal/practice) take a
// User from here and check it against the same table; this package
// imports neither. Every query is scoped by the staff member's clinic;
// every change runs in one transaction with its audit row.
package staff

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/apperr"
	auditlog "github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// User is a signed-in staff member; Role is one of Roles (see roles.go for
// what each may do).
type User struct {
	ID       uuid.UUID
	ClinicID uuid.UUID
	Email    string
	Name     string
	Role     string
	// SecondFactor: the account signs in with a code after its password.
	SecondFactor bool
	// SecondFactorRequired: its clinic requires a second factor of every
	// account.
	SecondFactorRequired bool
}

// MustSetUpSecondFactor is whether u may do nothing but set up a second
// factor: the clinic requires one and u has none yet.
func (u User) MustSetUpSecondFactor() bool { return u.SecondFactorRequired && !u.SecondFactor }

// Actor is how audit rows name the user.
func (u User) Actor() string { return "staff:" + u.Email }

// Notifier is told after every committed calendar change of a clinic, so
// caches are invalidated and open pages refresh.
type Notifier func(ctx context.Context, clinicID uuid.UUID)

// Service keeps the staff accounts: signing in, passwords, sign-in
// links, the accounts themselves and the audit log's reads.
type Service struct {
	pool     *pgxpool.Pool
	changed  Notifier
	logger   *slog.Logger
	hashCost int
	keys     keys
	// dummyHash is a hash at hashCost, made on first use.
	dummyHash func() []byte
}

// Option changes how New builds the service.
type Option func(*Service)

func New(pool *pgxpool.Pool, changed Notifier, logger *slog.Logger, opts ...Option) *Service {
	s := &Service{pool: pool, changed: changed, logger: logger, hashCost: DefaultHashCost}
	for _, o := range opts {
		o(s)
	}
	s.dummyHash = newDummyHash(s.hashCost)
	return s
}

// ErrBadCredentials is one message for a wrong e-mail and a wrong password.
func ErrBadCredentials() *apperr.Error {
	return apperr.New(apperr.Unauthorized, apperr.CodeBadCredentials, "The e-mail address or the password is not right.")
}

// Authenticate checks an e-mail and password.
//
// Errors: BAD_CREDENTIALS (401), the same for both kinds of mistake, for
// a disabled account and for one without a password yet (which says
// nothing of whether it exists). A right password whose hash is weaker
// than new hashes (see WithHashCost) is stored again at today's cost.
func (s *Service) Authenticate(ctx context.Context, email, password string) (User, error) {
	if len(password) > textfield.PasswordMaxBytes {
		// No account has one, and bcrypt compares the first 72 bytes only:
		// a longer password that starts like the real one must not open it.
		return User{}, ErrBadCredentials()
	}
	email = strings.ToLower(strings.TrimSpace(email))
	row, err := db.New(s.pool).StaffUserGetByEmail(ctx, email)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && row.PasswordHash == noPassword) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return User{}, ErrBadCredentials()
	}
	if err != nil {
		return User{}, fmt.Errorf("find staff user: %w", err)
	}
	if bcrypt.CompareHashAndPassword([]byte(row.PasswordHash), []byte(password)) != nil || row.DisabledAt != nil {
		return User{}, ErrBadCredentials()
	}
	if s.needsRehash(row.PasswordHash) {
		s.rehash(ctx, row, password)
	}
	return userOf(row), nil
}

func userOf(r db.StaffUser) User {
	return User{ID: r.ID, ClinicID: r.ClinicID, Email: r.Email, Name: r.Name, Role: r.Role}
}

// UserByID loads a signed-in user again (roles may change, an account may
// be disabled or removed).
//
// Errors: SIGNED_OUT (401) when the account is gone or disabled.
func (s *Service) UserByID(ctx context.Context, id uuid.UUID) (User, error) {
	u, err := s.SignedIn(ctx, id, nil)
	if ae := apperr.As(err); ae != nil && ae.Code == apperr.CodeSignedOut {
		return User{}, apperr.New(apperr.Unauthorized, apperr.CodeSignedOut, "This account can no longer sign in.")
	}
	return u, err
}

// Stale is an edit made on a version that is no longer current.
func Stale(current any) *apperr.Error {
	return &apperr.Error{
		Kind: apperr.PreconditionFailed, Code: apperr.CodeConcurrencyConflict,
		Message: "This was changed by someone else since you opened it. Here are the current values; make your change again.",
		Details: map[string]any{"current": current},
	}
}

// WriteAudit writes the one audit row of a change u makes, in the
// change's transaction.
func WriteAudit(ctx context.Context, q *db.Queries, u User, action, entity, id string, before, after any, reason string) error {
	return auditlog.Write(ctx, q, auditlog.Entry{
		ClinicID: u.ClinicID, Actor: u.Actor(), Action: action, Entity: entity, EntityID: id,
		Before: before, After: after, Reason: reason,
	})
}

// tx runs fn in a transaction, then tells the notifier.
func (s *Service) tx(ctx context.Context, u User, fn func(q *db.Queries) error) error {
	return Change(ctx, s.pool, s.changed, u, fn)
}

// Change runs fn, a change u makes, in one transaction and, once it has
// committed, tells changed (when not nil) that u's clinic changed.
func Change(ctx context.Context, pool *pgxpool.Pool, changed Notifier, u User, fn func(q *db.Queries) error) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return fn(db.New(tx)) })
	if err == nil && changed != nil {
		changed(context.WithoutCancel(ctx), u.ClinicID)
	}
	return err
}

// NotFound is the NOT_FOUND of something the user's clinic has no such
// one of (or another clinic's, which it must not tell apart).
func NotFound(what string) *apperr.Error {
	return apperr.NotFoundf("", "No such %s at this clinic.", what)
}

// FromRows converts a query's rows to a domain type with f, or passes the
// query's error on.
func FromRows[R, T any](rows []R, err error, f func(R) T) ([]T, error) {
	if err != nil {
		return nil, err
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out, nil
}
