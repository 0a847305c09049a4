package practice_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// Every name and note staff type refuses control characters, line breaks,
// text-direction controls and too much text, naming the field, and
// writes nothing.
func TestStaffTextFieldsRefuseWhatTheyCannotStore(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc, accounts := practice.New(pool, nil), staff.New(pool, nil, nil)
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()
	sp, typ := c.Specialists[0], c.Types[0]
	day := time.Date(2031, 3, 4, 0, 0, 0, 0, time.UTC)
	newType := func(name, desc string) practice.TypeInput {
		return practice.TypeInput{Name: name, Description: desc, DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1}
	}

	calls := map[string]struct {
		field string
		call  func(text string) error
	}{
		"CreateSpecialist": {"name", func(s string) error {
			_, err := svc.CreateSpecialist(ctx, admin, practice.SpecialistInput{Name: s, Active: true})
			return err
		}},
		"UpdateSpecialist": {"name", func(s string) error {
			_, err := svc.UpdateSpecialist(ctx, admin, sp.ID, practice.SpecialistInput{Name: s, Active: true, Version: sp.Version})
			return err
		}},
		"TypeName": {"name", func(s string) error {
			_, err := svc.SaveType(ctx, admin, uuid.Nil, newType(s, ""))
			return err
		}},
		"TypeDescription": {"description", func(s string) error {
			in := newType(typ.Name, s)
			in.Version = typ.Version
			_, err := svc.SaveType(ctx, admin, typ.ID, in)
			return err
		}},
		"OverrideNote": {"note", func(s string) error {
			return svc.AddOverride(ctx, admin, sp.ID, practice.OverrideInput{Day: day, Closed: true, Note: s, Version: sp.Version})
		}},
		"StaffUserName": {"name", func(s string) error {
			_, err := accounts.CreateStaffUser(ctx, admin, "n-"+uuid.NewString()[:8]+"@example.org", s, "long enough password", staff.RoleStaff)
			return err
		}},
		"StaffUserEmail": {"email", func(s string) error {
			_, err := accounts.CreateStaffUser(ctx, admin, "n-"+s+"@example.org", "Nurse", "long enough password", staff.RoleStaff)
			return err
		}},
		"KioskName": {"name", func(s string) error {
			_, err := svc.CreateKioskToken(ctx, admin, s)
			return err
		}},
	}
	texts := map[string]string{
		"NUL": "a\x00b", "CarriageReturn": "a\rretry: 1", "LineFeed": "a\nb", "Escape": "a\x1b[2Jb",
		"LineSeparator": "a\u2028b", "RightToLeftOverride": "a\u202eb", "Isolate": "a\u2067b",
		"TooLong": strings.Repeat("ü", 2001),
	}
	before := testkit.AuditCount(t, pool, c.ID)
	for name, tc := range calls {
		for what, text := range texts {
			err := tc.call(text)
			if ae := apperr.As(err); ae == nil || ae.Code != "INVALID_ARGUMENT" || ae.Field() != tc.field {
				t.Errorf("%s with %s: %v, want INVALID_ARGUMENT naming %s", name, what, err, tc.field)
			}
		}
	}
	if n := testkit.AuditCount(t, pool, c.ID); n != before {
		t.Fatalf("refused input wrote %d audit rows", n-before)
	}
}
