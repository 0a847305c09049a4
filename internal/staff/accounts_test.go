package staff_test

// Staff accounts: signing in, the admin-only actions a plain staff member
// is refused, and what admins see of the accounts they manage.

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// A wrong e-mail and a wrong password fail the same way.
func TestStaffAuthenticate(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := newService(pool, nil)
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()

	got, err := svc.Authenticate(ctx, "  "+strings.ToUpper(u.Email)+" ", testPassword)
	if err != nil || got.ID != u.ID || got.ClinicID != c.ID || got.Role != staff.RoleAdmin {
		t.Fatalf("sign-in with the right password (e-mail in other case, padded): %+v, %v", got, err)
	}
	_, errPw := svc.Authenticate(ctx, u.Email, "wrong password!")
	_, errMail := svc.Authenticate(ctx, "nobody-"+uuid.NewString()+"@example.org", testPassword)
	a, b := apperr.As(errPw), apperr.As(errMail)
	if a == nil || b == nil || a.Code != "BAD_CREDENTIALS" || a.Code != b.Code || a.Message != b.Message || a.Kind != apperr.Unauthorized || a.Kind != b.Kind {
		t.Fatalf("wrong password: %v; wrong e-mail: %v; want one and the same BAD_CREDENTIALS", errPw, errMail)
	}
	if got.Actor() != "staff:"+u.Email {
		t.Fatalf("actor %q", got.Actor())
	}
}

// A plain staff member cannot do what only an admin may, and nothing is
// written when they try.
func TestStaffRoleIsRefusedAdminActions(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := newService(pool, nil)
	set := practice.New(pool, nil)
	s := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
	ctx := context.Background()
	sp, typ := c.Specialists[0], c.Types[0]
	before := testkit.AuditCount(t, pool, c.ID)

	calls := map[string]func() error{
		"CreateSpecialist": func() error {
			_, err := set.CreateSpecialist(ctx, s, practice.SpecialistInput{Name: "New", Active: true})
			return err
		},
		"UpdateSpecialist": func() error {
			_, err := set.UpdateSpecialist(ctx, s, sp.ID, practice.SpecialistInput{Name: "Renamed", Active: true, Version: sp.Version})
			return err
		},
		"SaveType(create)": func() error {
			_, err := set.SaveType(ctx, s, uuid.Nil, practice.TypeInput{Name: "X", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1})
			return err
		},
		"SaveType(update)": func() error {
			_, err := set.SaveType(ctx, s, typ.ID, practice.TypeInput{Name: "X", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1, Version: typ.Version})
			return err
		},
		"StaffUsers": func() error { _, err := svc.StaffUsers(ctx, s); return err },
		"CreateStaffUser": func() error {
			_, err := svc.CreateStaffUser(ctx, s, "x-"+uuid.NewString()[:8]+"@example.org", "X", "long enough password", staff.RoleAdmin)
			return err
		},
		"KioskTokens":      func() error { _, err := set.KioskTokens(ctx, s); return err },
		"CreateKioskToken": func() error { _, err := set.CreateKioskToken(ctx, s, "Lobby"); return err },
		"RevokeKioskToken": func() error { return set.RevokeKioskToken(ctx, s, uuid.New()) },
	}
	for name, call := range calls {
		err := call()
		if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Forbidden {
			t.Errorf("%s as staff: %v, want FORBIDDEN", name, err)
		}
	}
	if n := testkit.AuditCount(t, pool, c.ID); n != before {
		t.Fatalf("refused calls wrote %d audit rows", n-before)
	}
}

// What an admin sees of the accounts: the one they create (its e-mail in
// lower case), the clinic's list, and an account disabled and enabled
// again, each change with its audit row. An admin cannot disable
// themselves, and an e-mail is taken once.
func TestStaffAccountsAsAnAdminManagesThem(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := newService(pool, nil)
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()

	email := "new-" + uuid.NewString()[:8] + "@example.org"
	acc, err := svc.CreateStaffUser(ctx, admin, strings.ToUpper(email), "Nurse New", testPassword, staff.RoleStaff)
	if err != nil {
		t.Fatal(err)
	}
	if acc.ID == uuid.Nil || acc.ClinicID != c.ID || acc.Email != email || acc.Name != "Nurse New" || acc.Role != staff.RoleStaff || acc.DisabledAt != nil || acc.CreatedAt.IsZero() {
		t.Fatalf("created account %+v", acc)
	}
	_, err = svc.CreateStaffUser(ctx, admin, email, "Twice", testPassword, staff.RoleStaff)
	testkit.WantCode(t, err, apperr.CodeEmailTaken, "the same e-mail again")

	list, err := svc.StaffUsers(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	emails := map[string]bool{}
	for _, a := range list {
		if a.ClinicID != c.ID {
			t.Errorf("StaffUsers lists %s of clinic %s", a.Email, a.ClinicID)
		}
		emails[a.Email] = true
	}
	if len(list) != 2 || !emails[admin.Email] || !emails[email] {
		t.Fatalf("StaffUsers: %+v, want the admin and the new account", list)
	}

	_, err = svc.SetDisabled(ctx, admin, admin.ID, true)
	if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid || ae.Field() != "id" {
		t.Fatalf("disabling one's own account: %v, want INVALID_ARGUMENT on id", err)
	}
	off, err := svc.SetDisabled(ctx, admin, acc.ID, true)
	if err != nil || off.ID != acc.ID || off.Email != email || off.DisabledAt == nil {
		t.Fatalf("disable: %+v, %v", off, err)
	}
	_, err = svc.UserByID(ctx, acc.ID)
	testkit.WantCode(t, err, apperr.CodeSignedOut, "a disabled account's session")
	on, err := svc.SetDisabled(ctx, admin, acc.ID, false)
	if err != nil || on.DisabledAt != nil {
		t.Fatalf("enable: %+v, %v", on, err)
	}
	if u, err := svc.UserByID(ctx, acc.ID); err != nil || u.Email != email {
		t.Fatalf("the enabled account: %+v, %v", u, err)
	}
	rows := testkit.AuditRows(t, pool, "staff_user", acc.ID.String())
	for _, action := range []string{"staff.create", "staff.disable", "staff.enable"} {
		if n := testkit.CountAction(rows, action); n != 1 {
			t.Errorf("%d %s audit rows, want 1", n, action)
		}
	}
}
