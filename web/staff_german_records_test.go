package web_test

// The records, waitlist and sign-in pages speak the staff member's
// language: German headings, German refusals of their forms (the
// services' English messages said in German), a booking's status said
// one way ("Booked", "Gebucht"), and the same pages in English for an
// English browser.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
)

// inGerman makes cl a browser that asks for German.
func inGerman(cl *client) *client {
	if cl.Header == nil {
		cl.Header = http.Header{}
	}
	cl.Header.Set("Accept-Language", "de-DE,de;q=0.9,en;q=0.5")
	return cl
}

func TestStaffSignInSpeaksGerman(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	de := inGerman(a.newClient(t))
	page := de.Get("/staff/login").Want(http.StatusOK)
	if h := page.Text("h1"); h != "Anmeldung für das Praxisteam" || !strings.Contains(page.Body, `<html lang="de">`) {
		t.Errorf("the German sign-in page reads %q", h)
	}
	r := de.Post("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {"not the password"}}).Want(http.StatusUnauthorized)
	if e := r.Text(`[data-testid="login-error"]`); e != "Die E-Mail-Adresse oder das Passwort stimmt nicht." {
		t.Errorf("a wrong password reads %q in German", e)
	}
	en := a.newClient(t)
	en.Get("/staff/login").Want(http.StatusOK)
	r = en.Post("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {"not the password"}}).Want(http.StatusUnauthorized)
	if e := r.Text(`[data-testid="login-error"]`); e != "The e-mail address or the password is not right." {
		t.Errorf("a wrong password reads %q in English", e)
	}
}

func TestStaffAccountFormErrorsInGerman(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	cl := inGerman(a.signIn(t, c.Staff))
	page := cl.Get("/staff/account").Want(http.StatusOK)
	if h := page.Text("h1"); h != "Ihr Konto" {
		t.Errorf("Your account's heading reads %q", h)
	}
	for _, tc := range []struct {
		form        url.Values
		field, want string
	}{
		{url.Values{"current": {"wrong"}, "password": {"seven silver lanterns"}, "confirm": {"seven silver lanterns"}}, "current", "Ihr aktuelles Passwort stimmt nicht."},
		{url.Values{"current": {password}, "password": {"too short"}, "confirm": {"too short"}}, "password", "Ein Passwort braucht mindestens 12 Zeichen."},
		{url.Values{"current": {password}, "password": {"seven silver lanterns"}, "confirm": {"eight"}}, "confirm", "Die beiden neuen Passwörter stimmen nicht überein."},
	} {
		r := cl.Post("/staff/account", tc.form).Want(http.StatusBadRequest)
		if got := r.Text(`[data-testid="` + tc.field + `-error"]`); got != tc.want {
			t.Errorf("%s: the error reads %q, want %q", tc.field, got, tc.want)
		}
	}
	r := cl.Post("/staff/account/second-factor", url.Values{"code": {"000000"}}).Want(http.StatusBadRequest)
	if got := r.Text(`[data-testid="second-factor-error"]`); !strings.HasPrefix(got, "Dieser Code ist nicht der") {
		t.Errorf("a wrong first code reads %q", got)
	}
}

func TestStaffWelcomeLinkErrorsInGerman(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	_, acc, path := a.linkedAdmin(t)
	cl := inGerman(a.newClient(t))
	if h := cl.Get(path).Want(http.StatusOK).Text("h1"); h != "Wählen Sie Ihr Passwort" {
		t.Errorf("the link's page reads %q", h)
	}
	r := cl.Post(path, url.Values{"password": {acc.Email}, "confirm": {acc.Email}}).Want(http.StatusBadRequest)
	if got := r.Text(`[data-testid="password-error"]`); got != "Das Passwort darf nicht die E-Mail-Adresse des Kontos sein." {
		t.Errorf("the e-mail as password reads %q", got)
	}
	bad := cl.Get("/staff/welcome/no-such-token").Want(http.StatusNotFound)
	if got := bad.Text(`[data-testid="link-error"]`); !strings.HasPrefix(got, "Dieser Anmeldelink ist nicht bekannt.") {
		t.Errorf("an unknown link reads %q", got)
	}
}

func TestStaffPatientsInGermanAndEnglish(t *testing.T) {
	t.Parallel()
	a := keepingApp(t)
	c := a.deskClinic(t)
	email := uniqueEmail("paula")
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 9, 0), booking.Patient{Name: "Paula Patient", Email: email})
	en := a.signIn(t, c.Admin)
	keptMessage(t, en, email)
	if st := en.Get("/staff/patients?email=" + url.QueryEscape(email)).Want(http.StatusOK).Text(`[data-testid="patients-bookings"] tbody td:nth-child(4)`); st != "Booked (to come)" {
		t.Errorf("the booking's status reads %q in English", st)
	}
	if k := en.Get("/staff/outbox").Text(`[data-testid="outbox-row"] .muted`); !strings.Contains(k, "Confirmation e-mail") {
		t.Errorf("the outbox names the confirmation %q", k)
	}

	de := inGerman(a.signIn(t, c.Admin))
	page := de.Get("/staff/patients?email=" + url.QueryEscape(email)).Want(http.StatusOK)
	if st := page.Text(`[data-testid="patients-bookings"] tbody td:nth-child(4)`); st != "Gebucht (bevorstehend)" {
		t.Errorf("the booking's status reads %q in German", st)
	}
	if k := de.Get("/staff/outbox").Text(`[data-testid="outbox-row"] .muted`); !strings.Contains(k, "Buchungsbestätigung") {
		t.Errorf("the German outbox names the confirmation %q", k)
	}
	r := de.Get("/staff/patients?phone=abc").Want(http.StatusUnprocessableEntity)
	if got := r.Text(`[data-testid="patients-problem"]`); got != "Eine Telefonnummer braucht Ziffern." {
		t.Errorf("a phone without digits reads %q", got)
	}
	r = de.Post("/staff/patients/erase", url.Values{"email": {email}, "confirm": {"someone-else@example.org"}}).Want(http.StatusUnprocessableEntity)
	if got := r.Text(`[data-testid="patients-problem"]`); !strings.HasPrefix(got, "Geben Sie die E-Mail-Adresse oder Telefonnummer des Patienten") {
		t.Errorf("an erasure not confirmed reads %q", got)
	}
	if got := de.Get("/staff/access?phone=abc").Want(http.StatusBadRequest).Text(`[data-testid="error"]`); got != "Eine Telefonnummer braucht Ziffern." {
		t.Errorf("who looked, with a phone without digits, reads %q", got)
	}
}

func TestStaffWaitlistOfferRefusalInGerman(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	wed := c.Next(time.Wednesday, 9, 0)
	e := a.wlJoin(t, c, c.Types[0], wed, wed, "Jana Waiting")
	cl := inGerman(a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception)))
	list := cl.Get("/staff/waitlist").Want(http.StatusOK)
	if h := list.Text("h1"); h != "Warteliste" {
		t.Errorf("the waitlist's heading reads %q", h)
	}
	if d := list.Text(`[data-testid="wl-days"]`); !strings.HasPrefix(d, "Mi., ") {
		t.Errorf("the entry's day reads %q, want a German weekday", d)
	}
	r := wlRefused(t, cl, e, "not-a-specialist", rfc(wed), http.StatusBadRequest, "specialistId")
	if got := r.Text(`[data-testid="wl-error"]`); got != "Wählen Sie Behandler/in und Zeit aus der Liste." {
		t.Errorf("a specialist not of the list reads %q", got)
	}
	r = wlRefused(t, cl, e, c.Specialists[0].ID.String(), rfc(wed.AddDate(0, 0, 1)), http.StatusBadRequest, "start")
	if got := r.Text(`[data-testid="wl-error"]`); !strings.HasPrefix(got, "Dieser Patient wartet nur auf Mi., ") {
		t.Errorf("a day the patient does not wait for reads %q", got)
	}
}
