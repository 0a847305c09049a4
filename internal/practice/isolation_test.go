package practice_test

// Clinic scoping: every call a staff member makes with another clinic's
// ids is refused, every list shows only their own clinic's rows, and the
// other clinic's data stays as it was.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// isolation is two clinics, an admin of each, and the other clinic's
// specialist, type, override, future booking and kiosk token, as they
// were before my admin tried anything with them.
type isolation struct {
	ctx               context.Context
	pool              *pgxpool.Pool
	svc               *staff.Service
	set               *practice.Service
	bookings          *desk.Bookings
	mine, other       testkit.Clinic
	admin, otherAdmin staff.User

	osp        db.Specialist
	otyp       db.AppointmentType
	dayUTC     time.Time // the day of their override
	overrideID int64
	start      time.Time // the start of their booking
	conf       booking.Confirmation
	token      string // their kiosk token
	tokenID    uuid.UUID

	ospNow      practice.Specialist
	otypNow     practice.AppointmentType
	hoursBefore []practice.Range
	otherAudit  int64
	myAudit     int64
}

func newIsolation(t *testing.T) *isolation {
	t.Helper()
	pool := testkit.DB(t)
	f := &isolation{ctx: context.Background(), pool: pool, svc: staff.New(pool, nil, nil), set: practice.New(pool, nil)}
	f.bookings = desk.NewBookings(pool, nil, booking.NewService(pool), nil)
	f.mine = testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	f.other = testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	f.admin = testkit.StaffUser(t, pool, f.mine.ID, staff.RoleAdmin)
	f.otherAdmin = testkit.StaffUser(t, pool, f.other.ID, staff.RoleAdmin)
	f.osp, f.otyp = f.other.Specialists[0], f.other.Types[0]
	loc := testkit.Zone(t, f.other.Timezone)
	ctx, set := f.ctx, f.set

	// The other clinic has an override, a booking and a kiosk token.
	day := testkit.NextWeekday(time.Now(), loc, time.Wednesday, 0, 0)
	f.dayUTC = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	if err := set.AddOverride(ctx, f.otherAdmin, f.osp.ID, practice.OverrideInput{Day: f.dayUTC, Closed: true, Version: f.osp.Version}); err != nil {
		t.Fatal(err)
	}
	ovs, err := db.New(pool).OverrideListBySpecialist(ctx, db.OverrideListBySpecialistParams{SpecialistID: f.osp.ID, FromDay: f.dayUTC})
	if err != nil || len(ovs) != 1 {
		t.Fatalf("override: %v %v", ovs, err)
	}
	f.overrideID = ovs[0].ID
	f.start = testkit.NextWeekday(time.Now(), loc, time.Tuesday, 10, 0)
	f.conf, err = f.bookings.BookForPatient(ctx, f.otherAdmin, f.otyp.ID, f.osp.ID, f.start, booking.Patient{Name: "Other Patient", Email: "other@example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if f.token, err = set.CreateKioskToken(ctx, f.otherAdmin, "Their lobby"); err != nil {
		t.Fatal(err)
	}
	tokens, err := set.KioskTokens(ctx, f.otherAdmin)
	if err != nil || len(tokens) != 1 {
		t.Fatal(tokens, err)
	}
	f.tokenID = tokens[0].ID
	if f.ospNow, err = set.Specialist(ctx, f.otherAdmin, f.osp.ID); err != nil {
		t.Fatal(err)
	}
	if f.otypNow, _, err = set.Type(ctx, f.otherAdmin, f.otyp.ID); err != nil {
		t.Fatal(err)
	}
	f.hoursBefore = hoursOf(t, pool, f.osp.ID)
	f.otherAudit = testkit.AuditCount(t, pool, f.other.ID)
	f.myAudit = testkit.AuditCount(t, pool, f.mine.ID)
	return f
}

// Every call with another clinic's ids is NOT_FOUND (or refused as
// input), every list shows only the user's clinic, and the other clinic's
// data stays as it was.
func TestStaffEveryCallIsScopedToTheUsersClinic(t *testing.T) {
	t.Parallel()
	f := newIsolation(t)
	for _, sub := range []struct {
		name string
		run  func(*isolation, *testing.T)
	}{
		{"TheirIDsAreNotFound", (*isolation).theirIDsAreNotFound},
		{"TheirSpecialistOnMyTypeIsRefused", (*isolation).theirSpecialistOnMyTypeIsRefused},
		{"ListsShowOnlyMyClinic", (*isolation).listsShowOnlyMyClinic},
		{"KioskChecksAreScoped", (*isolation).kioskChecksAreScoped},
		{"NothingOfTheirsChanged", (*isolation).nothingOfTheirsChanged},
	} {
		// In order: the last one checks what the others may have done.
		t.Run(sub.name, func(t *testing.T) { sub.run(f, t) })
	}
}

// Each of these, given the other clinic's id, must answer NOT_FOUND: a
// method whose query ignored the user's clinic would find the row and
// act on it (for example, dropping ClinicID from the WHERE of
// OverrideGet makes "Override" fail here, and from StaffUserSetDisabled
// makes "SetDisabled" disable their admin).
func (f *isolation) theirIDsAreNotFound(t *testing.T) {
	ctx, svc, set, admin, osp, otyp := f.ctx, f.svc, f.set, f.admin, f.osp, f.otyp
	notFound := map[string]func() error{
		"Specialist": func() error { _, err := set.Specialist(ctx, admin, osp.ID); return err },
		"UpdateSpecialist": func() error {
			_, err := set.UpdateSpecialist(ctx, admin, osp.ID, practice.SpecialistInput{Name: "Hijacked", Active: false, Version: f.ospNow.Version})
			return err
		},
		"WeeklyHours": func() error { _, err := set.WeeklyHours(ctx, admin, osp.ID); return err },
		"SetWeeklyHours": func() error {
			_, err := set.SetWeeklyHours(ctx, admin, osp.ID, f.ospNow.Version, nil)
			return err
		},
		"Overrides": func() error { _, err := set.Overrides(ctx, admin, osp.ID, f.dayUTC); return err },
		"Override":  func() error { _, err := set.Override(ctx, admin, f.overrideID); return err },
		"AddOverride": func() error {
			return set.AddOverride(ctx, admin, osp.ID, practice.OverrideInput{Day: f.dayUTC.AddDate(0, 0, 1), Closed: true, Version: f.ospNow.Version})
		},
		"DeleteOverride": func() error { return set.DeleteOverride(ctx, admin, f.overrideID, f.ospNow.Version) },
		"Type":           func() error { _, _, err := set.Type(ctx, admin, otyp.ID); return err },
		"SaveType(update)": func() error {
			_, err := set.SaveType(ctx, admin, otyp.ID, practice.TypeInput{Name: "Hijacked", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1, Version: f.otypNow.Version})
			return err
		},
		"RevokeKioskToken": func() error { return set.RevokeKioskToken(ctx, admin, f.tokenID) },
		"SetDisabled":      func() error { _, err := svc.SetDisabled(ctx, admin, f.otherAdmin.ID, true); return err },
		"Cancel": func() error {
			_, err := f.bookings.Cancel(ctx, admin, f.conf.Booking.ID, "not mine")
			return err
		},
		"Reschedule": func() error {
			_, err := f.bookings.Reschedule(ctx, admin, f.conf.Booking.ID, f.start.Add(time.Hour), uuid.Nil, f.conf.Booking.Version, "not mine")
			return err
		},
		"BookForPatient(their type)": func() error {
			_, err := f.bookings.BookForPatient(ctx, admin, otyp.ID, osp.ID, f.start.Add(2*time.Hour), booking.Patient{Name: "X", Email: "x@example.org"})
			return err
		},
	}
	for name, call := range notFound {
		if ae := apperr.As(call()); ae == nil || ae.Kind != apperr.NotFound {
			t.Errorf("%s with the other clinic's id: %v, want NOT_FOUND", name, ae)
		}
	}
}

// Their specialist on a type of mine, or in my type's performer list: refused.
func (f *isolation) theirSpecialistOnMyTypeIsRefused(t *testing.T) {
	_, err := f.bookings.BookForPatient(f.ctx, f.admin, f.mine.Types[0].ID, f.osp.ID, f.start.Add(3*time.Hour), booking.Patient{Name: "X", Email: "x@example.org"})
	if apperr.As(err) == nil || apperr.As(err).Kind == apperr.Internal {
		t.Errorf("booking the other clinic's specialist on my type: %v, want a refusal", err)
	}
	_, err = f.set.SaveType(f.ctx, f.admin, uuid.Nil, practice.TypeInput{Name: "Mine", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 30, MaxHoldsPerClient: 1, SpecialistIDs: []uuid.UUID{f.osp.ID}})
	if apperr.As(err) == nil || apperr.As(err).Field() != "specialists" {
		t.Errorf("a type performed by the other clinic's specialist: %v, want INVALID_ARGUMENT on specialists", err)
	}
}

// scopedList is a list call and the clinic each of its rows belongs to.
type scopedList struct {
	name   string
	owners func(u staff.User) ([]uuid.UUID, error)
	mine   int // the rows my admin sees, all of my clinic
}

func (f *isolation) scopedLists() []scopedList {
	ctx, svc, set := f.ctx, f.svc, f.set
	clinicOf := map[uuid.UUID]uuid.UUID{f.osp.ID: f.other.ID, f.mine.Specialists[0].ID: f.mine.ID}
	yearAgo, inAYear := time.Now().AddDate(-1, 0, 0), time.Now().AddDate(1, 0, 0)
	return []scopedList{
		{"Specialists", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := set.Specialists(ctx, u)
			return ownersOf(rows, func(r practice.Specialist) uuid.UUID { return r.ClinicID }), err
		}, 1},
		{"Types", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := set.Types(ctx, u)
			return ownersOf(rows, func(r practice.AppointmentType) uuid.UUID { return r.ClinicID }), err
		}, 1},
		{"StaffUsers", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := svc.StaffUsers(ctx, u)
			return ownersOf(rows, func(r staff.Account) uuid.UUID { return r.ClinicID }), err
		}, 1},
		{"KioskTokens", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := set.KioskTokens(ctx, u)
			return ownersOf(rows, func(r practice.KioskToken) uuid.UUID { return r.ClinicID }), err
		}, 0},
		{"Search", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := f.bookings.Search(ctx, u, "Other Patient", yearAgo, inAYear)
			return ownersOf(rows, func(r desk.SearchResult) uuid.UUID { return clinicOf[r.SpecialistID] }), err
		}, 0},
		{"Calendar", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := f.bookings.Calendar(ctx, u, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 1, 0))
			return ownersOf(rows, func(r desk.CalendarBooking) uuid.UUID { return clinicOf[r.SpecialistID] }), err
		}, 0},
		{"Audit", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := svc.Audit(ctx, u, staff.AuditFilter{From: time.Unix(0, 0), To: time.Now().Add(time.Hour)})
			return ownersOf(rows, func(r staff.AuditEntry) uuid.UUID { return r.ClinicID }), err
		}, 0},
		// Their specialist's id: every row is theirs.
		{"FutureBookings", func(u staff.User) ([]uuid.UUID, error) {
			rows, err := set.FutureBookings(ctx, u, f.osp.ID)
			return ownersOf(rows, func(practice.FutureBooking) uuid.UUID { return f.other.ID }), err
		}, 0},
	}
}

func ownersOf[R any](rows []R, owner func(R) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		out[i] = owner(r)
	}
	return out
}

// Each list shows my admin only my clinic's rows, and shows their admin
// their own: so an empty answer is the scoping at work, not an empty
// fixture. A list whose query ignored the clinic fails here; for example,
// dropping "b.clinic_id = $2" from the WHERE of
// BookingListFutureBySpecialist (the FutureBookings query) makes my admin
// see their booking.
func (f *isolation) listsShowOnlyMyClinic(t *testing.T) {
	for _, l := range f.scopedLists() {
		got, err := l.owners(f.admin)
		if err != nil {
			t.Errorf("%s: %v", l.name, err)
		} else if len(got) != l.mine || slices.ContainsFunc(got, func(id uuid.UUID) bool { return id != f.mine.ID }) {
			t.Errorf("%s shows me rows of clinics %v, want %d of mine (%s) only; theirs is %s", l.name, got, l.mine, f.mine.ID, f.other.ID)
		}
		theirs, err := l.owners(f.otherAdmin)
		if err != nil || !slices.Contains(theirs, f.other.ID) {
			t.Errorf("%s shows their admin rows of clinics %v (%v), want their own among them", l.name, theirs, err)
		}
	}
}

// Their device token opens their board, not mine, and their token does
// not make my board private. Dropping the clinic from KioskTokenValid's
// or KioskTokenActiveCount's WHERE makes this fail.
func (f *isolation) kioskChecksAreScoped(t *testing.T) {
	for _, c := range []struct {
		what   string
		clinic uuid.UUID
		device string
		want   bool
	}{
		{"their board, their token", f.other.ID, f.token, true},
		{"my board, their token", f.mine.ID, f.token, false},
		{"their board, no token", f.other.ID, "", false},
		{"my board (no tokens of mine), no token", f.mine.ID, "", true},
	} {
		if ok, err := f.set.KioskAllowed(f.ctx, c.clinic, c.device); err != nil || ok != c.want {
			t.Errorf("KioskAllowed on %s: %v, %v; want %v", c.what, ok, err, c.want)
		}
	}
	if ok, err := f.set.KioskTokenValid(f.ctx, f.mine.ID, f.token); err != nil || ok {
		t.Errorf("KioskTokenValid of their token for my clinic: %v, %v; want false", ok, err)
	}
}

// Nothing of theirs changed, and nothing was written.
func (f *isolation) nothingOfTheirsChanged(t *testing.T) {
	ctx, svc, set, other := f.ctx, f.svc, f.set, f.other
	if got, err := set.Specialist(ctx, f.otherAdmin, f.osp.ID); err != nil || got.Name != f.ospNow.Name || got.Version != f.ospNow.Version || !got.Active {
		t.Errorf("their specialist changed: %+v %v", got, err)
	}
	if got, _, err := set.Type(ctx, f.otherAdmin, f.otyp.ID); err != nil || got.Name != f.otypNow.Name || got.Version != f.otypNow.Version {
		t.Errorf("their type changed: %+v %v", got, err)
	}
	if got := hoursOf(t, f.pool, f.osp.ID); !slices.Equal(got, f.hoursBefore) {
		t.Errorf("their hours changed: %v", got)
	}
	if n, err := db.New(f.pool).OverrideCountBySpecialist(ctx, f.osp.ID); err != nil || n != 1 {
		t.Errorf("their overrides: %d %v", n, err)
	}
	if ok, err := set.KioskTokenValid(ctx, other.ID, "x"); err != nil || ok {
		t.Errorf("a made-up kiosk token is valid (%v)", err)
	}
	if ks, err := set.KioskTokens(ctx, f.otherAdmin); err != nil || len(ks) != 1 || ks[0].RevokedAt != nil {
		t.Errorf("their kiosk token was revoked: %+v %v", ks, err)
	}
	if u, err := svc.UserByID(ctx, f.otherAdmin.ID); err != nil || u.ClinicID != other.ID {
		t.Errorf("their admin can no longer sign in: %+v %v", u, err)
	}
	if b, err := booking.NewService(f.pool).Get(ctx, f.conf.Booking.ID, other.ID); err != nil || b.Status != booking.StatusConfirmed || !b.Start.Equal(f.start) {
		t.Errorf("their booking changed: %+v %v", b, err)
	}
	if n := testkit.AuditCount(t, f.pool, other.ID); n != f.otherAudit {
		t.Errorf("%d audit rows written to the other clinic", n-f.otherAudit)
	}
	if n := testkit.AuditCount(t, f.pool, f.mine.ID); n != f.myAudit {
		t.Errorf("%d audit rows written for refused calls", n-f.myAudit)
	}
}
