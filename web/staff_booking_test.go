package web_test

// Tests of a booking's staff page: its details and its e-mails, queued
// without workers, sent with them, and a permanent refusal shown as not
// delivered; every role reads it, another clinic's booking is not found,
// and the calendar links to it.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

func staffBookingPath(id uuid.UUID) string { return "/staff/bookings/" + id.String() }

// messageStates reads a booking page's e-mails: kind -> status.
func messageStates(r *response) map[string]string {
	out := map[string]string{}
	r.Doc().Find(`[data-testid="message"]`).Each(func(_ int, s *goquery.Selection) {
		kind, _ := s.Attr("data-kind")
		status, _ := s.Attr("data-status")
		out[kind] = status
	})
	return out
}

// Without workers: the details, in the clinic's zone, and the
// confirmation and reminder queued; the calendar's booking links here.
func TestStaffBookingShowsQueuedMessages(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	start := c.Next(time.Wednesday, 10, 30)
	if time.Until(start) < 48*time.Hour {
		// A day-ahead reminder must still lie ahead, whatever the hour.
		start = start.AddDate(0, 0, 7)
	}
	email := uniqueEmail("page")
	conf := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, start, booking.Patient{Name: "Page Patient", Email: email, Phone: "+49 30 1234567"})
	admin := a.signIn(t, c.Admin)

	r := admin.Get(staffBookingPath(conf.Booking.ID)).Want(http.StatusOK)
	if h := r.Text("h1"); h != "Booking of Page Patient" {
		t.Errorf("heading %q", h)
	}
	body := r.Text(`[data-testid="booking"]`)
	for _, want := range []string{start.In(c.Loc).Format("15:04"), "Berlin time", c.Type0().Name, c.Specialists[0].Name, email, "+49 30 1234567", "Booked"} {
		if !strings.Contains(body, want) {
			t.Errorf("the details lack %q: %s", want, body)
		}
	}
	states := messageStates(r)
	if states["confirmation"] != "queued" || states["reminder"] != "queued" {
		t.Errorf("messages %v, want the confirmation and the reminder queued", states)
	}
	if r.Doc().Find(`[data-testid="undeliverable"]`).Length() != 0 {
		t.Error("a warning with nothing refused")
	}
	if n := r.Doc().Find(`table[data-testid="messages"] th[scope="col"]`).Length(); n != 6 {
		t.Errorf("the messages table has %d column headers", n)
	}

	cal := admin.Get("/staff?view=day&date=" + start.In(c.Loc).Format(time.DateOnly)).Want(http.StatusOK)
	if cal.Doc().Find(`[data-testid="entry-booking"] a[href="`+staffBookingPath(conf.Booking.ID)+`"]`).Length() != 1 {
		t.Error("the calendar's booking does not link to its page")
	}
	found := admin.Get("/staff/bookings/search?q=" + url.QueryEscape(email)).Want(http.StatusOK)
	if found.Doc().Find(`[data-testid="table"] a[href="`+staffBookingPath(conf.Booking.ID)+`"]`).Length() != 1 {
		t.Error("the search result does not link to the booking's page")
	}

	// Cancelled: the reason, the notice queued, the reminder cancelled.
	if _, err := a.Deps.StaffBookings.Cancel(context.Background(), c.Admin.User(c.ID), conf.Booking.ID, "The specialist is ill"); err != nil {
		t.Fatal(err)
	}
	r = admin.Get(staffBookingPath(conf.Booking.ID)).Want(http.StatusOK)
	if got := r.Text(`[data-testid="cancel-reason"]`); got != "The specialist is ill" {
		t.Errorf("cancel reason %q", got)
	}
	if s := messageStates(r); s["cancellation"] != "queued" || s["reminder"] != "cancelled" {
		t.Errorf("after the cancel: %v", s)
	}
}

// Every role reads a booking of its clinic; another clinic's booking, an
// unknown id and no id at all are not found, showing nothing of theirs.
func TestStaffBookingRolesAndOtherClinic(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	mine := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	conf := a.bookAs(t, mine, mine.Type0(), mine.Specialists[0].ID, mine.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Mine Patient", Email: uniqueEmail("mine")})
	theirs := a.bookAs(t, other, other.Type0(), other.Specialists[0].ID, other.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Their Patient", Email: uniqueEmail("theirs")})
	accounts := map[string]account{staff.RoleAdmin: mine.Admin, staff.RoleStaff: mine.Staff, staff.RoleReception: a.newAccount(t, mine.ID, staff.RoleReception)}
	for _, role := range staff.Roles {
		cl := a.signIn(t, accounts[role])
		if r := cl.Get(staffBookingPath(conf.Booking.ID)); r.Status != http.StatusOK || !strings.Contains(r.Body, "Mine Patient") {
			t.Errorf("%s: %d", role, r.Status)
		}
		for _, p := range []string{staffBookingPath(theirs.Booking.ID), staffBookingPath(uuid.New()), "/staff/bookings/not-an-id"} {
			r := cl.Get(p)
			if r.Status != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", role, p, r.Status)
			}
			if strings.Contains(r.Body, "Their Patient") {
				t.Errorf("%s %s shows the other clinic's patient", role, p)
			}
		}
	}
	a.newClient(t).Get(staffBookingPath(conf.Booking.ID)).WantRedirect("/staff/login")
}

// With the workers sending to a real SMTP server: the confirmation is
// shown sent; the mail server's permanent refusal of the next booking's
// confirmation is shown failed, with its answer, under the warning.
func TestStaffBookingShowsSentAndUndelivered(t *testing.T) {
	t.Parallel()
	a, srv := smtpApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	ok := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 10, 0), booking.Patient{Name: "Reached Patient", Email: uniqueEmail("reached")})
	srv.WaitFor(t, 1, mailWait)
	var r *response
	testkit.WaitFor(t, mailWait, "the confirmation shown sent", func() bool {
		r = admin.Get(staffBookingPath(ok.Booking.ID)).Want(http.StatusOK)
		return messageStates(r)["confirmation"] == "sent"
	})
	if r.Doc().Find(`[data-testid="undeliverable"]`).Length() != 0 {
		t.Error("a warning on a booking whose e-mail went out")
	}

	srv.RefuseNext(1, 550, "5.1.1 Mailbox does not exist")
	bad := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Thursday, 10, 0), booking.Patient{Name: "Unreached Patient", Email: uniqueEmail("unreached")})
	testkit.WaitFor(t, mailWait, "the refused confirmation shown failed", func() bool {
		r = admin.Get(staffBookingPath(bad.Booking.ID)).Want(http.StatusOK)
		return messageStates(r)["confirmation"] == "failed"
	})
	if got := r.Text(`[data-testid="undeliverable"]`); !strings.Contains(got, "E-mail could not be delivered") {
		t.Errorf("the warning says %q", got)
	}
	row := r.Doc().Find(`[data-testid="message"][data-kind="confirmation"]`)
	if e := text(row.Find(`[data-testid="message-error"]`)); !strings.Contains(e, "550") {
		t.Errorf("the failed message's error: %q", e)
	}
	if len(srv.Messages()) != 1 {
		t.Errorf("the server accepted %d messages, want 1", len(srv.Messages()))
	}
}
