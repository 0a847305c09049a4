package staff_test

// Tests of a staff member changing their own password and of the sign-in
// links admins make for colleagues.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

func TestChangePassword(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	for _, role := range staff.Roles {
		u := testkit.StaffUser(t, pool, c.ID, role)
		before := testkit.AuditCount(t, pool, c.ID)

		wantInvalidField(t, svc.ChangePassword(ctx, u, "not my password", newPassword), "current", role+": a wrong current password")
		wantInvalidField(t, svc.ChangePassword(ctx, u, testPassword+strings.Repeat("x", 80), newPassword), "current", role+": a current password past 72 bytes")
		wantInvalidField(t, svc.ChangePassword(ctx, u, testPassword, "too short"), "password", role+": a short new password")
		wantInvalidField(t, svc.ChangePassword(ctx, u, testPassword, u.Email), "password", role+": the e-mail as password")
		wantInvalidField(t, svc.ChangePassword(ctx, u, testPassword, "password1234"), "password", role+": a common password")
		if n := testkit.AuditCount(t, pool, c.ID); n != before {
			t.Fatalf("%s: refused changes wrote %d audit rows", role, n-before)
		}

		if err := svc.ChangePassword(ctx, u, testPassword, newPassword); err != nil {
			t.Fatalf("%s: change: %v", role, err)
		}
		_, err := svc.Authenticate(ctx, u.Email, testPassword)
		testkit.WantCode(t, err, "BAD_CREDENTIALS", role+": the old password after the change")
		if _, err := svc.Authenticate(ctx, u.Email, newPassword); err != nil {
			t.Fatalf("%s: the new password does not sign in: %v", role, err)
		}
		row, err := db.New(pool).StaffUserGet(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cost, _ := bcrypt.Cost([]byte(row.PasswordHash)); cost != testHashCost {
			t.Errorf("%s: the new hash has cost %d, want %d", role, cost, testHashCost)
		}
		rows := testkit.AuditRows(t, pool, "staff_user", u.ID.String())
		if testkit.CountAction(rows, "staff.change_password") != 1 || testkit.AuditCount(t, pool, c.ID) != before+1 {
			t.Fatalf("%s: audit rows %+v", role, rows)
		}
		for _, r := range rows {
			all := string(r.Before) + string(r.After) + r.Reason
			if strings.Contains(all, newPassword) || strings.Contains(all, testPassword) || strings.Contains(all, "$2a$") {
				t.Errorf("%s: the audit row holds password material: %s", role, all)
			}
			if r.Actor != u.Actor() {
				t.Errorf("%s: the audit row names %q", role, r.Actor)
			}
		}
	}
}

func TestMakeSignInLink(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	svc := newService(pool, nil)
	ctx := context.Background()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	colleague := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)

	old, oldLink, err := svc.MakeSignInLink(ctx, admin, colleague.ID, time.Now())
	if err != nil || old.ID != colleague.ID {
		t.Fatalf("first link: %+v, %v", old, err)
	}
	acc, l, err := svc.MakeSignInLink(ctx, admin, colleague.ID, time.Now())
	if err != nil || acc.Email != colleague.Email {
		t.Fatalf("second link: %+v, %v", acc, err)
	}
	if d := time.Until(l.ExpiresAt); d < 23*time.Hour || d > staff.LinkLifetime {
		t.Errorf("the link lasts %s, want 24 h", d)
	}
	_, err = svc.PeekLink(ctx, oldLink.Token, time.Now())
	testkit.WantCode(t, err, staff.CodeLinkReplaced, "the older link")
	// The password stays until the link is used.
	if _, err := svc.Authenticate(ctx, colleague.Email, testPassword); err != nil {
		t.Fatalf("the password stopped working before the link was used: %v", err)
	}
	rows := testkit.AuditRows(t, pool, "staff_user", colleague.ID.String())
	if n := testkit.CountAction(rows, "staff.reset_password"); n != 2 {
		t.Fatalf("%d reset audit rows, want 2", n)
	}
	if rows[len(rows)-1].Actor != admin.Actor() && rows[0].Actor != admin.Actor() {
		t.Errorf("the audit row does not name the admin: %+v", rows)
	}
	if _, err := svc.UseLink(ctx, l.Token, newPassword, time.Now()); err != nil {
		t.Fatalf("use the link: %v", err)
	}
	_, err = svc.UseLink(ctx, l.Token, "yet another passphrase", time.Now())
	testkit.WantCode(t, err, staff.CodeLinkUsed, "the link a second time")

	before := testkit.AuditCount(t, pool, c.ID)
	_, _, err = svc.MakeSignInLink(ctx, admin, admin.ID, time.Now())
	wantInvalidField(t, err, "id", "a link for one's own account")
	_, _, err = svc.MakeSignInLink(ctx, admin, uuid.New(), time.Now())
	testkit.WantCode(t, err, apperr.CodeNotFound, "an unknown account")
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	stranger := testkit.StaffUser(t, pool, other.ID, staff.RoleStaff)
	_, _, err = svc.MakeSignInLink(ctx, admin, stranger.ID, time.Now())
	testkit.WantCode(t, err, apperr.CodeNotFound, "another clinic's account")
	if _, err := svc.SetDisabled(ctx, admin, colleague.ID, true); err != nil {
		t.Fatal(err)
	}
	before++ // the disable's own row
	_, _, err = svc.MakeSignInLink(ctx, admin, colleague.ID, time.Now())
	testkit.WantCode(t, err, staff.CodeAccountDisabled, "a disabled account")
	if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Conflict || !strings.Contains(ae.Message, "enable") {
		t.Errorf("a disabled account: %v, want 409 saying to enable it first", err)
	}
	for _, role := range []string{staff.RoleStaff, staff.RoleReception} {
		_, _, err = svc.MakeSignInLink(ctx, testkit.StaffUser(t, pool, c.ID, role), colleague.ID, time.Now())
		testkit.WantCode(t, err, apperr.CodeForbidden, role+" makes a link")
	}
	if n := testkit.AuditCount(t, pool, c.ID); n != before {
		t.Errorf("refused links wrote %d audit rows", n-before)
	}
}
