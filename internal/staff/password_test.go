package staff_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

func TestPasswordPolicy(t *testing.T) {
	t.Parallel()
	const email = "Owner@Example.org"
	for _, tc := range []struct {
		name, pw string
		ok       bool
		says     string
	}{
		{"Empty", "", false, "at least 12"},
		{"ElevenCharacters", "abcdefghij1", false, "at least 12"},
		{"TwelveCharacters", "tulip-river9", true, ""},
		{"TwelveAccentedCharactersCountAsTwelve", strings.Repeat("é", 12), true, ""},
		{"72Bytes", strings.Repeat("k", 72), true, ""},
		{"73Bytes", strings.Repeat("k", 73), false, "72"},
		{"37TwoByteLetters", strings.Repeat("é", 37), false, "72"},
		{"TheEmail", "owner@example.org", false, "e-mail"},
		{"TheEmailInOtherCase", "OWNER@EXAMPLE.ORG", false, "e-mail"},
		{"Common", "password1234", false, "common"},
		{"CommonInOtherCase", "PassWord1234", false, "common"},
		{"CommonKeyboardWalk", "1q2w3e4r5t6y", false, "common"},
		{"Passphrase", "violet kettle sings", true, ""},
	} {
		err := staff.CheckPassword(email, tc.pw)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case !tc.ok && err == nil:
			t.Errorf("%s: accepted", tc.name)
		case !tc.ok:
			wantInvalidField(t, err, "password", tc.name)
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s: %q does not say %q", tc.name, err, tc.says)
			}
		}
	}
}

func TestCommonPasswordListIsEmbedded(t *testing.T) {
	t.Parallel()
	n := 0
	for _, pw := range []string{"password12345", "qwertyuiop123", "iloveyou1234", "passwort1234", "123456789012", "correcthorsebatterystaple"} {
		if staff.IsCommonPassword(pw) {
			n++
		} else {
			t.Errorf("%q is not on the list", pw)
		}
	}
	if staff.IsCommonPassword("# Common passwords of 12 characters or more (shorter ones fail the length") {
		t.Error("the list's comment counts as a password")
	}
	if staff.DefaultHashCost != 12 {
		t.Errorf("default hash cost %d, want 12", staff.DefaultHashCost)
	}
}

// A sign-in with a hash of a lower cost than new hashes get stores the
// password again at that cost; the next sign-in still works, a wrong
// password still does not.
func TestSignInRehashesAWeakHash(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := newService(pool, nil)
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff) // hashed at bcrypt.MinCost
	ctx := context.Background()
	costOf := func() int {
		row, err := db.New(pool).StaffUserGet(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		cost, err := bcrypt.Cost([]byte(row.PasswordHash))
		if err != nil {
			t.Fatal(err)
		}
		return cost
	}
	if got := costOf(); got != bcrypt.MinCost {
		t.Fatalf("fixture cost %d", got)
	}
	if _, err := svc.Authenticate(ctx, u.Email, "wrong password!"); err == nil {
		t.Fatal("a wrong password signs in")
	}
	if got := costOf(); got != bcrypt.MinCost {
		t.Fatalf("a failed sign-in rehashed (cost %d)", got)
	}
	if _, err := svc.Authenticate(ctx, u.Email, testPassword); err != nil {
		t.Fatal(err)
	}
	if got := costOf(); got != testHashCost {
		t.Fatalf("after sign-in the hash has cost %d, want %d", got, testHashCost)
	}
	if _, err := svc.Authenticate(ctx, u.Email, testPassword); err != nil {
		t.Fatalf("sign-in after the rehash: %v", err)
	}
	_, err := svc.Authenticate(ctx, u.Email, "wrong password!")
	testkit.WantCode(t, err, "BAD_CREDENTIALS", "wrong password after the rehash")
}

// bcrypt takes 72 bytes at most: a longer password is a 400 when an
// account is made, and never signs in (bcrypt would compare its first 72
// bytes only).
func TestStaffPasswordsOver72Bytes(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := newService(pool, nil)
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()

	for _, pw := range []string{strings.Repeat("p", 73), strings.Repeat("é", 37)} {
		_, err := svc.CreateStaffUser(ctx, admin, "pw-"+uuid.NewString()[:8]+"@example.org", "Nurse", pw, staff.RoleStaff)
		if ae := apperr.As(err); ae == nil || ae.Code != "INVALID_ARGUMENT" || ae.Field() != "password" {
			t.Errorf("%d-byte password: %v, want INVALID_ARGUMENT naming password", len(pw), err)
		}
	}
	pw := strings.Repeat("p", 72)
	email := "pw72-" + uuid.NewString()[:8] + "@example.org"
	if _, err := svc.CreateStaffUser(ctx, admin, email, "Nurse", pw, staff.RoleStaff); err != nil {
		t.Fatalf("a 72-byte password: %v", err)
	}
	if _, err := svc.Authenticate(ctx, email, pw); err != nil {
		t.Fatalf("sign-in with the 72-byte password: %v", err)
	}
	_, err := svc.Authenticate(ctx, email, pw+"x")
	testkit.WantCode(t, err, "BAD_CREDENTIALS", "sign-in with a byte more")
}
