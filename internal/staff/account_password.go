// A staff member's own password, and the sign-in links admins make for
// colleagues who are locked out.

package staff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// CodeAccountDisabled is the refusal of a sign-in link for a disabled
// account (409): it is enabled first.
const CodeAccountDisabled = "ACCOUNT_DISABLED"

func wrongCurrentPassword() *apperr.Error {
	return apperr.Invalidf("current", "Your current password is not right.")
}

// ChangePassword sets u's own password to next once current is the one
// stored. The new hash has today's cost (see WithHashCost); the audit row names
// the change and nothing of either password. Ending the account's other
// sessions is the caller's part: they live in the web layer's store.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT naming "current" (not the stored
// password) or "password" (see CheckPassword).
func (s *Service) ChangePassword(ctx context.Context, u User, current, next string) error {
	if err := u.May(ActPassword); err != nil {
		return err
	}
	row, err := db.New(s.pool).StaffUserGet(ctx, u.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(current))
		return wrongCurrentPassword()
	}
	if err != nil {
		return fmt.Errorf("load staff user: %w", err)
	}
	hash := []byte(row.PasswordHash)
	if row.PasswordHash == noPassword {
		hash = s.dummyHash()
	}
	// bcrypt reads 72 bytes only: a longer "current" that starts like the
	// real one must not pass.
	if bcrypt.CompareHashAndPassword(hash, []byte(current)) != nil || row.PasswordHash == noPassword ||
		len(current) > textfield.PasswordMaxBytes || row.DisabledAt != nil {
		return wrongCurrentPassword()
	}
	if err := CheckPassword(row.Email, next); err != nil {
		return err
	}
	newHash, err := s.hashPassword(next)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		if _, err := q.StaffUserSetPassword(ctx, db.StaffUserSetPasswordParams{ID: row.ID, PasswordHash: newHash}); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		return WriteAudit(ctx, q, u, "staff.change_password", "staff_user", row.ID.String(), nil, nil, "")
	})
}

// MakeSignInLink makes a one-time sign-in link (LinkLifetime, single use)
// for another account of the admin's clinic, as `clinic staff
// reset-password` does: the account's older unused links stop working and
// its password stays until the link is used. One audit row names the
// admin. Ending the account's sessions is the caller's part.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT naming "id" (one's own account),
// NOT_FOUND, CONFLICT ACCOUNT_DISABLED.
func (s *Service) MakeSignInLink(ctx context.Context, u User, id uuid.UUID, now time.Time) (Account, Link, error) {
	if err := u.May(ActAccounts); err != nil {
		return Account{}, Link{}, err
	}
	if id == u.ID {
		return Account{}, Link{}, apperr.Invalidf("id", "You change your own password on Your account, not with a sign-in link.")
	}
	var acc Account
	var l Link
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.StaffUserGet(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && row.ClinicID != u.ClinicID) {
			return NotFound("account")
		}
		if err != nil {
			return fmt.Errorf("load staff user: %w", err)
		}
		acc = accountFromRow(row)
		if row.DisabledAt != nil {
			return apperr.New(apperr.Conflict, CodeAccountDisabled,
				fmt.Sprintf("%s is disabled: enable the account first, then make a sign-in link.", row.Email))
		}
		if l, err = issueLink(ctx, q, u.ClinicID, row.ID, now); err != nil {
			return err
		}
		return WriteAudit(ctx, q, u, "staff.reset_password", "staff_user", row.ID.String(), nil, map[string]string{"email": row.Email}, "sign-in link")
	})
	if err != nil {
		return Account{}, Link{}, err
	}
	return acc, l, nil
}
