package web_test

// Rows the tests make and read behind the app's back: clinics, staff
// accounts, bookings made at the desk, the audit trail and the slot cache
// generation.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// password is every test account's password; testkit.PasswordHash is its
// hash, made once at bcrypt's lowest cost.
const password = testkit.Password

// account is a staff account.
type account struct {
	ID    uuid.UUID
	Email string
	Role  string
}

// Actor is how the audit trail names the account.
func (a account) Actor() string { return "staff:" + a.Email }

// User is the staff service's view of the account.
func (a account) User(clinicID uuid.UUID) staff.User {
	return staff.User{ID: a.ID, ClinicID: clinicID, Email: a.Email, Role: a.Role}
}

// newAccount makes a staff account of role in the clinic.
func (a *app) newAccount(t testing.TB, clinicID uuid.UUID, role string) account {
	t.Helper()
	email := "acc-" + role + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16] + "@example.org"
	row, err := db.New(a.Pool).StaffUserUpsert(context.Background(), db.StaffUserUpsertParams{
		ClinicID: clinicID, Email: email, Name: "Test " + role, PasswordHash: testkit.PasswordHash(), Role: role,
	})
	if err != nil {
		t.Fatalf("create staff account: %v", err)
	}
	return account{ID: row.ID, Email: email, Role: role}
}

// signIn signs acc in through the sign-in form and opens the calendar, so
// the browser has the session's CSRF token.
func (a *app) signIn(t testing.TB, acc account) *client {
	t.Helper()
	c := a.newClient(t)
	c.Get("/staff/login").Want(http.StatusOK)
	c.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {password}}).WantRedirect("/staff/day")
	c.Get("/staff").Want(http.StatusOK)
	if c.CSRF == "" {
		t.Fatal("the calendar has no CSRF token in its forms")
	}
	return c
}

// clinic is a test clinic with its time zone, an admin and a staff account.
type clinic struct {
	testkit.Clinic
	Loc   *time.Location
	Admin account
	Staff account
}

// clinic makes a clinic of the test's own (testkit.NewClinic: Europe/Berlin,
// Monday to Friday 09:00-17:00 unless o says otherwise); its holds are
// dropped at the end of the test.
func (a *app) clinic(t testing.TB, o testkit.ClinicOptions) clinic {
	t.Helper()
	c := testkit.NewClinic(t, a.Pool, o)
	rdb := a.RDB
	t.Cleanup(func() { forgetClinicHolds(rdb, c.ID) })
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	return clinic{Clinic: c, Loc: loc,
		Admin: a.newAccount(t, c.ID, "admin"), Staff: a.newAccount(t, c.ID, "staff")}
}

// patientClinic is a clinic with hours every day of the week (so the
// kiosk's next three days always have free times), an address, and two
// types without a cooldown: a 30-minute consultation and a one-hour
// check-up.
func (a *app) patientClinic(t testing.TB) clinic {
	t.Helper()
	c := a.clinic(t, testkit.ClinicOptions{
		Specialists: 2,
		Types: []db.AppointmentTypeInsertParams{
			{Name: "Consultation", Description: "A first talk about what brings you here.", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
			{Name: "Check-up", DurationMin: 60, SlotStepMin: 60, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		},
	})
	ctx := context.Background()
	q := db.New(a.Pool)
	for _, sp := range c.Specialists {
		a.openWeekends(t, c, sp.ID)
	}
	row, err := q.ClinicUpsert(ctx, db.ClinicUpsertParams{Slug: c.Slug, Name: c.Name, Timezone: c.Timezone, Address: "Hauptstraße 5, 10827 Berlin"})
	if err != nil {
		t.Fatalf("clinic address: %v", err)
	}
	c.Clinic.Clinic = row
	return c
}

// openWeekends gives the specialist hours on Saturday and Sunday too,
// 09:00-17:00.
func (a *app) openWeekends(t testing.TB, c clinic, sp uuid.UUID) {
	t.Helper()
	for _, wd := range []time.Weekday{time.Saturday, time.Sunday} {
		if err := db.New(a.Pool).WeeklyHoursInsert(context.Background(), db.WeeklyHoursInsertParams{
			ClinicID: c.ID, SpecialistID: sp, Weekday: int16(wd), StartMin: 9 * 60, EndMin: 17 * 60,
		}); err != nil {
			t.Fatalf("weekend hours: %v", err)
		}
	}
}

// forgetClinicHolds releases a clinic's live holds and unregisters it from
// the sweeper's set (the key the holds package documents).
func forgetClinicHolds(rdb redis.UniversalClient, clinicID uuid.UUID) {
	ctx := context.Background()
	s := holds.NewStore(rdb, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if active, err := s.Active(ctx, clinicID); err == nil {
		for _, h := range active {
			_, _ = s.Release(ctx, h.HoldID, h.ClientID)
		}
	}
	_, _ = s.SweepClinic(ctx, clinicID)
	rdb.SRem(ctx, "holds:clinics", clinicID.String())
}

// Type0 is the clinic's first type.
func (c clinic) Type0() db.AppointmentType { return c.Types[0] }

// Next is the next date (at least tomorrow) on wd at hh:mm, clinic time.
func (c clinic) Next(wd time.Weekday, hh, mm int) time.Time {
	return testkit.NextWeekday(time.Now(), c.Loc, wd, hh, mm)
}

// Monday is next Monday (at least tomorrow) at hh:mm, clinic time.
func (c clinic) Monday(hh, mm int) time.Time { return c.Next(time.Monday, hh, mm) }

// NextWeek is the ?week= value of next Monday's week.
func (c clinic) NextWeek() string { return c.Week(c.Monday(9, 0)) }

// At is daysAhead days from today (clinic time) at hh:mm local.
func (c clinic) At(daysAhead, hh, mm int) time.Time {
	now := time.Now().In(c.Loc)
	return time.Date(now.Year(), now.Month(), now.Day()+daysAhead, hh, mm, 0, 0, c.Loc)
}

// Week is the ?week= value for the week holding t.
func (c clinic) Week(t time.Time) string { return availability.DateOf(t, c.Loc).String() }

// MondayOf is noon on the Monday of the week holding t.
func (c clinic) MondayOf(t time.Time) time.Time {
	l := t.In(c.Loc)
	d := time.Date(l.Year(), l.Month(), l.Day(), 12, 0, 0, 0, c.Loc)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// BookPath is the booking page of type typ.
func (c clinic) BookPath(typ db.AppointmentType) string {
	return "/c/" + c.Slug + "/book/" + typ.ID.String()
}

// BookURL is the week page holding t, filtered by specialist sp (uuid.Nil: any).
func (c clinic) BookURL(typ db.AppointmentType, t time.Time, sp uuid.UUID) string {
	u := c.BookPath(typ) + "?week=" + c.Week(t)
	if sp != uuid.Nil {
		u += "&specialist=" + sp.String()
	}
	return u
}

// deskBooking is the request of a booking of p made at the desk, behind
// the pages' back.
func deskBooking(c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time, p booking.Patient) booking.BookRequest {
	return booking.BookRequest{
		AppointmentTypeID: typ.ID, SpecialistID: sp, Start: start, Patient: p,
		ClientID: "staff-desk", Actor: "staff:test", ClinicID: c.ID,
	}
}

// bookAs books a slot at the desk for p.
func (a *app) bookAs(t testing.TB, c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time, p booking.Patient) booking.Confirmation {
	t.Helper()
	conf, err := a.Deps.Bookings.Book(context.Background(), deskBooking(c, typ, sp, start, p))
	if err != nil {
		t.Fatalf("book directly: %v", err)
	}
	return conf
}

// bookDirect books a slot at the desk for a patient named name.
func (a *app) bookDirect(t testing.TB, c clinic, typ db.AppointmentType, sp uuid.UUID, start time.Time, name string) booking.Confirmation {
	t.Helper()
	return a.bookAs(t, c, typ, sp, start, booking.Patient{Name: name, Email: "staff-booked@example.org"})
}

// booking is the booking id as the service reads it.
func (a *app) booking(t testing.TB, id uuid.UUID) booking.Booking {
	t.Helper()
	b, err := a.Deps.Bookings.Get(context.Background(), id, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// specialist is the specialist's row.
func (a *app) specialist(t testing.TB, c clinic, id uuid.UUID) db.Specialist {
	t.Helper()
	sp, err := db.New(a.Pool).SpecialistGetInClinic(context.Background(), db.SpecialistGetInClinicParams{ID: id, ClinicID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// auditCount counts the clinic's audit rows.
func (a *app) auditCount(t testing.TB, clinicID uuid.UUID) int64 {
	t.Helper()
	return testkit.AuditCount(t, a.Pool, clinicID)
}

// lastAudit is the clinic's newest audit row.
func (a *app) lastAudit(t testing.TB, clinicID uuid.UUID) db.AuditLog {
	t.Helper()
	rows, err := db.New(a.Pool).AuditList(context.Background(), db.AuditListParams{
		ClinicID: clinicID, FromAt: time.Unix(0, 0), ToAt: time.Now().Add(time.Hour), PageSize: 1,
	})
	if err != nil || len(rows) == 0 {
		t.Fatalf("newest audit row: %v (%d rows)", err, len(rows))
	}
	return rows[0]
}

// generation sums the clinic's slot cache generations: its set-up's and
// its days' (bookings bump only the days they touch).
func (a *app) generation(t testing.TB, clinicID uuid.UUID) int64 {
	t.Helper()
	ctx := context.Background()
	keys, err := a.RDB.Keys(ctx, slots.GenerationKey(clinicID)+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, k := range keys {
		n, err := a.RDB.Get(ctx, k).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		sum += n
	}
	return sum
}

// phoneBook books through the calendar's phone form and returns the booking.
func (a *app) phoneBook(t testing.TB, cl *client, c clinic, sp uuid.UUID, start time.Time, name, email, phone string) booking.Booking {
	t.Helper()
	r := cl.Post("/staff/bookings", phoneForm(c, sp, start, name, email, phone)).Want(http.StatusCreated)
	if !strings.Contains(r.Text(`p.notice`), "Booked "+name) {
		t.Fatalf("phone booking notice: %q", r.Text(`p.notice`))
	}
	var id uuid.UUID
	err := a.Pool.QueryRow(context.Background(),
		`SELECT id FROM bookings WHERE clinic_id = $1 AND specialist_id = $2 AND slot_start = $3 AND status = 'confirmed'`, c.ID, sp, start).Scan(&id)
	if err != nil {
		t.Fatalf("the phone booking is not in the database: %v", err)
	}
	return a.booking(t, id)
}

// phoneForm is the calendar's phone booking form for the clinic's first type.
func phoneForm(c clinic, sp uuid.UUID, start time.Time, name, email, phone string) url.Values {
	l := start.In(c.Loc)
	return url.Values{
		"type": {c.Types[0].ID.String()}, "specialist": {sp.String()},
		"date": {l.Format(time.DateOnly)}, "time": {l.Format("15:04")},
		"name": {name}, "email": {email}, "phone": {phone},
	}
}

// confirmedRows counts the clinic's confirmed bookings, and the pairs of
// them that overlap for one specialist.
func (a *app) confirmedRows(t testing.TB, clinicID uuid.UUID) (rows, overlaps int64) {
	t.Helper()
	ctx := context.Background()
	if err := a.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND status = 'confirmed'`, clinicID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := a.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings a JOIN bookings b
		ON a.specialist_id = b.specialist_id AND a.id < b.id
		AND tstzrange(a.slot_start, a.slot_end) && tstzrange(b.slot_start, b.slot_end)
		WHERE a.clinic_id = $1 AND a.status = 'confirmed' AND b.status = 'confirmed'`, clinicID).Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	return rows, overlaps
}
