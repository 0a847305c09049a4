// The password policy and the hashing of passwords.

package staff

import (
	"context"
	_ "embed"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/textfield"
)

// The password policy, in one place. A password has at least
// PasswordMinChars characters and at most textfield.PasswordMaxBytes bytes
// (bcrypt reads no further), is not the account's e-mail address, and is
// not one of the common passwords of common_passwords.txt.
const PasswordMinChars = 12

// DefaultHashCost is the bcrypt cost of new password hashes. A sign-in
// whose stored hash has a lower cost stores the password again at this one.
const DefaultHashCost = 12

//go:embed common_passwords.txt
var commonPasswordsText string

var commonPasswords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(commonPasswordsText, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m[strings.ToLower(line)] = true
	}
	return m
})

// IsCommonPassword reports whether pw (case aside) is on the embedded list.
func IsCommonPassword(pw string) bool {
	return commonPasswords()[strings.ToLower(strings.TrimSpace(pw))]
}

// CheckPassword is the password policy for the account of email: used
// when an account is made, when a sign-in link sets a password, and when a
// password is changed.
//
// Errors: INVALID_ARGUMENT naming "password".
func CheckPassword(email, pw string) error {
	switch {
	case utf8.RuneCountInString(pw) < PasswordMinChars:
		return apperr.Invalidf("password", "A password needs at least %d characters.", PasswordMinChars)
	case len(pw) > textfield.PasswordMaxBytes:
		return apperr.Invalidf("password", "A password can be at most %d bytes long (%d plain letters; accented letters and symbols take two to four bytes each).", textfield.PasswordMaxBytes, textfield.PasswordMaxBytes)
	case email != "" && strings.EqualFold(strings.TrimSpace(pw), strings.TrimSpace(email)):
		return apperr.Invalidf("password", "The password cannot be the account's e-mail address.")
	case IsCommonPassword(pw):
		return apperr.Invalidf("password", "That password is on the list of the most common passwords; choose another.")
	}
	return nil
}

// noPassword is the stored hash of an account that has no password yet
// (a clinic's first admin before its sign-in link is used): no bcrypt
// hash, so no password matches it.
const noPassword = "!no-password"

// WithHashCost sets the bcrypt cost of the service's new password hashes
// instead of DefaultHashCost. Test servers that sign in many times lower
// it, as their fixtures' hashes are cheap.
func WithHashCost(cost int) Option {
	return func(s *Service) { s.hashCost = cost }
}

func (s *Service) hashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), s.hashCost)
	return string(h), err
}

// newDummyHash makes the hash compared against when there is no real hash
// to compare (an unknown e-mail, an account without a password), so every
// failure takes the time of a real comparison.
func newDummyHash(cost int) func() []byte {
	return sync.OnceValue(func() []byte {
		h, _ := bcrypt.GenerateFromPassword([]byte("not a real password"), cost)
		return h
	})
}

// needsRehash reports whether a stored hash is weaker than new hashes.
func (s *Service) needsRehash(hash string) bool {
	cost, err := bcrypt.Cost([]byte(hash))
	return err == nil && cost < s.hashCost
}

// rehash stores the password of row, which just signed in, at the
// service's hash cost.
// The sign-in succeeds whatever happens here: a failure is logged and the
// next sign-in tries again, and a password changed meanwhile is left as
// it is.
func (s *Service) rehash(ctx context.Context, row db.StaffUser, pw string) {
	h, err := s.hashPassword(pw)
	if err == nil {
		_, err = db.New(s.pool).StaffUserRehash(ctx, db.StaffUserRehashParams{ID: row.ID, OldHash: row.PasswordHash, NewHash: h})
	}
	if err != nil && s.logger != nil {
		s.logger.Warn("rehash password", "staff", row.ID, "err", err)
	}
}
