// Staff accounts: admin only.

package staff

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// StaffUsers lists the clinic's accounts.
func (s *Service) StaffUsers(ctx context.Context, u User) ([]db.StaffUser, error) {
	if err := requireAdmin(u); err != nil {
		return nil, err
	}
	return db.New(s.pool).StaffUserListByClinic(ctx, u.ClinicID)
}

// CreateStaffUser adds an account.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (email, name, password, role),
// CONFLICT (e-mail taken).
func (s *Service) CreateStaffUser(ctx context.Context, u User, email, name, password, role string) (db.StaffUser, error) {
	if err := requireAdmin(u); err != nil {
		return db.StaffUser{}, err
	}
	email, emailErr := textfield.StaffEmail.Check(email)
	email = strings.ToLower(email)
	name, nameErr := textfield.StaffName.Check(name)
	passwordErr := textfield.CheckPassword(password)
	switch {
	case emailErr != nil:
		return db.StaffUser{}, emailErr
	case !strings.Contains(email, "@"):
		return db.StaffUser{}, apperr.Invalidf("email", "That does not look like an e-mail address.")
	case nameErr != nil:
		return db.StaffUser{}, nameErr
	case passwordErr != nil:
		return db.StaffUser{}, passwordErr
	case role != RoleAdmin && role != RoleStaff:
		return db.StaffUser{}, apperr.Invalidf("role", "The role is admin or staff.")
	}
	hash, err := hashPassword(password)
	if err != nil {
		return db.StaffUser{}, err
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
		return audit(ctx, q, u, "staff.create", "staff_user", row.ID.String(), nil, map[string]string{"email": email, "role": role}, "")
	})
	return row, err
}

// SetDisabled disables an account of the admin's clinic (it can no longer
// sign in; its sessions and streams end at their next check) or enables it
// again. An admin cannot disable their own account, so a clinic is never
// left without one by a slip.
//
// Errors: FORBIDDEN, INVALID_ARGUMENT (id: one's own account), NOT_FOUND.
func (s *Service) SetDisabled(ctx context.Context, u User, id uuid.UUID, disabled bool) (db.StaffUser, error) {
	if err := requireAdmin(u); err != nil {
		return db.StaffUser{}, err
	}
	if disabled && id == u.ID {
		return db.StaffUser{}, apperr.Invalidf("id", "You cannot disable your own account.")
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
			return notFound("account")
		}
		if err != nil {
			return err
		}
		return audit(ctx, q, u, action, "staff_user", id.String(), nil, map[string]string{"email": row.Email}, "")
	})
	return row, err
}
