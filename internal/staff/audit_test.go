package staff_test

// The audit rule: each committed change writes exactly one audit row,
// names the actor and tells the notifier once; a refused change writes
// nothing and tells no one.

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// changeStep is one change an admin makes: ok says whether it commits,
// action is then the audit row it writes.
type changeStep struct {
	name, action string
	ok           bool
	do           func() error
}

// changes is one clinic's admin making one change after another; each
// step works on what the steps before it made.
type changes struct {
	ctx      context.Context
	pool     *pgxpool.Pool
	svc      *staff.Service
	set      *practice.Service
	clinicID uuid.UUID
	admin    staff.User
	notified *atomic.Int64
	dayUTC   time.Time // the day of the override steps

	sp         practice.Specialist
	typ        practice.AppointmentType
	overrideID int64
}

func newChanges(t *testing.T) *changes {
	t.Helper()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	f := &changes{ctx: context.Background(), pool: pool, clinicID: c.ID, notified: new(atomic.Int64)}
	notify := func(_ context.Context, id uuid.UUID) {
		if id != c.ID {
			t.Errorf("notified for clinic %s", id)
		}
		f.notified.Add(1)
	}
	f.svc, f.set = newService(pool, notify), practice.New(pool, notify)
	f.admin = testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	day := testkit.NextWeekday(time.Now(), testkit.Zone(t, c.Timezone), time.Thursday, 0, 0)
	f.dayUTC = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	return f
}

// reload reads the specialist again, after a change that bumped its version.
func (f *changes) reload() error {
	var err error
	f.sp, err = f.set.Specialist(f.ctx, f.admin, f.sp.ID)
	return err
}

func (f *changes) specialistSteps() []changeStep {
	ctx, set, admin := f.ctx, f.set, f.admin
	return []changeStep{
		{"create specialist", "specialist.create", true, func() (err error) {
			f.sp, err = set.CreateSpecialist(ctx, admin, practice.SpecialistInput{Name: "  Dr. New  ", Priority: 5, Active: true})
			return err
		}},
		{"create specialist without a name", "", false, func() error {
			_, err := set.CreateSpecialist(ctx, admin, practice.SpecialistInput{Name: "  "})
			return err
		}},
		{"update specialist", "specialist.update", true, func() (err error) {
			f.sp, err = set.UpdateSpecialist(ctx, admin, f.sp.ID, practice.SpecialistInput{Name: "Dr. Renamed", Priority: 7, Active: true, Version: f.sp.Version})
			return err
		}},
		{"update specialist at a stale version", "", false, func() error {
			_, err := set.UpdateSpecialist(ctx, admin, f.sp.ID, practice.SpecialistInput{Name: "Lost", Active: true, Version: f.sp.Version - 1})
			return err
		}},
		{"set hours", "hours.update", true, func() (err error) {
			f.sp, err = set.SetWeeklyHours(ctx, admin, f.sp.ID, f.sp.Version, []practice.Range{{Weekday: time.Thursday, StartMin: 540, EndMin: 1020}})
			return err
		}},
		{"set overlapping hours", "", false, func() error {
			_, err := set.SetWeeklyHours(ctx, admin, f.sp.ID, f.sp.Version, []practice.Range{{Weekday: time.Thursday, StartMin: 540, EndMin: 720}, {Weekday: time.Thursday, StartMin: 700, EndMin: 800}})
			return err
		}},
	}
}

func (f *changes) overrideSteps() []changeStep {
	ctx, set, admin := f.ctx, f.set, f.admin
	return []changeStep{
		{"add override", "override.create", true, func() error {
			if err := set.AddOverride(ctx, admin, f.sp.ID, practice.OverrideInput{Day: f.dayUTC, StartMin: 600, EndMin: 720, Note: "short day", Version: f.sp.Version}); err != nil {
				return err
			}
			if err := f.reload(); err != nil {
				return err
			}
			ovs, err := db.New(f.pool).OverrideListBySpecialist(ctx, db.OverrideListBySpecialistParams{SpecialistID: f.sp.ID, FromDay: f.dayUTC})
			if err == nil && len(ovs) == 1 {
				f.overrideID = ovs[0].ID
			}
			return err
		}},
		{"add an overlapping override", "", false, func() error {
			return set.AddOverride(ctx, admin, f.sp.ID, practice.OverrideInput{Day: f.dayUTC, Closed: true, Version: f.sp.Version})
		}},
		{"add override ending before it starts", "", false, func() error {
			return set.AddOverride(ctx, admin, f.sp.ID, practice.OverrideInput{Day: f.dayUTC.AddDate(0, 0, 1), StartMin: 720, EndMin: 600, Version: f.sp.Version})
		}},
		{"delete override", "override.delete", true, func() error {
			if err := set.DeleteOverride(ctx, admin, f.overrideID, f.sp.Version); err != nil {
				return err
			}
			return f.reload()
		}},
	}
}

func (f *changes) typeAndAccountSteps() []changeStep {
	ctx, svc, set, admin := f.ctx, f.svc, f.set, f.admin
	return []changeStep{
		{"create type", "type.create", true, func() (err error) {
			f.typ, err = set.SaveType(ctx, admin, uuid.Nil, practice.TypeInput{Name: "Check", DurationMin: 20, SlotStepMin: 10, BufferBeforeMin: 5, BufferAfterMin: 5,
				MinNoticeMin: 60, MaxAdvanceDays: 90, CooldownMin: 0, MaxHoldsPerClient: 2, SpecialistIDs: []uuid.UUID{f.sp.ID}})
			return err
		}},
		{"create type lasting 0 minutes", "", false, func() error {
			_, err := set.SaveType(ctx, admin, uuid.Nil, practice.TypeInput{Name: "Zero", DurationMin: 0, SlotStepMin: 10, MaxAdvanceDays: 90, MaxHoldsPerClient: 1})
			return err
		}},
		{"update type", "type.update", true, func() (err error) {
			f.typ, err = set.SaveType(ctx, admin, f.typ.ID, practice.TypeInput{Name: "Check-up", DurationMin: 25, SlotStepMin: 5, MaxAdvanceDays: 90, MaxHoldsPerClient: 1, Version: f.typ.Version})
			return err
		}},
		{"update type at a stale version", "", false, func() error {
			_, err := set.SaveType(ctx, admin, f.typ.ID, practice.TypeInput{Name: "Lost", DurationMin: 25, SlotStepMin: 5, MaxAdvanceDays: 90, MaxHoldsPerClient: 1, Version: f.typ.Version - 1})
			return err
		}},
		{"create kiosk token", "kiosk_token.create", true, func() error { _, err := set.CreateKioskToken(ctx, admin, "Lobby"); return err }},
		{"create staff account", "staff.create", true, func() error {
			_, err := svc.CreateStaffUser(ctx, admin, "New-"+uuid.NewString()[:8]+"@Example.org", "New", "long enough password", staff.RoleStaff)
			return err
		}},
		{"create staff account with a short password", "", false, func() error {
			_, err := svc.CreateStaffUser(ctx, admin, "short-"+uuid.NewString()[:8]+"@example.org", "New", "short", staff.RoleStaff)
			return err
		}},
	}
}

// check runs one step and holds it to the audit rule.
func (f *changes) check(t *testing.T, st changeStep) {
	before, nBefore := testkit.AuditCount(t, f.pool, f.clinicID), f.notified.Load()
	err := st.do()
	after := testkit.AuditCount(t, f.pool, f.clinicID)
	if st.ok {
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if after-before != 1 {
			t.Fatalf("%s: %d audit rows, want exactly 1", st.name, after-before)
		}
		rows, err := f.svc.Audit(f.ctx, f.admin, staff.AuditFilter{From: time.Unix(0, 0), To: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatalf("%s: audit: %v", st.name, err)
		}
		if len(rows) == 0 || rows[0].Action != st.action || rows[0].Actor != f.admin.Actor() {
			t.Fatalf("%s: newest audit rows %+v, want %s by %s first", st.name, rows, st.action, f.admin.Actor())
		}
		if n := f.notified.Load() - nBefore; n != 1 {
			t.Fatalf("%s: notified %d times, want once", st.name, n)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s: accepted", st.name)
	}
	if ae := apperr.As(err); ae == nil || ae.Kind == apperr.Internal {
		t.Fatalf("%s: %v is not a clear refusal", st.name, err)
	}
	if after != before {
		t.Fatalf("%s (refused: %v) wrote %d audit rows", st.name, err, after-before)
	}
	if n := f.notified.Load() - nBefore; n != 0 {
		t.Fatalf("%s (refused) notified %d times", st.name, n)
	}
}

// Each committed change writes exactly one audit row, names the actor and
// tells the notifier once; a refused change writes nothing and tells no one.
func TestStaffEveryChangeWritesOneAuditRowAndNotifies(t *testing.T) {
	t.Parallel()
	f := newChanges(t)
	var steps []changeStep
	steps = append(steps, f.specialistSteps()...)
	steps = append(steps, f.overrideSteps()...)
	steps = append(steps, f.typeAndAccountSteps()...)
	for _, st := range steps {
		// Each step builds on the ones before: stop at the first that fails.
		if !t.Run(st.name, func(t *testing.T) { f.check(t, st) }) {
			t.FailNow()
		}
	}
	if f.sp.Name != "Dr. Renamed" || f.sp.Priority != 7 {
		t.Errorf("specialist: %+v", f.sp)
	}
	if f.typ.Name != "Check-up" || f.typ.DurationMin != 25 || f.typ.SlotStepMin != 5 {
		t.Errorf("type: %+v", f.typ)
	}
}
