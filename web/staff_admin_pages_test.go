package web_test

// Tests of the admins' pages as they read: the zone picker on the
// settings page, a type's German name and description, and each staff
// account's actions on its own row.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// speaking makes cl a browser that asks for lang first.
func speaking(cl *client, lang string) *client {
	if cl.Header == nil {
		cl.Header = http.Header{}
	}
	cl.Header.Set("Accept-Language", lang)
	return cl
}

// berlinOffset is Berlin's offset from UTC now, as the picker writes it.
func berlinOffset(t *testing.T) string {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	_, off := time.Now().In(loc).Zone()
	return fmt.Sprintf("UTC+%02d:00", off/3600)
}

func TestSettingsZonePickerListsZonesAndSaves(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)

	page := admin.Get("/staff/settings").Want(http.StatusOK)
	zone := page.Doc().Find(`select#timezone`)
	if n := zone.Find("option").Length(); n < 400 {
		t.Fatalf("the zone select offers %d zones", n)
	}
	europe := zone.Find(`optgroup[label="Europe"]`)
	if europe.Length() != 1 || zone.Find("optgroup").Length() < 8 {
		t.Fatalf("the zones are not grouped by region: %d groups", zone.Find("optgroup").Length())
	}
	chosen := zone.Find("option[selected]")
	want := "Berlin time (Europe/Berlin), " + berlinOffset(t)
	if chosen.Length() != 1 || text(chosen) != want || chosen.Closest("optgroup").AttrOr("label", "") != "Europe" {
		t.Errorf("the chosen zone reads %q, want %q in Europe", text(chosen), want)
	}
	if v := europe.Find(`option[value="Europe/Vienna"]`); text(v) == "" || !strings.HasPrefix(text(v), "Vienna time (Europe/Vienna), UTC+") {
		t.Errorf("Vienna reads %q", text(v))
	}

	form := page.Form(settingsForm).Values
	form.Set("timezone", "Europe/Vienna")
	admin.Post("/staff/settings", form).WantRedirect("/staff/settings?saved=1")
	if got, _ := db.New(a.Pool).ClinicGet(context.Background(), c.ID); got.Timezone != "Europe/Vienna" {
		t.Fatalf("stored zone %q", got.Timezone)
	}
	after := admin.Get("/staff/settings?saved=1").Want(http.StatusOK)
	if v := after.Form(settingsForm).Values.Get("timezone"); v != "Europe/Vienna" {
		t.Errorf("the page after the save selects %q", v)
	}

	// In German the zone is said in German, its region too.
	de := speaking(admin, "de-DE,de;q=0.9").Get("/staff/settings").Want(http.StatusOK).Doc()
	if got := text(de.Find(`select#timezone option[selected]`)); !strings.HasPrefix(got, "Wiener Zeit (Europa/Vienna), UTC+") {
		t.Errorf("the German picker reads %q", got)
	}
	if de.Find(`select#timezone optgroup[label="Europa"]`).Length() != 1 || de.Find(`select#timezone optgroup[label="Europe"]`).Length() != 0 {
		t.Error("the German picker's regions are not German")
	}
}

func TestSettingsUnknownZoneIsRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)
	form := admin.Get("/staff/settings").Want(http.StatusOK).Form(settingsForm).Values
	before := a.auditCount(t, c.ID)
	for _, zone := range []string{"Mars/Olympus", "Local", ""} {
		v := cloneValues(form)
		v.Set("timezone", zone)
		r := admin.Post("/staff/settings", v).Want(http.StatusBadRequest)
		if msg := r.Text(`[data-testid="timezone-error"]`); !strings.Contains(msg, "time zone") {
			t.Errorf("%q: the message beside the zone is %q", zone, msg)
		}
		if inv, _ := r.Doc().Find(`select#timezone`).Attr("aria-invalid"); inv != "true" {
			t.Errorf("%q: the select is not marked invalid", zone)
		}
	}
	v := cloneValues(form)
	v.Set("timezone", "Mars/Olympus")
	r := speaking(admin, "de").Post("/staff/settings", v).Want(http.StatusBadRequest)
	if msg := r.Text(`[data-testid="timezone-error"]`); msg != "Bitte wählen Sie eine Zeitzone aus der Liste." {
		t.Errorf("the German message is %q", msg)
	}
	if got, _ := db.New(a.Pool).ClinicGet(context.Background(), c.ID); got.Timezone != "Europe/Berlin" || a.auditCount(t, c.ID) != before {
		t.Errorf("a refused zone was stored: %q", got.Timezone)
	}
}

func TestTypeGermanNameSavedAndShownToGermanReaders(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)
	ty := c.Type0()
	path := "/staff/types/" + ty.ID.String()

	form := admin.Get(path).Want(http.StatusOK).Form(`[data-testid="type-form"]`).Values
	if _, ok := form["nameDe"]; !ok {
		t.Fatalf("the type form has no German name: %v", form)
	}
	v := cloneValues(form)
	v.Set("descriptionDe", "Ohne Namen")
	v.Set("nameDe", " ")
	if r := admin.Post(path, v).Want(http.StatusUnprocessableEntity); r.Text(`[data-testid="nameDe-error"]`) == "" {
		t.Error("a German description without a German name is not refused beside the name")
	}

	v = cloneValues(form)
	v.Set("nameDe", "Erstgespräch")
	v.Set("descriptionDe", "Ein erstes Gespräch über Ihr Anliegen.")
	admin.Post(path, v).WantRedirect(path)
	back := admin.Get(path).Want(http.StatusOK).Form(`[data-testid="type-form"]`).Values
	if back.Get("nameDe") != "Erstgespräch" || back.Get("descriptionDe") != "Ein erstes Gespräch über Ihr Anliegen." || back.Get("name") != ty.Name {
		t.Errorf("the form shows back %v", back)
	}

	if got := admin.Get("/staff/types").Text(`[data-testid="type-list"]`); !strings.Contains(got, ty.Name) || strings.Contains(got, "Erstgespräch") {
		t.Errorf("the English list says %q", got)
	}
	deAdmin := speaking(a.signIn(t, c.Admin), "de-DE,de;q=0.9")
	if got := deAdmin.Get("/staff/types").Text(`[data-testid="type-list"]`); !strings.Contains(got, "Erstgespräch") || strings.Contains(got, ty.Name) {
		t.Errorf("the German list says %q", got)
	}
	if h1 := deAdmin.Get(path).Text("h1"); h1 != "Erstgespräch" {
		t.Errorf("the German form's heading is %q", h1)
	}

	patient := speaking(a.newClient(t), "de-DE,de;q=0.9").Get("/c/" + c.Slug).Want(http.StatusOK).Body
	if !strings.Contains(patient, "Erstgespräch") || !strings.Contains(patient, "Ein erstes Gespräch über Ihr Anliegen.") {
		t.Errorf("the German clinic page does not show the German name:\n%s", clip(patient, 2000))
	}
	if en := speaking(a.newClient(t), "en").Get("/c/" + c.Slug).Want(http.StatusOK).Body; strings.Contains(en, "Erstgespräch") {
		t.Error("the English clinic page shows the German name")
	}

	// A post without the German fields (a script) keeps them; an empty
	// German name removes them.
	v = cloneValues(back)
	v.Del("nameDe")
	v.Del("descriptionDe")
	admin.Post(path, v).WantRedirect(path)
	if got := admin.Get(path).Form(`[data-testid="type-form"]`).Values.Get("nameDe"); got != "Erstgespräch" {
		t.Errorf("a post without German fields lost the German name: %q", got)
	}
	v = admin.Get(path).Form(`[data-testid="type-form"]`).Values
	v.Set("nameDe", "")
	v.Set("descriptionDe", "")
	admin.Post(path, v).WantRedirect(path)
	if got := speaking(a.newClient(t), "de").Get("/c/" + c.Slug).Body; strings.Contains(got, "Erstgespräch") {
		t.Error("the emptied German name still shows")
	}
}

// accountRow is the row of the accounts page for id.
func accountRow(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`tr[data-account="` + id + `"]`)
}

func TestAccountActionsOnTheirRow(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := a.signIn(t, c.Admin)
	target := a.newAccount(t, c.ID, staff.RoleStaff)
	id := target.ID.String()

	doc := admin.Get("/staff/users").Want(http.StatusOK).Doc()
	row := accountRow(doc, id)
	for _, form := range []string{"user-role-form", "user-access-form", "user-link-form"} {
		f := row.Find(`form[data-testid="` + form + `"]`)
		if f.Length() != 1 || f.Find(`input[name="id"]`).AttrOr("value", "") != id {
			t.Errorf("the row has no %s for its account", form)
		}
	}
	for _, form := range []string{"user-access-form", "user-link-form"} {
		if row.Find(`details.confirm form[data-testid="`+form+`"]`).Length() != 1 {
			t.Errorf("%s does not ask first", form)
		}
	}
	if own := accountRow(doc, c.Admin.ID.String()); own.Length() != 1 || own.Find("form").Length() != 0 {
		t.Error("the viewer's own row offers actions")
	}
	if n := doc.Find(`[data-testid="roles"] dd`).Length(); n != 3 || !strings.Contains(text(doc.Find(`[data-testid="roles"]`)), "weekly hours") {
		t.Errorf("the roles are not explained: %q", text(doc.Find(`[data-testid="roles"]`)))
	}
	if n := doc.Find(`[data-testid="user-form"] input[type="radio"][name="role"]`).Length(); n != 3 {
		t.Errorf("the new account form offers %d roles", n)
	}

	// Change the role from the row: the account is reception from its next request.
	targetCl := a.signIn(t, target)
	targetCl.Get("/staff/specialists").Want(http.StatusOK)
	rf := admin.Get("/staff/users").Want(http.StatusOK).Form(`tr[data-account="` + id + `"] form[data-testid="user-role-form"]`)
	rf.Values.Set("role", staff.RoleReception)
	before := a.auditCount(t, c.ID)
	r := admin.Post(rf.Action, rf.Values).Want(http.StatusOK)
	if got := text(accountRow(r.Doc(), id).Find(`[data-testid="role"]`)); got != "Reception" {
		t.Errorf("the row says the role is %q", got)
	}
	if row := a.lastAudit(t, c.ID); row.Action != "staff.role" || row.EntityID != id || a.auditCount(t, c.ID) != before+1 {
		t.Errorf("audit row %s %s", row.Action, row.EntityID)
	}
	targetCl.Get("/staff/specialists").Want(http.StatusForbidden)

	// Disable from the row's confirmation, then enable.
	df := r.Form(`tr[data-account="` + id + `"] form[data-testid="user-access-form"]`)
	df.Values.Set("action", "disable")
	r = admin.Post(df.Action, df.Values).Want(http.StatusOK)
	if got := text(accountRow(r.Doc(), id).Find(`[data-testid="state"]`)); got != "disabled" {
		t.Errorf("after disabling the row says %q", got)
	}
	ef := accountRow(r.Doc(), id).Find(`form[data-testid="user-access-form"] button[value="enable"]`)
	if ef.Length() != 1 {
		t.Fatal("a disabled account has no Enable button")
	}
	admin.Post("/staff/users/access", url.Values{"id": {id}, "action": {"enable"}}).Want(http.StatusOK)

	// Refused: one's own role, a role that does not exist, and anyone but an admin.
	if r := admin.Post("/staff/users/role", url.Values{"id": {c.Admin.ID.String()}, "role": {"reception"}}).Want(http.StatusBadRequest); !strings.Contains(r.Text(`[role="alert"]`), "your own role") {
		t.Errorf("own role: %q", r.Text(`[role="alert"]`))
	}
	admin.Post("/staff/users/role", url.Values{"id": {id}, "role": {"owner"}}).Want(http.StatusBadRequest)
	for _, acc := range []account{c.Staff, target} {
		cl := a.signIn(t, acc)
		cl.Get("/staff/users").Want(http.StatusForbidden)
		cl.Post("/staff/users/role", url.Values{"id": {c.Admin.ID.String()}, "role": {"reception"}}).Want(http.StatusForbidden)
	}
	if got, _ := db.New(a.Pool).StaffUserGet(context.Background(), c.Admin.ID); got.Role != staff.RoleAdmin {
		t.Errorf("a refused change left the admin as %q", got.Role)
	}
}

func TestAccountsPageInGerman(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	admin := speaking(a.signIn(t, c.Admin), "de")
	target := a.newAccount(t, c.ID, staff.RoleStaff)
	r := admin.Post("/staff/users/access", url.Values{"id": {target.ID.String()}, "action": {"disable"}}).Want(http.StatusOK)
	if got := r.Text(`[data-testid="notice"]`); got != "Konto "+target.Email+" deaktiviert." {
		t.Errorf("the German notice is %q", got)
	}
	if got := text(accountRow(r.Doc(), target.ID.String()).Find(`[data-testid="role"]`)); got != "Praxisteam" {
		t.Errorf("the German role is %q", got)
	}
	r = admin.Post("/staff/users", url.Values{"email": {"short@example.org"}, "name": {"S"}, "password": {"short"}, "role": {"staff"}}).Want(http.StatusBadRequest)
	if got := r.Text(`[role="alert"]`); !strings.Contains(got, "mindestens 12 Zeichen") {
		t.Errorf("the German refusal is %q", got)
	}
}
