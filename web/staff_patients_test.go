package web_test

// The admins' Patients page: a patient with a phone number alone is found by
// another spelling of the number; the erasure asks for the number again
// and refuses anything else.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/privacy"
	"github.com/google/uuid"
)

func TestPatientsPageByPhone(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	admin := a.signIn(t, c.Admin)
	p := newErasePatient(t, "Paula")
	b := a.bookAs(t, c, c.Types[0], c.Specialists[0].ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: p.Name, Email: p.Email, Phone: p.Phone}).Booking
	// A booking taken by phone before an address was asked for has none.
	if _, err := a.Pool.Exec(context.Background(), `UPDATE bookings SET patient_email = '', patient_email_key = '' WHERE id = $1`, b.ID); err != nil {
		t.Fatal(err)
	}

	page := admin.Get("/staff/patients?phone=" + url.QueryEscape(p.PhoneTyped2)).Want(http.StatusOK)
	if got := page.Doc().Find(`[data-testid="patients-bookings"] tbody tr`).Length(); got != 1 {
		t.Fatalf("%d bookings shown, want 1", got)
	}
	if !strings.Contains(page.Text(`[data-testid="patients-held"]`), p.Name) {
		t.Error("the name given is not shown")
	}
	var looked int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM access_records
		WHERE clinic_id = $1 AND page = 'patients' AND $2 = ANY(booking_ids)`, c.ID, b.ID).Scan(&looked); err != nil || looked != 1 {
		t.Errorf("%d access records of the page (%v), want 1", looked, err)
	}
	f := page.Form(`[data-testid="patients-erase"]`)

	t.Run("WrongConfirmation", func(t *testing.T) {
		for _, typed := range []string{"", "030 999999", p.Phone} {
			v := cloneValues(f.Values)
			v.Set("confirm", typed)
			r := admin.Post(f.Action, v).Want(http.StatusUnprocessableEntity)
			if !strings.Contains(r.Text(`[data-testid="patients-problem"]`), "again") {
				t.Errorf("confirm %q: problem %q", typed, r.Text(`[data-testid="patients-problem"]`))
			}
		}
		if got := a.booking(t, b.ID); got.Patient.Name != p.Name || got.Status != "confirmed" {
			t.Fatalf("a refused erasure changed the booking: %+v", got)
		}
	})

	f.Values.Set("confirm", p.PhoneTyped2)
	r := admin.Post(f.Action, f.Values).Want(http.StatusOK)
	if got := r.Text(`[data-testid="patients-notice"]`); !strings.Contains(got, "1 bookings (1 future ones cancelled") {
		t.Fatalf("notice %q", got)
	}
	got := a.booking(t, b.ID)
	if got.Patient != (booking.Patient{Name: privacy.Anonymous}) || got.Status != "cancelled" {
		t.Errorf("the booking after the erasure: %+v", got)
	}
	var messages int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE booking_id = $1`, b.ID).Scan(&messages); err != nil || messages != 0 {
		t.Errorf("%d messages about the booking left (%v)", messages, err)
	}
	admin.Get("/staff/patients?phone=" + url.QueryEscape(p.Phone)).Want(http.StatusOK)
	r = admin.Post(f.Action, f.Values)
	wantErrorPage(t, r, http.StatusNotFound)
}

// A patient whose name is a single letter that every session's tokens
// hold (an "e" is in most hex ids) is erased; staff stay signed in and
// another patient's booking form draft stays: only the erased patient's
// draft and notices naming them are taken out of sessions.
func TestErasureOfAShortNameLeavesOtherSessions(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	admin := a.signIn(t, c.Admin)
	colleague := a.signIn(t, c.Staff)
	p := newErasePatient(t, "Paula")
	p.Name = "e"
	a.bookAs(t, c, c.Types[0], c.Specialists[0].ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: p.Name, Email: p.Email, Phone: p.Phone})

	page := admin.Get("/staff/patients?email=" + url.QueryEscape(p.Email)).Want(http.StatusOK)
	f := page.Form(`[data-testid="patients-erase"]`)
	f.Values.Set("confirm", p.Email)
	admin.Post(f.Action, f.Values).Want(http.StatusOK)

	colleague.Get("/staff").Want(http.StatusOK)
	admin.Get("/staff/patients").Want(http.StatusOK)
}

// A patient who booked under two addresses with one phone: the search by
// the first address shows the phone as another contact, and its link
// finds (and the erasure then reaches) the booking under the second.
func TestPatientsPageOffersTheOtherContacts(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	admin := a.signIn(t, c.Admin)
	p := newErasePatient(t, "Zelda")
	first := a.bookAs(t, c, c.Types[0], c.Specialists[0].ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: p.Name, Email: p.Email, Phone: p.Phone}).Booking
	second := a.bookAs(t, c, c.Types[1], c.Specialists[0].ID, c.Next(time.Wednesday, 9, 0), booking.Patient{Name: p.Name, Email: "work." + p.Email, Phone: p.Phone}).Booking

	page := admin.Get("/staff/patients?email=" + url.QueryEscape(p.Email)).Want(http.StatusOK)
	if got := page.Doc().Find(`[data-testid="patients-bookings"] tbody tr`).Length(); got != 1 {
		t.Fatalf("%d bookings shown for the first address, want 1", got)
	}
	link, ok := page.Doc().Find(`[data-testid="patients-others"] a`).Attr("href")
	if others := page.Text(`[data-testid="patients-others"]`); !ok || !strings.Contains(others, p.Phone) {
		t.Fatalf("the other contacts say %q (link %q), want the phone %s", others, link, p.Phone)
	}
	page = admin.Get(link).Want(http.StatusOK)
	if got := page.Doc().Find(`[data-testid="patients-bookings"] tbody tr`).Length(); got != 2 {
		t.Fatalf("%d bookings shown by address and phone, want 2", got)
	}
	f := page.Form(`[data-testid="patients-erase"]`)
	f.Values.Set("confirm", p.Email)
	admin.Post(f.Action, f.Values).Want(http.StatusOK)
	for _, id := range []uuid.UUID{first.ID, second.ID} {
		if got := a.booking(t, id); got.Patient != (booking.Patient{Name: privacy.Anonymous}) {
			t.Errorf("booking %s after the erasure: %+v", id, got.Patient)
		}
	}
}

// A number without a digit names nobody: 422 naming the number, not a
// server error.
func TestPatientsPageRefusesANumberWithoutDigits(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	admin := a.signIn(t, c.Admin)
	r := admin.Get("/staff/patients?phone=abc").Want(http.StatusUnprocessableEntity)
	if got := r.Text(`[data-testid="patients-problem"]`); !strings.Contains(got, "digits") {
		t.Errorf("problem %q", got)
	}
}
