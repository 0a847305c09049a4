package staff_test

import (
	"context"
	"testing"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// An admin gives another account of the clinic another role, audited;
// never their own, never a role that does not exist, never another
// clinic's account; nobody else may.
func TestSetRole(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	other := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := newService(pool, nil)
	ctx := context.Background()
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	nurse := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
	stranger := testkit.StaffUser(t, pool, other.ID, staff.RoleStaff)

	before := testkit.AuditCount(t, pool, c.ID)
	acc, err := svc.SetRole(ctx, admin, nurse.ID, staff.RoleReception)
	if err != nil || acc.Role != staff.RoleReception || acc.ID != nurse.ID {
		t.Fatalf("SetRole: %+v, %v", acc, err)
	}
	if testkit.AuditCount(t, pool, c.ID) != before+1 {
		t.Error("the change was not audited once")
	}
	if u, err := svc.UserByID(ctx, nurse.ID); err != nil || u.Role != staff.RoleReception {
		t.Errorf("the account signs in as %q (%v)", u.Role, err)
	}

	for name, tc := range map[string]struct {
		by   staff.User
		id   staff.User
		role string
		kind apperr.Kind
	}{
		"own role":         {admin, admin, staff.RoleStaff, apperr.Invalid},
		"unknown role":     {admin, nurse, "owner", apperr.Invalid},
		"another clinic's": {admin, stranger, staff.RoleAdmin, apperr.NotFound},
		"not an admin":     {nurse, admin, staff.RoleReception, apperr.Forbidden},
	} {
		_, err := svc.SetRole(ctx, tc.by, tc.id.ID, tc.role)
		if ae := apperr.As(err); ae == nil || ae.Kind != tc.kind {
			t.Errorf("%s: %v, want %v", name, err, tc.kind)
		}
	}
	if u, _ := svc.UserByID(ctx, stranger.ID); u.Role != staff.RoleStaff {
		t.Errorf("another clinic's account became %q", u.Role)
	}
}
