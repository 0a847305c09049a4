// Staff accounts: ActAccounts (admins only).

package staff

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// Account is a staff account as admins manage it; its password hash stays
// inside the package.
type Account struct {
	ID, ClinicID      uuid.UUID
	Email, Name, Role string
	Version           int32
	CreatedAt         time.Time
	DisabledAt        *time.Time // nil while the account may sign in
}

func accountFromRow(r db.StaffUser) Account {
	return Account{
		ID: r.ID, ClinicID: r.ClinicID, Email: r.Email, Name: r.Name, Role: r.Role,
		Version: r.Version, CreatedAt: r.CreatedAt, DisabledAt: r.DisabledAt,
	}
}

// StaffUsers lists the clinic's accounts.
func (s *Service) StaffUsers(ctx context.Context, u User) ([]Account, error) {
	if err := u.May(ActAccounts); err != nil {
		return nil, err
	}
	rows, err := db.New(s.pool).StaffUserListByClinic(ctx, u.ClinicID)
	return FromRows(rows, err, accountFromRow)
}

// CreateStaffUser adds an account.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (email, name, password, role),
// CONFLICT (e-mail taken).
func (s *Service) CreateStaffUser(ctx context.Context, u User, email, name, password, role string) (Account, error) {
	if err := u.May(ActAccounts); err != nil {
		return Account{}, err
	}
	email, emailErr := textfield.StaffEmail.Check(email)
	email = strings.ToLower(email)
	name, nameErr := textfield.StaffName.Check(name)
	passwordErr := CheckPassword(email, password)
	switch {
	case emailErr != nil:
		return Account{}, emailErr
	case !strings.Contains(email, "@"):
		return Account{}, apperr.Invalidf("email", "That does not look like an e-mail address.")
	case nameErr != nil:
		return Account{}, nameErr
	case passwordErr != nil:
		return Account{}, passwordErr
	case !validRole(role):
		return Account{}, apperr.Invalidf("role", "The role is one of: %s.", strings.Join(Roles, ", "))
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return Account{}, err
	}
	var row db.StaffUser
	err = s.tx(ctx, u, func(q *db.Queries) error {
		var err error
		row, err = q.StaffUserUpsert(ctx, db.StaffUserUpsertParams{ClinicID: u.ClinicID, Email: email, Name: name, PasswordHash: hash, Role: role})
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.New(apperr.Conflict, apperr.CodeEmailTaken, "There is already an account with that e-mail address.")
		}
		if err != nil {
			return err
		}
		return WriteAudit(ctx, q, u, "staff.create", "staff_user", row.ID.String(), nil, map[string]string{"email": email, "role": role}, "")
	})
	return accountFromRow(row), err
}

// SetDisabled disables an account of the admin's clinic (it can no longer
// sign in; its sessions and streams end at their next check) or enables it
// again. An admin cannot disable their own account, so a clinic is never
// left without one by a slip.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (id: one's own account), NOT_FOUND.
func (s *Service) SetDisabled(ctx context.Context, u User, id uuid.UUID, disabled bool) (Account, error) {
	if err := u.May(ActAccounts); err != nil {
		return Account{}, err
	}
	if disabled && id == u.ID {
		return Account{}, apperr.Invalidf("id", "You cannot disable your own account.")
	}
	action := "staff.enable"
	if disabled {
		action = "staff.disable"
	}
	var row db.StaffUser
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		var err error
		row, err = q.StaffUserSetDisabled(ctx, db.StaffUserSetDisabledParams{ID: id, ClinicID: u.ClinicID, Disabled: disabled})
		if errors.Is(err, pgx.ErrNoRows) {
			return NotFound("account")
		}
		if err != nil {
			return err
		}
		return WriteAudit(ctx, q, u, action, "staff_user", id.String(), nil, map[string]string{"email": row.Email}, "")
	})
	return accountFromRow(row), err
}

// SetRole gives another account of the admin's clinic another role; it
// takes effect at the account's next request (each reads the role
// afresh). An admin cannot change their own role, so a clinic is never
// left without one by a slip.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (role; id: one's own account),
// NOT_FOUND.
func (s *Service) SetRole(ctx context.Context, u User, id uuid.UUID, role string) (Account, error) {
	if err := u.May(ActAccounts); err != nil {
		return Account{}, err
	}
	if !validRole(role) {
		return Account{}, apperr.Invalidf("role", "The role is one of: %s.", strings.Join(Roles, ", "))
	}
	if id == u.ID {
		return Account{}, apperr.Invalidf("id", "You cannot change your own role; another admin can.")
	}
	var row db.StaffUser
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		before, err := q.StaffUserGet(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && before.ClinicID != u.ClinicID) {
			return NotFound("account")
		}
		if err != nil {
			return err
		}
		if row, err = q.StaffUserSetRole(ctx, db.StaffUserSetRoleParams{ID: id, ClinicID: u.ClinicID, Role: role}); err != nil {
			return err
		}
		return WriteAudit(ctx, q, u, "staff.role", "staff_user", id.String(),
			map[string]string{"email": before.Email, "role": before.Role}, map[string]string{"email": row.Email, "role": role}, "")
	})
	return accountFromRow(row), err
}
