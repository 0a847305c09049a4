package clinics_test

// Tests of the settings service against the real PostgreSQL of testkit:
// a save with its audit row, a stale version, every bad field, and a change
// of zone that waits for confirmation while bookings lie ahead.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

const actor = "staff:admin@example.org"

func newClinic(t *testing.T) (*pgxpool.Pool, *clinics.Service, testkit.Clinic) {
	t.Helper()
	pool := testkit.DB(t)
	return pool, clinics.NewService(pool), testkit.NewClinic(t, pool, testkit.ClinicOptions{})
}

func current(t *testing.T, svc *clinics.Service, id uuid.UUID) clinics.Settings {
	t.Helper()
	st, err := svc.Settings(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func auditOf(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) []db.AuditLog {
	t.Helper()
	rows, err := db.New(pool).AuditListByEntity(context.Background(), db.AuditListByEntityParams{Entity: "clinic", EntityID: id.String()})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestSettingsSaveStoresAndAudits(t *testing.T) {
	t.Parallel()
	pool, svc, c := newClinic(t)
	st := current(t, svc, c.ID)
	if st.Defaults != (clinics.TypeDefaults{SlotStepMin: 30, MinNoticeMin: 0, MaxAdvanceDays: 60, CooldownMin: 1440}) || st.Language != "en" {
		t.Fatalf("a clinic's starting settings: %+v", st)
	}
	in := st
	in.Name, in.Address = "  Praxis Mitte ", "Hauptstraße 5, Berlin"
	in.ContactPhone, in.ContactEmail, in.Language = "+49 30 1234567", "desk@praxis.example", "de"
	in.Defaults = clinics.TypeDefaults{SlotStepMin: 15, MinNoticeMin: 120, MaxAdvanceDays: 90, CooldownMin: 0}
	res, err := svc.SaveSettings(context.Background(), c.ID, actor, in, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != nil || res.ZoneChanged || res.Settings.Version != st.Version+1 || res.Settings.Name != "Praxis Mitte" {
		t.Fatalf("result %+v", res)
	}
	in.Name, in.Version = "Praxis Mitte", st.Version+1
	if got := current(t, svc, c.ID); got != in {
		t.Errorf("stored %+v\nwant %+v", got, in)
	}
	cl, _ := svc.ByID(context.Background(), c.ID)
	if cl.ContactPhone != in.ContactPhone || cl.ContactEmail != in.ContactEmail {
		t.Errorf("the clinic as pages see it: %+v", cl)
	}
	rows := auditOf(t, pool, c.ID)
	if len(rows) != 1 || rows[0].Action != "clinic.settings" || rows[0].Actor != actor {
		t.Fatalf("audit rows %+v", rows)
	}
	var before, after clinics.Settings
	if json.Unmarshal(rows[0].Before, &before) != nil || json.Unmarshal(rows[0].After, &after) != nil ||
		before.Name != st.Name || after.Name != "Praxis Mitte" || after.Defaults.SlotStepMin != 15 || before.Defaults.SlotStepMin != 30 {
		t.Errorf("audit before %s after %s", rows[0].Before, rows[0].After)
	}

	// Saving the same values again changes nothing and writes nothing.
	if _, err := svc.SaveSettings(context.Background(), c.ID, actor, in, false); err != nil {
		t.Fatal(err)
	}
	if n := len(auditOf(t, pool, c.ID)); n != 1 || current(t, svc, c.ID).Version != in.Version {
		t.Errorf("an unchanged save wrote %d audit rows", n-1)
	}
	if d, err := svc.TypeDefaults(context.Background(), c.ID); err != nil || d != in.Defaults {
		t.Errorf("type defaults %+v %v", d, err)
	}
}

func TestSettingsStaleVersionIsRefused(t *testing.T) {
	t.Parallel()
	pool, svc, c := newClinic(t)
	opened := current(t, svc, c.ID)
	first := opened
	first.Name = "First editor"
	if _, err := svc.SaveSettings(context.Background(), c.ID, actor, first, false); err != nil {
		t.Fatal(err)
	}
	second := opened
	second.Address = "Second editor's address"
	_, err := svc.SaveSettings(context.Background(), c.ID, actor, second, false)
	ae := apperr.As(err)
	if ae == nil || ae.Code != apperr.CodeConcurrencyConflict || ae.Kind != apperr.PreconditionFailed {
		t.Fatalf("stale save: %v", err)
	}
	if cur, _ := ae.Details["current"].(clinics.Settings); cur.Name != "First editor" || cur.Version != opened.Version+1 {
		t.Errorf("the refusal carries %+v", ae.Details["current"])
	}
	if got := current(t, svc, c.ID); got.Address != "" || got.Name != "First editor" {
		t.Errorf("stored %+v", got)
	}
	if n := len(auditOf(t, pool, c.ID)); n != 1 {
		t.Errorf("%d audit rows, want the first save's only", n)
	}
}

func TestSettingsBadInputNamesTheField(t *testing.T) {
	t.Parallel()
	pool, svc, c := newClinic(t)
	base := current(t, svc, c.ID)
	for _, tc := range []struct {
		field string
		edit  func(*clinics.Settings)
	}{
		{"name", func(s *clinics.Settings) { s.Name = "  " }},
		{"name", func(s *clinics.Settings) { s.Name = "Bad\u202Ename" }},
		{"name", func(s *clinics.Settings) { s.Name = strings.Repeat("n", 201) }},
		{"address", func(s *clinics.Settings) { s.Address = "line\nbreak" }},
		{"contactPhone", func(s *clinics.Settings) { s.ContactPhone = "call us" }},
		{"contactPhone", func(s *clinics.Settings) { s.ContactPhone = "030-123456" }},
		{"contactPhone", func(s *clinics.Settings) { s.ContactPhone = "1+234567" }},
		{"contactPhone", func(s *clinics.Settings) { s.ContactPhone = "+49 12" }},
		{"contactEmail", func(s *clinics.Settings) { s.ContactEmail = "desk" }},
		{"contactEmail", func(s *clinics.Settings) { s.ContactEmail = "Desk <desk@x.example>" }},
		{"contactEmail", func(s *clinics.Settings) { s.ContactEmail = "desk@localhost" }},
		{"language", func(s *clinics.Settings) { s.Language = "fr" }},
		{"timezone", func(s *clinics.Settings) { s.Timezone = "Mars/Olympus" }},
		{"timezone", func(s *clinics.Settings) { s.Timezone = "Local" }},
		{"defaultSlotStepMin", func(s *clinics.Settings) { s.Defaults.SlotStepMin = 4 }},
		{"defaultMinNoticeMin", func(s *clinics.Settings) { s.Defaults.MinNoticeMin = -1 }},
		{"defaultMaxAdvanceDays", func(s *clinics.Settings) { s.Defaults.MaxAdvanceDays = 731 }},
		{"defaultCooldownMin", func(s *clinics.Settings) { s.Defaults.CooldownMin = 60*24*365 + 1 }},
	} {
		in := base
		tc.edit(&in)
		_, err := svc.SaveSettings(context.Background(), c.ID, actor, in, true)
		if ae := apperr.As(err); ae == nil || ae.Kind != apperr.Invalid || ae.Field() != tc.field || ae.Message == "" {
			t.Errorf("%+v: %v, want INVALID_ARGUMENT naming %s", in, err, tc.field)
		}
	}
	if got := current(t, svc, c.ID); got != base || len(auditOf(t, pool, c.ID)) != 0 {
		t.Errorf("refused saves changed the clinic: %+v", got)
	}
}

// insertBooking stores a confirmed booking of the clinic's first type and
// specialist.
func insertBooking(t *testing.T, pool *pgxpool.Pool, c testkit.Clinic, start time.Time) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `INSERT INTO bookings
		(clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, patient_name, patient_email)
		VALUES ($1, $2, $3, $4, $5, 'Pat', 'pat@example.org')`,
		c.ID, c.Types[0].ID, c.Specialists[0].ID, start, start.Add(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
}

func TestSettingsZoneChangeWaitsForConfirmation(t *testing.T) {
	t.Parallel()
	pool, svc, c := newClinic(t)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	starts := []time.Time{
		testkit.NextWeekday(time.Now(), berlin, time.Monday, 9, 0),
		testkit.NextWeekday(time.Now(), berlin, time.Tuesday, 11, 30),
		testkit.NextWeekday(time.Now().AddDate(0, 0, 7), berlin, time.Monday, 9, 0),
		testkit.NextWeekday(time.Now().AddDate(0, 0, 14), berlin, time.Monday, 9, 0),
	}
	for _, s := range starts {
		insertBooking(t, pool, c, s)
	}
	in := current(t, svc, c.ID)
	version := in.Version
	in.Timezone = "Europe/London"
	res, err := svc.SaveSettings(context.Background(), c.ID, actor, in, false)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pending
	if p == nil || p.Count != 4 || p.From != "Europe/Berlin" || p.To != "Europe/London" || len(p.Examples) != 3 {
		t.Fatalf("pending %+v", p)
	}
	first := p.Examples[0]
	if !first.Was.Equal(first.Becomes) || first.Was.Format("15:04") != "09:00" || first.Becomes.Format("15:04") != "08:00" ||
		first.Becomes.Location().String() != "Europe/London" {
		t.Errorf("the first booking reads %s, then %s", first.Was, first.Becomes)
	}
	if got := current(t, svc, c.ID); got.Timezone != "Europe/Berlin" || got.Version != version || len(auditOf(t, pool, c.ID)) != 0 {
		t.Fatalf("an unconfirmed change was stored: %+v", got)
	}

	res, err = svc.SaveSettings(context.Background(), c.ID, actor, in, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pending != nil || !res.ZoneChanged || res.OldZone != "Europe/Berlin" || len(res.Spans) != 4 || res.Settings.Timezone != "Europe/London" {
		t.Fatalf("confirmed %+v", res)
	}
	if got := current(t, svc, c.ID); got.Timezone != "Europe/London" || got.Version != version+1 {
		t.Errorf("stored %+v", got)
	}
	rows := auditOf(t, pool, c.ID)
	if len(rows) != 1 || !strings.Contains(string(rows[0].Before), "Europe/Berlin") || !strings.Contains(string(rows[0].After), "Europe/London") {
		t.Errorf("audit %+v", rows)
	}
}

func TestSettingsZoneChangeWithoutBookingsSavesAtOnce(t *testing.T) {
	t.Parallel()
	_, svc, c := newClinic(t)
	in := current(t, svc, c.ID)
	in.Timezone = "America/New_York"
	res, err := svc.SaveSettings(context.Background(), c.ID, actor, in, false)
	if err != nil || res.Pending != nil || !res.ZoneChanged || current(t, svc, c.ID).Timezone != "America/New_York" {
		t.Fatalf("%+v %v", res, err)
	}
}
