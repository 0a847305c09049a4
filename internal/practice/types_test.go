package practice_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// A type's reminder is set in whole hours and kept in minutes; 0 sends
// none, and a lead outside 0 to 336 hours is refused naming the field
// with the type as it was.
func TestSaveTypeReminder(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	svc := practice.New(pool, nil)
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	ctx := context.Background()
	in := practice.TypeInput{Name: "Reminded", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1, ReminderHours: 48}
	// A type written without a reminder (as the fixtures' are) gets a day's.
	if fixture, err := db.New(pool).AppointmentTypeGet(ctx, c.Types[0].ID); err != nil || fixture.ReminderMin != 1440 {
		t.Fatalf("a type inserted without a reminder has %d minutes (%v), want 1440", fixture.ReminderMin, err)
	}
	typ, err := svc.SaveType(ctx, admin, uuid.Nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if typ.ReminderMin != 2880 {
		t.Fatalf("48 hours saved as %d minutes, want 2880", typ.ReminderMin)
	}
	if got, _, err := svc.Type(ctx, admin, typ.ID); err != nil || got.ReminderMin != 2880 {
		t.Fatalf("read back %d minutes (%v), want 2880", got.ReminderMin, err)
	}

	before := testkit.AuditCount(t, pool, c.ID)
	for _, h := range []int{-1, practice.MaxReminderHours + 1} {
		in := in
		in.ReminderHours, in.Version = h, typ.Version
		_, err := svc.SaveType(ctx, admin, typ.ID, in)
		testkit.WantCode(t, err, apperr.CodeInvalidArgument, "reminder hours")
		if f := apperr.As(err).Field(); f != "reminderHours" {
			t.Errorf("%d hours: error names %q", h, f)
		}
	}
	if got, _, _ := svc.Type(ctx, admin, typ.ID); got.ReminderMin != 2880 || got.Version != typ.Version {
		t.Errorf("after refused saves: %d minutes at version %d, want 2880 at %d", got.ReminderMin, got.Version, typ.Version)
	}
	if n := testkit.AuditCount(t, pool, c.ID); n != before {
		t.Errorf("refused saves wrote %d audit rows", n-before)
	}

	in.ReminderHours, in.Version = 0, typ.Version
	if typ, err = svc.SaveType(ctx, admin, typ.ID, in); err != nil || typ.ReminderMin != 0 {
		t.Fatalf("no reminder saved as %d minutes (%v), want 0", typ.ReminderMin, err)
	}
	in.ReminderHours, in.Version = practice.MaxReminderHours, typ.Version
	if typ, err = svc.SaveType(ctx, admin, typ.ID, in); err != nil || typ.ReminderMin != 20160 {
		t.Fatalf("two weeks saved as %d minutes (%v), want 20160", typ.ReminderMin, err)
	}
}
