// The second factor: an account's TOTP, set up on Your account, asked
// for at sign-in after the password, with single-use recovery codes;
// admins reset a colleague's and may require one of every account.

package staff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	auditlog "github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
)

// CodeSecondFactorOn refuses a set-up of an account whose second factor
// is on already (409).
const CodeSecondFactorOn = "SECOND_FACTOR_ON"

// WithKey gives the service the server's key, from which it derives the
// keys that seal TOTP secrets and hash recovery codes.
func WithKey(serverKey []byte) Option {
	return func(s *Service) { s.keys = deriveKeys(serverKey) }
}

// ErrBadCode is the one answer to a wrong, reused or malformed code at
// sign-in, as a wrong password has one.
func ErrBadCode() *apperr.Error {
	return apperr.New(apperr.Unauthorized, apperr.CodeBadCredentials, "The code is not right.")
}

// Enrollment is a second factor being set up: the secret as text and the
// otpauth:// address the QR code carries.
type Enrollment struct {
	Secret string
	URI    string
}

// SecondFactorStatus is what Your account says of the second factor.
type SecondFactorStatus struct {
	On            bool
	RecoveryCodes int // left unused
	Required      bool
}

// SecondFactor says whether u's second factor is on and how many recovery
// codes are left.
//
// Errors: FORBIDDEN.
func (s *Service) SecondFactor(ctx context.Context, u User) (SecondFactorStatus, error) {
	if err := u.May(ActSecondFactor); err != nil {
		return SecondFactorStatus{}, err
	}
	q := db.New(s.pool)
	st := SecondFactorStatus{Required: u.SecondFactorRequired}
	row, err := q.SecondFactorGet(ctx, u.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	st.On = row.ConfirmedAt != nil
	n, err := q.RecoveryCodeCount(ctx, u.ID)
	st.RecoveryCodes = int(n)
	return st, err
}

// SecondFactorsOn are the accounts of u's clinic whose second factor is
// on, for the accounts page.
//
// Errors: FORBIDDEN.
func (s *Service) SecondFactorsOn(ctx context.Context, u User) (map[uuid.UUID]bool, error) {
	if err := u.May(ActAccounts); err != nil {
		return nil, err
	}
	ids, err := db.New(s.pool).SecondFactorOnInClinic(ctx, u.ClinicID)
	if err != nil {
		return nil, err
	}
	on := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		on[id] = true
	}
	return on, nil
}

// StartSecondFactor is the secret u sets up: the one from an earlier visit
// while it is not confirmed, else a new one. The QR code names the clinic
// as issuer and u's e-mail address as the account.
//
// Errors: FORBIDDEN, CONFLICT SECOND_FACTOR_ON.
func (s *Service) StartSecondFactor(ctx context.Context, u User) (Enrollment, error) {
	if err := u.May(ActSecondFactor); err != nil {
		return Enrollment{}, err
	}
	q := db.New(s.pool)
	clinic, err := q.ClinicGet(ctx, u.ClinicID)
	if err != nil {
		return Enrollment{}, fmt.Errorf("load clinic: %w", err)
	}
	row, err := q.SecondFactorGet(ctx, u.ID)
	switch {
	case err == nil && row.ConfirmedAt != nil:
		return Enrollment{}, secondFactorOn()
	case err == nil:
		secret, err := s.keys.openSecret(u.ID, row.SecretSealed)
		if err == nil {
			uri, err := totpURI(clinic.Name, u.Email, secret)
			return Enrollment{Secret: secret, URI: uri}, err
		}
		// A secret sealed under another key: start over.
	case !errors.Is(err, pgx.ErrNoRows):
		return Enrollment{}, err
	}
	secret, uri, err := newTOTPKey(clinic.Name, u.Email)
	if err != nil {
		return Enrollment{}, err
	}
	sealed, err := s.keys.sealSecret(u.ID, secret)
	if err != nil {
		return Enrollment{}, err
	}
	if _, err := q.SecondFactorStart(ctx, db.SecondFactorStartParams{StaffUserID: u.ID, SecretSealed: sealed}); errors.Is(err, pgx.ErrNoRows) {
		return Enrollment{}, secondFactorOn()
	} else if err != nil {
		return Enrollment{}, fmt.Errorf("start second factor: %w", err)
	}
	return Enrollment{Secret: secret, URI: uri}, nil
}

func secondFactorOn() *apperr.Error {
	return apperr.New(apperr.Conflict, CodeSecondFactorOn, "Your second factor is on already.")
}

// ConfirmSecondFactor turns u's second factor on once code is a current
// code of the secret being set up, and returns the account's new recovery
// codes, which appear nowhere else (only their keyed hashes are stored).
// The code's time step counts as used.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT naming "code", CONFLICT
// SECOND_FACTOR_ON.
func (s *Service) ConfirmSecondFactor(ctx context.Context, u User, code string, now time.Time) ([]string, error) {
	if err := u.May(ActSecondFactor); err != nil {
		return nil, err
	}
	wrong := apperr.Invalidf("code", "That code is not the one your app shows now. Type the six digits it shows for this account.")
	row, err := db.New(s.pool).SecondFactorGet(ctx, u.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, wrong
	}
	if err != nil {
		return nil, err
	}
	if row.ConfirmedAt != nil {
		return nil, secondFactorOn()
	}
	secret, err := s.keys.openSecret(u.ID, row.SecretSealed)
	if err != nil {
		return nil, err
	}
	digits, ok := totpCode(code)
	if !ok {
		return nil, wrong
	}
	step, ok := matchStep(secret, digits, now)
	if !ok {
		return nil, wrong
	}
	codes := make([]string, RecoveryCodeCount)
	for i := range codes {
		if codes[i], err = newRecoveryCode(); err != nil {
			return nil, err
		}
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		if _, err := q.SecondFactorConfirm(ctx, db.SecondFactorConfirmParams{StaffUserID: u.ID, Now: &now, Step: step}); errors.Is(err, pgx.ErrNoRows) {
			return secondFactorOn()
		} else if err != nil {
			return fmt.Errorf("confirm second factor: %w", err)
		}
		if err := s.storeRecoveryCodes(ctx, q, u.ID, codes); err != nil {
			return err
		}
		return WriteAudit(ctx, q, u, "staff.second_factor_on", "staff_user", u.ID.String(), nil, nil, "")
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

func (s *Service) storeRecoveryCodes(ctx context.Context, q *db.Queries, id uuid.UUID, codes []string) error {
	if err := q.RecoveryCodesDelete(ctx, id); err != nil {
		return fmt.Errorf("delete recovery codes: %w", err)
	}
	for _, c := range codes {
		n, _ := normalRecoveryCode(c)
		if err := q.RecoveryCodeInsert(ctx, db.RecoveryCodeInsertParams{StaffUserID: id, CodeHash: s.keys.recoveryHash(id, n)}); err != nil {
			return fmt.Errorf("store recovery code: %w", err)
		}
	}
	return nil
}

// CheckSecondFactor is the second step of signing in as the account id:
// code is a current TOTP code whose time step the account has not used
// yet (that step is then used), or one of its recovery codes (then used
// up). Of two sign-ins with one code, even at the same moment, one
// passes: the step is taken by a compare-and-set, the recovery code by
// one DELETE.
//
// Errors: BAD_CREDENTIALS (401), one message for every kind of wrong code.
func (s *Service) CheckSecondFactor(ctx context.Context, id uuid.UUID, code string, now time.Time) error {
	q := db.New(s.pool)
	row, err := q.SecondFactorGet(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && row.ConfirmedAt == nil) {
		return ErrBadCode()
	}
	if err != nil {
		return fmt.Errorf("load second factor: %w", err)
	}
	if digits, ok := totpCode(code); ok {
		secret, err := s.keys.openSecret(id, row.SecretSealed)
		if err != nil {
			return err
		}
		step, ok := matchStep(secret, digits, now)
		if !ok {
			return ErrBadCode()
		}
		n, err := q.SecondFactorUseStep(ctx, db.SecondFactorUseStepParams{StaffUserID: id, Step: step})
		if err != nil {
			return fmt.Errorf("use code: %w", err)
		}
		if n != 1 {
			return ErrBadCode()
		}
		return nil
	}
	if s.keys.recovery == nil {
		return errNoKey
	}
	norm, ok := normalRecoveryCode(code)
	if !ok {
		return ErrBadCode()
	}
	return s.useRecoveryCode(ctx, id, norm)
}

// useRecoveryCode deletes the code's row and writes the audit row in one
// transaction; a code someone else used first deletes nothing.
func (s *Service) useRecoveryCode(ctx context.Context, id uuid.UUID, norm string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		n, err := q.RecoveryCodeUse(ctx, db.RecoveryCodeUseParams{StaffUserID: id, CodeHash: s.keys.recoveryHash(id, norm)})
		if err != nil {
			return fmt.Errorf("use recovery code: %w", err)
		}
		if n != 1 {
			return ErrBadCode()
		}
		row, err := q.StaffUserGet(ctx, id)
		if err != nil {
			return err
		}
		return WriteAudit(ctx, q, userOf(row), "staff.recovery_code_used", "staff_user", id.String(), nil, nil, "")
	})
}

// ResetSecondFactor turns the second factor of another account of the
// admin's clinic off and deletes its recovery codes (its owner sets one
// up again, at once when the clinic requires it), and ends the account's
// listed sessions. The audit row names the account, nothing secret.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT naming "id" (one's own account),
// NOT_FOUND.
func (s *Service) ResetSecondFactor(ctx context.Context, u User, id uuid.UUID, now time.Time) (Account, error) {
	if err := u.May(ActSecondFactorAdmin); err != nil {
		return Account{}, err
	}
	if id == u.ID {
		return Account{}, apperr.Invalidf("id", "You cannot reset your own second factor here; another admin can, or the command line (clinic staff reset-2fa).")
	}
	var acc Account
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.StaffUserGet(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && row.ClinicID != u.ClinicID) {
			return NotFound("account")
		}
		if err != nil {
			return err
		}
		acc = accountFromRow(row)
		if _, err := resetSecondFactor(ctx, q, id, now); err != nil {
			return err
		}
		return WriteAudit(ctx, q, u, "staff.reset_second_factor", "staff_user", id.String(), nil, map[string]string{"email": row.Email}, "")
	})
	return acc, err
}

// ResetSecondFactorByEmail is the command line's reset (`clinic staff
// reset-2fa`): the account of email at the clinic slug, whoever is left
// to sign in. It says whether the account had a second factor.
//
// Errors: INVALID_ARGUMENT naming "email", NOT_FOUND.
func (s *Service) ResetSecondFactorByEmail(ctx context.Context, email, slug string, now time.Time) (Account, bool, error) {
	email, err := CheckEmail(email)
	if err != nil {
		return Account{}, false, err
	}
	var acc Account
	var had bool
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		row, err := q.StaffUserGetInClinicBySlug(ctx, db.StaffUserGetInClinicBySlugParams{Email: email, Slug: slug})
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.NotFoundf("email", "No account %s at the clinic %q.", email, slug)
		}
		if err != nil {
			return err
		}
		acc = accountFromRow(row)
		if had, err = resetSecondFactor(ctx, q, row.ID, now); err != nil {
			return err
		}
		return auditlog.Write(ctx, q, auditlog.Entry{
			ClinicID: row.ClinicID, Actor: ActorCLI, Action: "staff.reset_second_factor", Entity: "staff_user", EntityID: row.ID.String(),
			After: map[string]string{"email": row.Email},
		})
	})
	return acc, had, err
}

// resetSecondFactor deletes the account's second factor and recovery
// codes and ends its listed sessions, with q (the caller's transaction);
// had says whether its second factor was on.
func resetSecondFactor(ctx context.Context, q *db.Queries, id uuid.UUID, now time.Time) (had bool, err error) {
	on, err := q.SecondFactorDelete(ctx, id)
	if err != nil {
		return false, fmt.Errorf("delete second factor: %w", err)
	}
	if err := q.RecoveryCodesDelete(ctx, id); err != nil {
		return false, fmt.Errorf("delete recovery codes: %w", err)
	}
	_, err = endSessions(ctx, q, id, uuid.Nil, true, nil, now)
	return len(on) == 1 && on[0], err
}

// SetSecondFactorRequired makes a second factor required of every account
// of the admin's clinic, or no longer. An account without one is taken to
// its set-up at its next request. Setting what is set already changes
// nothing and writes no audit row.
//
// Errors: FORBIDDEN.
func (s *Service) SetSecondFactorRequired(ctx context.Context, u User, required bool) error {
	if err := u.May(ActSecondFactorAdmin); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		n, err := q.ClinicSetRequireSecondFactor(ctx, db.ClinicSetRequireSecondFactorParams{ID: u.ClinicID, Required: required})
		if err != nil {
			return fmt.Errorf("require second factor: %w", err)
		}
		if n == 0 {
			return nil // as it was: nothing to record
		}
		return WriteAudit(ctx, q, u, "clinic.require_second_factor", "clinic", u.ClinicID.String(),
			nil, map[string]bool{"required": required}, "")
	})
}
