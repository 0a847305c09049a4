package web_test

// Staff cancel a series' session and every later one from the booking
// dialog: one transaction, one e-mail, the earlier sessions stand. The box
// is offered only where later sessions exist, and in German too.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/series"
)

func TestStaffCancelSessionAndTheLaterOnes(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	ctx := context.Background()
	starts, err := series.Dates(c.Next(time.Thursday, 11, 0), c.Loc, series.Rhythm{EveryDays: 7, Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Deps.Bookings.BookSeries(ctx, booking.SeriesRequest{
		ClinicID: c.ID, AppointmentTypeID: c.Type0().ID, SpecialistID: c.Specialists[0].ID, EveryDays: 7, Starts: starts,
		Patient: booking.Patient{Name: "Dora Desk", Email: "dora.desk@example.org"}, Actor: "staff:test", Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	admin := a.signIn(t, c.Admin)
	last := dialogOf(t, admin, got.Sessions[3].Booking.ID.String())
	if last.Find(`[data-testid="cancel-later"]`).Length() != 0 {
		t.Error("the last session's dialog offers to cancel later sessions")
	}
	second := dialogOf(t, admin, got.Sessions[1].Booking.ID.String())
	box := second.Find(`[data-testid="cancel-later"]`)
	id, _ := box.Attr("id")
	if box.Length() != 1 || box.AttrOr("name", "") != "later" || second.Find(`label[for="`+id+`"]`).Length() != 1 {
		t.Fatalf("the second session's dialog has no labelled box for the later sessions")
	}
	action := second.Find(`form[data-testid="cancel-form"]`).AttrOr("action", "")
	admin.Post(action, url.Values{"later": {"1"}}).Want(http.StatusBadRequest)
	r := admin.Post(action, url.Values{"reason": {"moved away"}, "later": {"1"}}).Want(http.StatusOK)
	if body := r.Text(`.notice`); !strings.Contains(body, "Cancelled 3 sessions of the series of Dora Desk.") {
		t.Errorf("the notice reads %q", body)
	}
	for i, want := range []string{booking.StatusConfirmed, booking.StatusCancelled, booking.StatusCancelled, booking.StatusCancelled} {
		if b := a.booking(t, got.Sessions[i].Booking.ID); b.Status != want {
			t.Errorf("session %d is %s, want %s", i+1, b.Status, want)
		}
	}
	var mails int
	if err := a.Pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE clinic_id = $1 AND kind IN ('series_cancellation', 'cancellation')`, c.ID).Scan(&mails); err != nil || mails != 1 {
		t.Errorf("%d cancellation e-mails (%v), want 1 for the three sessions", mails, err)
	}
	admin.Post(action, url.Values{"reason": {"again"}, "later": {"1"}}).Want(http.StatusConflict)

	// In German the box and the outcome read in German.
	switchTo(t, admin, "/staff/day", "de")
	de := dialogOf(t, admin, got.Sessions[0].Booking.ID.String())
	if l := text(de.Find(`label[for="` + de.Find(`[data-testid="cancel-later"]`).AttrOr("id", "") + `"]`)); l != "Auch die späteren Termine dieser Serie absagen" {
		t.Errorf("the German box reads %q", l)
	}
}
