package web_test

// Tests of the clinic settings page through the server: an admin saves,
// other roles are refused, bad fields and stale saves answer in place, a
// change of zone with bookings ahead waits for confirmation and then
// refreshes the open booking pages, and new types start from the defaults.

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

const settingsForm = `[data-testid="settings-form"]`

func TestSettingsAdminSaves(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)

	page := admin.Get("/staff/settings").Want(http.StatusOK)
	if href, _ := page.Doc().Find(`nav[aria-label="Staff"] a[aria-current="page"]`).Attr("href"); href != "/staff/settings" {
		t.Errorf("the header's current link is %q, want the Settings link", href)
	}
	f := page.Form(settingsForm)
	if f.Action != "/staff/settings" || f.Values.Get("name") != c.Name || f.Values.Get("timezone") != "Europe/Berlin" ||
		f.Values.Get("language") != "en" || f.Values.Get("defaultSlotStepMin") != "30" || f.Values.Get("defaultCooldown")+f.Values.Get("defaultCooldownUnit") != "1d" {
		t.Fatalf("the form shows %q %v", f.Action, f.Values)
	}
	v := cloneValues(f.Values)
	v.Set("name", "Praxis Mitte")
	v.Set("address", "Hauptstraße 5, 10827 Berlin")
	v.Set("contactPhone", "+49 30 1234567")
	v.Set("contactEmail", "desk@praxis.example")
	v.Set("language", "de")
	v.Set("defaultSlotStepMin", "15")
	v.Set("defaultMinNoticeMin", "120")
	v.Set("defaultMaxAdvanceDays", "90")
	v.Set("defaultCooldownMin", "0")
	before := a.auditCount(t, c.ID)
	admin.Post("/staff/settings", v).WantRedirect("/staff/settings?saved=1")

	got, err := db.New(a.Pool).ClinicGet(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Praxis Mitte" || got.ContactPhone != "+49 30 1234567" || got.ContactEmail != "desk@praxis.example" || got.Language != "de" ||
		got.DefaultSlotStepMin != 15 || got.DefaultMinNoticeMin != 120 || got.DefaultMaxAdvanceDays != 90 || got.DefaultCooldownMin != 0 || got.Version != c.Version+1 {
		t.Errorf("stored %+v", got)
	}
	if n := a.auditCount(t, c.ID); n != before+1 {
		t.Errorf("%d audit rows for one save", n-before)
	}
	if row := a.lastAudit(t, c.ID); row.Action != "clinic.settings" || row.Actor != c.Admin.Actor() ||
		!strings.Contains(string(row.Before), c.Name) || !strings.Contains(string(row.After), "Praxis Mitte") {
		t.Errorf("audit row %s %s %s -> %s", row.Action, row.Actor, row.Before, row.After)
	}
	saved := admin.Get("/staff/settings?saved=1").Want(http.StatusOK)
	if saved.Text(`[data-testid="saved"]`) == "" || saved.Form(settingsForm).Values.Get("contactEmail") != "desk@praxis.example" {
		t.Error("the page after a save does not say so or lost the values")
	}

	// A new appointment type starts from the clinic's defaults.
	nf := admin.Get("/staff/types/new").Want(http.StatusOK).Form(`[data-testid="type-form"]`).Values
	if nf.Get("slotStepMin") != "15" || nf.Get("minNotice")+nf.Get("minNoticeUnit") != "2h" || nf.Get("maxAdvanceDays") != "90" || nf.Get("cooldown") != "0" {
		t.Errorf("the new type form starts with %v", nf)
	}
}

func TestSettingsOtherRolesAreRefused(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	form := a.signIn(t, c.Admin).Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
	for _, acc := range []account{c.Staff, a.newAccount(t, c.ID, staff.RoleReception)} {
		cl := a.signIn(t, acc)
		if cl.Get("/staff").Want(http.StatusOK).Doc().Find(`a[href="/staff/settings"]`).Length() != 0 {
			t.Errorf("%s sees a Settings link", acc.Email)
		}
		r := cl.Get("/staff/settings").Want(http.StatusForbidden)
		if !strings.Contains(r.Body, "Only an admin of this clinic can change the clinic") {
			t.Errorf("the refusal does not say who may: %s", clip(r.Body, 400))
		}
		v := cloneValues(form)
		v.Set("_csrf", cl.CSRF)
		v.Set("name", "Taken over")
		cl.Post("/staff/settings", v).Want(http.StatusForbidden)
	}
	if got, _ := db.New(a.Pool).ClinicGet(context.Background(), c.ID); got.Name != c.Name {
		t.Errorf("a refused save changed the name to %q", got.Name)
	}
}

func TestSettingsBadFieldsAnswerInPlace(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)
	form := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
	before := a.auditCount(t, c.ID)
	for _, tc := range []struct{ field, value string }{
		{"name", " "},
		{"name", "Bad\u202Ename"},
		{"address", strings.Repeat("a", 501)},
		{"contactPhone", "ring us"},
		{"contactEmail", "desk@"},
		{"language", "fr"},
		{"timezone", "Europe/Atlantis"},
		{"defaultSlotStepMin", "2"},
		{"defaultSlotStepMin", "ten"},
		{"defaultMinNoticeMin", "-5"},
		{"defaultMaxAdvanceDays", "0"},
		{"defaultCooldownMin", "99999999"},
	} {
		v := cloneValues(form)
		v.Set(tc.field, tc.value)
		r := admin.Post("/staff/settings", v).Want(http.StatusBadRequest)
		if r.Text(`[data-testid="`+tc.field+`-error"]`) == "" {
			t.Errorf("%s=%q: no message beside the field\n%s", tc.field, tc.value, clip(r.Body, 800))
		}
		if back := r.Form(settingsForm).Values; tc.field != "language" && !strings.HasPrefix(tc.field, "default") && back.Get(tc.field) != tc.value {
			t.Errorf("%s: the form lost what was typed: %q", tc.field, back.Get(tc.field))
		}
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("refused saves wrote %d audit rows", n-before)
	}
}

func TestSettingsStaleSaveShowsCurrentValues(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)
	opened := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
	first := cloneValues(opened)
	first.Set("name", "First editor's name")
	admin.Post("/staff/settings", first).WantRedirect("/staff/settings?saved=1")

	second := cloneValues(opened)
	second.Set("address", "Second editor's address")
	r := admin.Post("/staff/settings", second).Want(http.StatusConflict)
	if r.Text(`[data-testid="stale"]`) == "" {
		t.Error("a stale save does not say why it was refused")
	}
	back := r.Form(settingsForm).Values
	if back.Get("name") != "First editor's name" || back.Get("address") != "" || back.Get("version") != strconv.Itoa(int(c.Version+1)) {
		t.Errorf("the refusal shows %v, want the current values", back)
	}
	if got, _ := db.New(a.Pool).ClinicGet(context.Background(), c.ID); got.Address != "" {
		t.Errorf("the stale save was stored: %q", got.Address)
	}
}

func TestSettingsZoneChangeConfirmsAndRefreshesLivePages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	a.bookDirect(t, c, c.Type0(), c.Specialists[0].ID, c.Monday(9, 0), "Pat One")
	a.bookDirect(t, c, c.Type0(), c.Specialists[1].ID, c.Monday(11, 30), "Pat Two")
	admin := a.signIn(t, c.Admin)
	// A second instance on the same database and Redis, whose calendar has
	// read the zone before the change and opens no booking page after it.
	other := newApp(t, withPool(a.Pool), withRedis(a.RDB))
	otherAdmin := other.signIn(t, c.Admin)
	calURL := "/staff?date=" + c.Monday(9, 0).Format("2006-01-02")
	if cal := otherAdmin.Get(calURL).Want(http.StatusOK); !strings.Contains(cal.Body, "09:00") {
		t.Fatalf("the other instance's calendar before the change has no 09:00 booking")
	}
	v := a.viewer(t, c.Slug, c.Types[0].ID, "week="+c.NextWeek())
	s := v.open()

	form := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
	form.Set("timezone", "Europe/London")
	gen := a.generation(t, c.ID)
	r := admin.Post("/staff/settings", form).Want(http.StatusOK)
	if !strings.Contains(r.Text(`[data-testid="zone-count"]`), "2 booked appointments lie ahead") {
		t.Errorf("count: %q", r.Text(`[data-testid="zone-count"]`))
	}
	examples := r.Text(`[data-testid="zone-examples"]`)
	if !strings.Contains(examples, "09:00 (Berlin time) shows as") || !strings.Contains(examples, "08:00 (London time)") ||
		!strings.Contains(examples, "11:30 (Berlin time) shows as") || !strings.Contains(examples, "10:30 (London time)") {
		t.Errorf("examples: %q", examples)
	}
	if got, _ := db.New(a.Pool).ClinicGet(context.Background(), c.ID); got.Timezone != "Europe/Berlin" {
		t.Fatalf("the first POST stored the zone %q", got.Timezone)
	}
	if s2, ok, _ := s.next(300 * time.Millisecond); ok && s2.Name != "" {
		t.Errorf("the unconfirmed change already sent %s", s2.Name)
	}

	confirm := r.Form(`[data-testid="zone-confirm-form"]`)
	if confirm.Values.Get("confirmZone") != "yes" || r.Doc().Find(`[data-testid="zone-confirm-form"] button`).Text() != "Change the zone anyway" {
		t.Fatalf("confirmation form %v", confirm.Values)
	}
	admin.Post(confirm.Action, confirm.Values).WantRedirect("/staff/settings?saved=1")
	if got, _ := db.New(a.Pool).ClinicGet(context.Background(), c.ID); got.Timezone != "Europe/London" {
		t.Fatalf("the confirmed zone is %q", got.Timezone)
	}
	if a.generation(t, c.ID) <= gen {
		t.Error("the clinic's cached slot lists were not retired")
	}
	ev, _ := s.until(evWait, "a refresh after the zone change", func(e sseEvent) bool { return e.Name != "" && len(e.Lines) > 0 })
	if ev.Name == "end" {
		t.Fatalf("the stream ended: %s", ev.Data())
	}
	// This instance shows the new zone at once on the staff calendar; the
	// other follows within seconds (a zone kept in memory for good failed
	// there: the 09:00 Berlin booking still showed at 09:00).
	if cal := admin.Get(calURL).Want(http.StatusOK); !strings.Contains(cal.Body, "08:00") {
		t.Errorf("the calendar after the zone change does not show the 09:00 Berlin booking at 08:00 London:\n%s", clip(cal.Body, 3000))
	}
	testkit.WaitFor(t, 15*time.Second, "the other instance's calendar in the new zone", func() bool {
		cal := otherAdmin.Get(calURL)
		return cal.Status == http.StatusOK && strings.Contains(cal.Body, "08:00") && !strings.Contains(cal.Body, "09:00–")
	})
}

// The contact details an admin saves show on the clinic page and on a
// booking's manage page, as tel: and mailto: links; without any, no block.
func TestSettingsContactOnPatientPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	conf := a.bookDirect(t, c, c.Type0(), c.Specialists[0].ID, c.Monday(9, 0), "Pat")
	patient := a.newClient(t)
	if patient.Get("/c/"+c.Slug).Want(http.StatusOK).Doc().Find(`[data-testid="clinic-contact"]`).Length() != 0 {
		t.Error("a clinic without contact details shows a contact block")
	}

	admin := a.signIn(t, c.Admin)
	v := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
	v.Set("contactPhone", "+49 30 1234567")
	v.Set("contactEmail", "desk@praxis.example")
	admin.Post("/staff/settings", v).WantRedirect("/staff/settings?saved=1")

	for _, path := range []string{"/c/" + c.Slug, "/manage/" + conf.ManageToken} {
		doc := patient.Get(path).Want(http.StatusOK).Doc()
		phone, email := doc.Find(`[data-testid="clinic-phone"]`), doc.Find(`[data-testid="clinic-email"]`)
		if href, _ := phone.Attr("href"); href != "tel:+49301234567" || text(phone) != "+49 30 1234567" {
			t.Errorf("%s: phone link %q %q", path, href, text(phone))
		}
		if href, _ := email.Attr("href"); href != "mailto:desk@praxis.example" || text(email) != "desk@praxis.example" {
			t.Errorf("%s: e-mail link %q %q", path, href, text(email))
		}
	}
}
