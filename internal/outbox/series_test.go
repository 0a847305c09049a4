package outbox_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/series"
	"github.com/clinic/booking/internal/testkit"
)

// A series booked by staff sends one e-mail, in the patient's language,
// listing every session with one .ics of them all, each at its exact
// instant across the change to summer time; cancelling a session with
// every later one sends one e-mail more, listing those, and no single
// cancellation notices.
func TestSeriesSendsOneMailAndOneMoreForCancellingTheRest(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{})
	ctx := context.Background()
	first := time.Date(2027, 3, 16, 9, 0, 0, 0, r.loc) // CET; summer time from 28 March
	starts, err := series.Dates(first, r.loc, series.Rhythm{EveryDays: 7, Count: 6})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.bookings.BookSeries(ctx, booking.SeriesRequest{
		ClinicID: r.clinic.ID, AppointmentTypeID: r.clinic.Types[0].ID, SpecialistID: r.clinic.Specialists[0].ID,
		EveryDays: 7, Starts: starts, Patient: booking.Patient{Name: "Ada Kurs", Email: "ada.series@example.org"},
		Actor: "staff:test", Language: "de",
	})
	if err != nil {
		t.Fatal(err)
	}
	mails := r.smtp.WaitFor(t, 1, 20*time.Second)
	m := testkit.ParseReceived(t, mails[0])
	if m.To != "ada.series@example.org" || m.Language != "de" || !strings.Contains(m.Subject, "Ihre 6 Termine") {
		t.Errorf("series e-mail to %s in %q: %q; want the patient's, in German, naming 6 appointments", m.To, m.Language, m.Subject)
	}
	cal := string(m.Attachments["sessions.ics"])
	dtstarts := regexp.MustCompile(`DTSTART:(\S+)`).FindAllStringSubmatch(cal, -1)
	want := []string{"20270316T080000Z", "20270323T080000Z", "20270330T070000Z", "20270406T070000Z", "20270413T070000Z", "20270420T070000Z"}
	if len(dtstarts) != len(want) {
		t.Fatalf("the .ics has %d events, want %d:\n%s", len(dtstarts), len(want), cal)
	}
	for i, d := range dtstarts {
		if d[1] != want[i] {
			t.Errorf("event %d starts %s, want %s (09:00 in Berlin)", i+1, d[1], want[i])
		}
	}
	if strings.Count(m.Text, "/manage/") != 6 {
		t.Errorf("the e-mail has %d manage links, want one per session:\n%s", strings.Count(m.Text, "/manage/"), m.Text)
	}

	cancelled, err := r.bookings.CancelSeriesFrom(ctx, booking.SeriesCancelRequest{
		BookingID: got.Sessions[2].Booking.ID, ClinicID: r.clinic.ID, Actor: "staff:test", Reason: "Course ended early",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cancelled) != 4 || cancelled[0].SeriesPosition != 3 {
		t.Fatalf("cancelled %d sessions from position %d, want 4 from 3", len(cancelled), cancelled[0].SeriesPosition)
	}
	mails = r.smtp.WaitFor(t, 2, 20*time.Second)
	c := testkit.ParseReceived(t, mails[1])
	if !strings.Contains(c.Subject, "4 Ihrer Termine") || !strings.Contains(c.Text, "Course ended early") {
		t.Errorf("cancel e-mail %q, want 4 appointments named and the reason:\n%s", c.Subject, c.Text)
	}
	r.drained(t)
	if n := len(r.smtp.Messages()); n != 2 {
		t.Errorf("%d e-mails sent, want 2 (the series, then the cancel of the rest)", n)
	}
	counts := map[string]int{}
	rows, err := r.pool.Query(ctx, `SELECT kind, count(*) FROM messages WHERE clinic_id = $1 AND kind <> 'reminder' GROUP BY kind`, r.clinic.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		counts[k] = n
	}
	if counts["series"] != 1 || counts["series_cancellation"] != 1 || len(counts) != 2 {
		t.Errorf("messages written %v, want one series and one series_cancellation", counts)
	}
}
