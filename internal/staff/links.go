// One-time sign-in links: how an account without a password (a clinic's
// first admin) or one whose password was reset chooses its password.

package staff

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/clinic/booking/internal/apperr"
	auditlog "github.com/clinic/booking/internal/audit"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/textfield"
)

// LinkLifetime is how long a sign-in link works.
const LinkLifetime = 24 * time.Hour

// Codes of a link that no longer works (410).
const (
	CodeLinkUsed     = "LINK_USED"
	CodeLinkExpired  = "LINK_EXPIRED"
	CodeLinkReplaced = "LINK_REPLACED"
	CodeLinkDisabled = "ACCOUNT_DISABLED"
)

// ActorCLI names the command line in audit rows.
const ActorCLI = "cli"

// Link is a sign-in link as it is handed out: the token appears nowhere
// else (only its SHA-256 is stored).
type Link struct {
	Token     string
	ExpiresAt time.Time
}

// URL is the link on the server whose public address is base.
func (l Link) URL(base string) string {
	return strings.TrimRight(base, "/") + "/staff/welcome/" + l.Token
}

// LinkInfo is what the page of a link shows before it is used.
type LinkInfo struct {
	Email      string
	ClinicName string
}

const tokenBytes = 32

// tokenHash is what is stored of a token; a token that is not one this
// package could have made has none.
func tokenHash(token string) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != tokenBytes {
		return nil, false
	}
	return secret.Hash(token), true
}

func linkNotFound() *apperr.Error {
	return apperr.NotFoundf("token", "This sign-in link is not known. Check that the whole link was copied, or ask for a new one.")
}

// issueLink makes a new link for the account with q (the caller's
// transaction); the account's older links that were never used stop
// working.
func issueLink(ctx context.Context, q *db.Queries, clinicID, userID uuid.UUID, now time.Time) (Link, error) {
	token, err := secret.NewToken(tokenBytes)
	if err != nil {
		return Link{}, err
	}
	l := Link{Token: token, ExpiresAt: now.Add(LinkLifetime)}
	h, _ := tokenHash(l.Token)
	if _, err := q.SigninLinkRevokeUnused(ctx, db.SigninLinkRevokeUnusedParams{StaffUserID: userID, Now: &now}); err != nil {
		return Link{}, fmt.Errorf("revoke older links: %w", err)
	}
	if _, err := q.SigninLinkInsert(ctx, db.SigninLinkInsertParams{
		ClinicID: clinicID, StaffUserID: userID, TokenHash: h, ExpiresAt: l.ExpiresAt,
	}); err != nil {
		return Link{}, fmt.Errorf("insert sign-in link: %w", err)
	}
	return l, nil
}

// CheckEmail is a staff e-mail address as it is stored (trimmed, lower
// case).
//
// Errors: INVALID_ARGUMENT naming "email".
func CheckEmail(email string) (string, error) {
	email, err := textfield.StaffEmail.Check(email)
	if err != nil {
		return "", err
	}
	email = strings.ToLower(email)
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || strings.ContainsAny(email, " ,;<>") {
		return "", apperr.Invalidf("email", "%q does not look like an e-mail address.", email)
	}
	return email, nil
}

// CreateFirstAdmin makes the admin account of a new clinic with q (the
// clinic's transaction): no usable password, an audit row, and a sign-in
// link for choosing one.
//
// Errors: INVALID_ARGUMENT naming "email", CONFLICT EMAIL_TAKEN.
func CreateFirstAdmin(ctx context.Context, q *db.Queries, clinicID uuid.UUID, email string, now time.Time) (Account, Link, error) {
	email, err := CheckEmail(email)
	if err != nil {
		return Account{}, Link{}, err
	}
	row, err := q.StaffUserUpsert(ctx, db.StaffUserUpsertParams{
		ClinicID: clinicID, Email: email, Name: "", PasswordHash: noPassword, Role: RoleAdmin,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, Link{}, apperr.New(apperr.Conflict, apperr.CodeEmailTaken, "There is already an account with that e-mail address.")
	}
	if err != nil {
		return Account{}, Link{}, fmt.Errorf("create admin: %w", err)
	}
	if err := auditlog.Write(ctx, q, auditlog.Entry{
		ClinicID: clinicID, Actor: ActorCLI, Action: "staff.create", Entity: "staff_user", EntityID: row.ID.String(),
		After: map[string]string{"email": email, "role": RoleAdmin},
	}); err != nil {
		return Account{}, Link{}, err
	}
	l, err := issueLink(ctx, q, clinicID, row.ID, now)
	return accountFromRow(row), l, err
}

// ResetLink makes a new sign-in link for the account of email (of the
// clinic with slug clinicSlug, when it is not empty); its older unused
// links stop working. The password stays as it is until the link is used.
//
// Errors: INVALID_ARGUMENT naming "email", NOT_FOUND.
func (s *Service) ResetLink(ctx context.Context, email, clinicSlug string, now time.Time) (Account, Link, error) {
	email, err := CheckEmail(email)
	if err != nil {
		return Account{}, Link{}, err
	}
	var acc Account
	var l Link
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		var row db.StaffUser
		var err error
		if clinicSlug != "" {
			row, err = q.StaffUserGetInClinicBySlug(ctx, db.StaffUserGetInClinicBySlugParams{Email: email, Slug: clinicSlug})
		} else {
			row, err = q.StaffUserGetByEmail(ctx, email)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			if clinicSlug != "" {
				return apperr.NotFoundf("email", "No account %s at the clinic %q.", email, clinicSlug)
			}
			return apperr.NotFoundf("email", "No account %s.", email)
		}
		if err != nil {
			return err
		}
		acc = accountFromRow(row)
		if l, err = issueLink(ctx, q, row.ClinicID, row.ID, now); err != nil {
			return err
		}
		return auditlog.Write(ctx, q, auditlog.Entry{
			ClinicID: row.ClinicID, Actor: ActorCLI, Action: "staff.reset_password", Entity: "staff_user", EntityID: row.ID.String(),
		})
	})
	return acc, l, err
}

// linkUsable says why a link no longer works, or nil when it does.
func linkUsable(l db.SigninLinkGetRow, now time.Time) error {
	switch {
	case l.UsedAt != nil:
		return apperr.New(apperr.Gone, CodeLinkUsed, "This sign-in link was used already; a link works once. Ask an admin for a new one (bin/clinic staff reset-password).")
	case l.RevokedAt != nil:
		return apperr.New(apperr.Gone, CodeLinkReplaced, "A newer sign-in link was made for this account, so this one no longer works. Use the newest link.")
	case !now.Before(l.ExpiresAt):
		return apperr.New(apperr.Gone, CodeLinkExpired, "This sign-in link expired (a link works for 24 hours). Ask an admin for a new one (bin/clinic staff reset-password).")
	case l.DisabledAt != nil:
		return apperr.New(apperr.Gone, CodeLinkDisabled, "This account is disabled; an admin of the clinic can enable it again.")
	}
	return nil
}

// PeekLink is the account a link is for, without using it.
//
// Errors: NOT_FOUND (an unknown or altered token), GONE (LINK_USED,
// LINK_EXPIRED, LINK_REPLACED, ACCOUNT_DISABLED).
func (s *Service) PeekLink(ctx context.Context, token string, now time.Time) (LinkInfo, error) {
	l, err := s.findLink(ctx, db.New(s.pool), token)
	if err != nil {
		return LinkInfo{}, err
	}
	if err := linkUsable(l, now); err != nil {
		return LinkInfo{}, err
	}
	return LinkInfo{Email: l.Email, ClinicName: l.ClinicName}, nil
}

func (s *Service) findLink(ctx context.Context, q *db.Queries, token string) (db.SigninLinkGetRow, error) {
	h, ok := tokenHash(token)
	if !ok {
		return db.SigninLinkGetRow{}, linkNotFound()
	}
	l, err := q.SigninLinkGet(ctx, h)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, linkNotFound()
	}
	if err != nil {
		return l, fmt.Errorf("find sign-in link: %w", err)
	}
	return l, nil
}

// UseLink sets the password of the link's account and uses the link up,
// in one transaction with the audit row: of any number of uses, even at
// the same moment, exactly one succeeds.
//
// Errors: NOT_FOUND, GONE (as PeekLink), INVALID_ARGUMENT naming
// "password" (see CheckPassword).
func (s *Service) UseLink(ctx context.Context, token, password string, now time.Time) (User, error) {
	l, err := s.findLink(ctx, db.New(s.pool), token)
	if err != nil {
		return User{}, err
	}
	if err := linkUsable(l, now); err != nil {
		return User{}, err
	}
	if err := CheckPassword(l.Email, password); err != nil {
		return User{}, err
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return User{}, err
	}
	var row db.StaffUser
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := db.New(tx)
		h, _ := tokenHash(token)
		_, err := q.SigninLinkConsume(ctx, db.SigninLinkConsumeParams{TokenHash: h, Now: &now})
		if errors.Is(err, pgx.ErrNoRows) {
			// Used (or replaced) since it was read: say how it is now.
			if l, err := s.findLink(ctx, q, token); err != nil {
				return err
			} else if err := linkUsable(l, now); err != nil {
				return err
			}
			return apperr.New(apperr.Gone, CodeLinkUsed, "This sign-in link was used already; a link works once.")
		}
		if err != nil {
			return fmt.Errorf("use sign-in link: %w", err)
		}
		if row, err = q.StaffUserSetPassword(ctx, db.StaffUserSetPasswordParams{ID: l.StaffUserID, PasswordHash: hash}); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		if row.DisabledAt != nil {
			return apperr.New(apperr.Gone, CodeLinkDisabled, "This account is disabled; an admin of the clinic can enable it again.")
		}
		return WriteAudit(ctx, q, userOf(row), "staff.set_password", "staff_user", row.ID.String(), nil, nil, "sign-in link")
	})
	if err != nil {
		return User{}, err
	}
	return userOf(row), nil
}
