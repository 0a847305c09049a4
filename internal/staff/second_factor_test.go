package staff_test

import (
	"context"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// secondFactorOn sets up and confirms u's second factor with svc and
// returns its secret and recovery codes.
func secondFactorOn(t *testing.T, svc *staff.Service, u staff.User) (string, []string) {
	t.Helper()
	ctx := context.Background()
	en, err := svc.StartSecondFactor(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := totp.GenerateCode(en.Secret, time.Now())
	codes, err := svc.ConfirmSecondFactor(ctx, u, code, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return en.Secret, codes
}

func TestSecondFactorCodes(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	key := []byte("a server key of thirty-two bytes or more, for tests")
	svc := staff.New(pool, nil, quietLogger(), staff.WithKey(key))
	ctx := context.Background()

	t.Run("OneCodeAtOnceSignsInOnce", func(t *testing.T) {
		t.Parallel()
		u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
		secret, _ := secondFactorOn(t, svc, u)
		code, _ := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
		errs := testkit.Race(8, func(int) error { return svc.CheckSecondFactor(ctx, u.ID, code, time.Now()) })
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case apperr.CodeOf(err) != apperr.CodeBadCredentials:
				t.Errorf("a refusal: %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of 8 sign-ins with one code passed, want 1", ok)
		}
	})

	t.Run("AnotherServerKeyOpensNothing", func(t *testing.T) {
		t.Parallel()
		u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
		secret, codes := secondFactorOn(t, svc, u)
		other := staff.New(pool, nil, quietLogger(), staff.WithKey([]byte("another server key of thirty-two bytes or more")))
		code, _ := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
		if err := other.CheckSecondFactor(ctx, u.ID, code, time.Now()); err == nil {
			t.Error("a service with another key took the code")
		}
		if err := other.CheckSecondFactor(ctx, u.ID, codes[0], time.Now()); apperr.CodeOf(err) != apperr.CodeBadCredentials {
			t.Errorf("a service with another key and a recovery code: %v", err)
		}
		// With the right key, a recovery code typed in any case and spacing.
		if err := svc.CheckSecondFactor(ctx, u.ID, " "+upper(codes[1])+" ", time.Now()); err != nil {
			t.Errorf("the recovery code in upper case: %v", err)
		}
	})

	t.Run("SetUpOnceOnly", func(t *testing.T) {
		t.Parallel()
		u := testkit.StaffUser(t, pool, c.ID, staff.RoleReception)
		secondFactorOn(t, svc, u)
		if _, err := svc.StartSecondFactor(ctx, u); apperr.CodeOf(err) != staff.CodeSecondFactorOn {
			t.Errorf("a second set-up: %v, want %s", err, staff.CodeSecondFactorOn)
		}
		if _, err := svc.ConfirmSecondFactor(ctx, u, "123456", time.Now()); apperr.CodeOf(err) != staff.CodeSecondFactorOn {
			t.Errorf("a second confirmation: %v, want %s", err, staff.CodeSecondFactorOn)
		}
	})
}

func upper(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= 'a' && ch <= 'z' {
			b[i] = ch - 'a' + 'A'
		}
	}
	return string(b)
}
