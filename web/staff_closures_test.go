package web_test

// Closures and public holidays: what patients are offered on closed dates
// (the API, the type page, a watched week in memory, another instance),
// the bookings a closure leaves and their cancelling, and the refusals of
// a booking on a closed date.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/testkit"
)

// closeDates posts the closures form as cl: who ("" the whole clinic),
// the first and last local dates; the closure is saved (303 to its page)
// and its id returned.
func closeDates(t *testing.T, cl *client, who string, first, last time.Time, note string) string {
	t.Helper()
	f := cl.Get("/staff/closures").Want(http.StatusOK).Form(`[data-testid="closure-form"]`)
	f.Values.Set("specialist", who)
	f.Values.Set("first", first.Format(time.DateOnly))
	f.Values.Set("last", last.Format(time.DateOnly))
	f.Values.Set("note", note)
	r := cl.Post(f.Action, f.Values).Want(http.StatusSeeOther)
	loc := r.Header.Get("Location")
	if !strings.HasPrefix(loc, "/staff/closures/") {
		t.Fatalf("saved closure goes to %q", loc)
	}
	return strings.TrimPrefix(loc, "/staff/closures/")
}

// localDate is t's local date in the clinic's zone, as midnight UTC.
func localDate(c clinic, t time.Time) time.Time {
	l := t.In(c.Loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
}

// A clinic-wide closure takes every specialist's times of its date off the
// API, the type page (a watched week answered from memory) and another
// instance; the days around it keep theirs; reopening gives them back.
func TestClosureOfTheClinicRemovesEveryTime(t *testing.T) {
	t.Parallel()
	a, b := newApp(t), newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	typ := c.Type0()
	sp1, sp2 := c.Specialists[0].ID, c.Specialists[1].ID
	tue := c.Next(time.Tuesday, 10, 0)
	wed := tue.AddDate(0, 0, 1)
	page := c.BookURL(typ, tue, uuid.Nil)

	// The week watched in memory, the other instance's lists read, the
	// clinic page kept.
	a.do(t, "GET", page, nil).Want(http.StatusOK)
	if state := cellState(a.do(t, "GET", page, nil).Doc(), grid.CellID(uuid.Nil, tue)); state == "" {
		t.Fatal("before: Tuesday 10:00 is not offered on the type page")
	}
	for _, sp := range []uuid.UUID{sp1, sp2} {
		if n := len(b.timeslots(t, c, typ.ID, sp, tue)); n != 16 {
			t.Fatalf("before: %d times on the other instance", n)
		}
	}
	a.do(t, "GET", "/c/"+c.Slug, nil).Want(http.StatusOK)
	a.do(t, "GET", "/c/"+c.Slug, nil).Want(http.StatusOK)

	admin := a.signIn(t, c.Admin)
	hits := liveHits(t, a, "clinic")
	id := closeDates(t, admin, "", localDate(c, tue), localDate(c, tue), "Staff training")

	for _, sp := range []uuid.UUID{sp1, sp2} {
		if got := a.timeslots(t, c, typ.ID, sp, tue); len(got) != 0 {
			t.Errorf("the API still offers %v on the closed date", got)
		}
		if n := len(a.timeslots(t, c, typ.ID, sp, wed)); n != 16 {
			t.Errorf("the next day has %d times, want 16", n)
		}
	}
	if got := a.free(t, c, typ.ID, tue); len(got) != 0 {
		t.Errorf("any specialist: %v", got)
	}
	if state := cellState(a.do(t, "GET", page, nil).Doc(), grid.CellID(uuid.Nil, tue)); state != "" {
		t.Errorf("the type page still offers Tuesday 10:00 (%q)", state)
	}
	testkit.WaitFor(t, evWait, "the other instance to drop the closed date", func() bool {
		return len(b.timeslots(t, c, typ.ID, sp1, tue))+len(b.timeslots(t, c, typ.ID, sp2, tue)) == 0
	})
	a.do(t, "GET", "/c/"+c.Slug, nil).Want(http.StatusOK)
	if liveHits(t, a, "clinic") != hits {
		t.Error("the kept clinic page outlived the closure")
	}

	// The closure is listed; reopening gives the times back.
	list := admin.Get("/staff/closures").Want(http.StatusOK)
	if txt := list.Text(`[data-closure="` + id + `"]`); !strings.Contains(txt, "The whole clinic") || !strings.Contains(txt, "Staff training") {
		t.Fatalf("closures list: %q", txt)
	}
	del := list.Form(`[data-closure="` + id + `"] form`)
	admin.Post(del.Action, del.Values).WantRedirect("/staff/closures")
	if n := len(a.timeslots(t, c, typ.ID, sp1, tue)); n != 16 {
		t.Errorf("reopened: %d times, want 16", n)
	}
	testkit.WaitFor(t, evWait, "the other instance to offer the reopened date", func() bool {
		return len(b.timeslots(t, c, typ.ID, sp2, tue)) == 16
	})
}

// A closure of one specialist takes only their times; staff may close a
// specialist but not the clinic.
func TestClosureOfOneSpecialist(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	typ := c.Type0()
	sp1, sp2 := c.Specialists[0].ID, c.Specialists[1].ID
	thu := c.Next(time.Thursday, 9, 0)
	fri := thu.AddDate(0, 0, 1)
	staffer := a.signIn(t, c.Staff)
	if opts := staffer.Get("/staff/closures").Doc().Find(`#specialist option[value=""]`).Length(); opts != 0 {
		t.Error("a staff account is offered closing the whole clinic")
	}
	closeDates(t, staffer, sp1.String(), localDate(c, thu), localDate(c, fri), "Course")
	for _, day := range []time.Time{thu, fri} {
		if got := a.timeslots(t, c, typ.ID, sp1, day); len(got) != 0 {
			t.Errorf("the away specialist still has %v", got)
		}
		if n := len(a.timeslots(t, c, typ.ID, sp2, day)); n != 16 {
			t.Errorf("the other specialist has %d times, want 16", n)
		}
	}
	// The whole clinic is the admins' to close.
	r := staffer.Post("/staff/closures", url.Values{"first": {localDate(c, thu).Format(time.DateOnly)}, "last": {localDate(c, thu).Format(time.DateOnly)}})
	if r.Status != http.StatusForbidden {
		t.Errorf("staff closing the clinic: %d", r.Status)
	}
}

// A closure of the date the clocks change closes exactly its 23 or 25
// hours in the clinic's zone: the days around it keep their times, and the
// desk's phone booking is refused from its first local minute to its last
// and allowed either side.
func TestClosureOverADaylightSavingChange(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 370, MaxHoldsPerClient: 1},
	}})
	sp, typ := c.Specialists[0].ID, c.Type0()
	a.openWeekends(t, c, sp)
	// The next date whose local day is not 24 hours long.
	day := time.Now().In(c.Loc)
	day = time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, c.Loc)
	for next := day.AddDate(0, 0, 1); next.Sub(day) == 24*time.Hour; next = day.AddDate(0, 0, 1) {
		day = next
	}
	dayEnd := day.AddDate(0, 0, 1)
	admin := a.signIn(t, c.Admin)
	closeDates(t, admin, "", localDate(c, day), localDate(c, day), "Closed")

	if got := a.timeslots(t, c, typ.ID, sp, day.Add(12*time.Hour)); len(got) != 0 {
		t.Errorf("the change day still offers %v", got)
	}
	for _, d := range []time.Time{day.AddDate(0, 0, -1), dayEnd} {
		if n := len(a.timeslots(t, c, typ.ID, sp, d.Add(12*time.Hour))); n != 16 {
			t.Errorf("%s has %d times, want 16", d.Format(time.DateOnly), n)
		}
	}
	refused := []time.Time{day, dayEnd.Add(-30 * time.Minute)}
	allowed := []time.Time{day.Add(-30 * time.Minute), dayEnd}
	for _, at := range refused {
		r := admin.Post("/staff/bookings", phoneForm(c, sp, at, "Refused Caller", "", "+49 30 1234567"))
		if r.Status != http.StatusConflict || !strings.Contains(r.Text(`[role="alert"]`), "closed") {
			t.Errorf("phone booking at %s (closed): %d %q", at.In(c.Loc), r.Status, r.Text(`[role="alert"]`))
		}
	}
	for i, at := range allowed {
		a.phoneBook(t, admin, c, sp, at, []string{"Eve Before", "Finn After"}[i], "", "+49 30 7654321")
	}
}

// A holiday list for a year: parsed, saved as clinic-wide closures that
// patients see no time on, shown again as typed, and its mistakes named by
// line.
func TestPublicHolidaysForAYear(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp, typ := c.Specialists[0].ID, c.Type0()
	mon, wed := c.Next(time.Monday, 9, 0), c.Next(time.Wednesday, 9, 0)
	year := localDate(c, mon).Year()
	admin := a.signIn(t, c.Admin)
	path := "/staff/holidays?year=" + strconv.Itoa(year)
	f := admin.Get(path).Want(http.StatusOK).Form(`[data-testid="holidays-form"]`)

	f.Values.Set("holidays", localDate(c, mon).Format(time.DateOnly)+" Day one\nnot a date Day two\n")
	r := admin.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
	if msg := r.Text(`[data-testid="holidays-error"]`); !strings.HasPrefix(msg, "Line 2:") {
		t.Errorf("mistake: %q", msg)
	}

	lines := localDate(c, mon).Format(time.DateOnly) + " Day one\n" + localDate(c, wed).Format("2.1.2006") + " Day two\n"
	if localDate(c, wed).Year() != year {
		lines = localDate(c, mon).Format(time.DateOnly) + " Day one\n"
	}
	f.Values.Set("holidays", lines)
	admin.Post(f.Action, f.Values).WantRedirect(path)
	page := admin.Get(path).Want(http.StatusOK)
	if got := page.Form(`[data-testid="holidays-form"]`).Values.Get("holidays"); !strings.Contains(got, localDate(c, mon).Format(time.DateOnly)+" Day one") {
		t.Errorf("the list reads %q", got)
	}
	if got := a.timeslots(t, c, typ.ID, sp, mon); len(got) != 0 {
		t.Errorf("the holiday offers %v", got)
	}
	if localDate(c, wed).Year() == year {
		if got := a.timeslots(t, c, typ.ID, sp, wed); len(got) != 0 {
			t.Errorf("the second holiday offers %v", got)
		}
	}
	if n := len(a.timeslots(t, c, typ.ID, sp, mon.AddDate(0, 0, 1))); n != 16 {
		t.Errorf("the day after has %d times", n)
	}
	// Saving the list without the Monday reopens it.
	f.Values.Set("holidays", "")
	admin.Post(f.Action, f.Values).WantRedirect(path)
	if n := len(a.timeslots(t, c, typ.ID, sp, mon)); n != 16 {
		t.Errorf("after emptying the list: %d times", n)
	}
}

// A closure over bookings lists them before it is saved; once saved, its
// page lists them with a move link each, and cancelling them sends each
// patient with an e-mail address one cancellation, once (a second submit
// sends nothing), and lists the patients to call with their phone.
func TestClosureOverBookings(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	typ := c.Type0()
	sp1, sp2 := c.Specialists[0].ID, c.Specialists[1].ID
	tue := c.Next(time.Tuesday, 10, 0)
	withMail1 := a.bookAs(t, c, typ, sp1, tue, booking.Patient{Name: "Anna Mail", Email: "anna-" + uuid.NewString()[:8] + "@example.org"})
	withMail2 := a.bookAs(t, c, typ, sp2, tue.Add(time.Hour), booking.Patient{Name: "Ben Mail", Email: "ben-" + uuid.NewString()[:8] + "@example.org"})
	phoneOnly := a.bookAs(t, c, typ, sp1, tue.Add(2*time.Hour), booking.Patient{Name: "Carl Phone", Phone: "+49 30 5550101"})
	later := a.bookAs(t, c, typ, sp1, tue.AddDate(0, 0, 1), booking.Patient{Name: "Dora Later", Email: "dora-" + uuid.NewString()[:8] + "@example.org"})

	admin := a.signIn(t, c.Admin)
	f := admin.Get("/staff/closures").Form(`[data-testid="closure-form"]`)
	f.Values.Set("specialist", "")
	f.Values.Set("first", localDate(c, tue).Format(time.DateOnly))
	f.Values.Set("last", localDate(c, tue).Format(time.DateOnly))
	f.Values.Set("note", "Burst pipe")
	preview := admin.Post(f.Action, f.Values).Want(http.StatusOK)
	if n := preview.Doc().Find(`[data-testid="preview-bookings"] [data-testid="affected-booking"]`).Length(); n != 3 {
		t.Fatalf("the preview lists %d bookings, want 3", n)
	}
	if txt := preview.Text(`[data-testid="preview-bookings"]`); !strings.Contains(txt, "Call +49 30 5550101") || strings.Contains(txt, "Dora Later") {
		t.Errorf("preview: %q", txt)
	}
	if n := len(a.timeslots(t, c, typ.ID, sp2, tue)); n == 0 {
		t.Fatal("the preview saved the closure")
	}
	confirm := preview.Form(`[data-testid="closure-form"]`)
	saved := admin.Post(confirm.Action, confirm.Values).Want(http.StatusSeeOther)
	path := saved.Header.Get("Location")
	page := admin.Get(path).Want(http.StatusOK)
	if n := page.Doc().Find(`[data-testid="closure-bookings"] [data-testid="move-link"]`).Length(); n != 3 {
		t.Fatalf("the closure's page has %d move links, want 3", n)
	}

	// Each page that showed the patients is in the record of who looked.
	var looks int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM access_records
		WHERE clinic_id = $1 AND page IN ('closure preview', 'closure') AND $2 = ANY(booking_ids)`, c.ID, phoneOnly.Booking.ID).Scan(&looks); err != nil || looks != 2 {
		t.Errorf("records of the looks: %d (%v), want 2", looks, err)
	}

	cancel := page.Form(`[data-testid="closure-cancel-form"]`)
	if got := len(cancel.Values["booking"]); got != 3 {
		t.Fatalf("%d bookings chosen by default, want 3", got)
	}
	noReason := admin.Post(cancel.Action, cancel.Values).Want(http.StatusUnprocessableEntity)
	if noReason.Text(`[data-testid="error"]`) == "" {
		t.Error("no reason asked for")
	}
	cancel.Values.Set("reason", "Burst pipe")
	done := admin.Post(cancel.Action, cancel.Values).Want(http.StatusOK)
	if n := done.Doc().Find(`[data-testid="done-emailed"] [data-testid="affected-booking"]`).Length(); n != 2 {
		t.Errorf("%d told by e-mail, want 2", n)
	}
	if txt := done.Text(`[data-testid="done-call"]`); !strings.Contains(txt, "Carl Phone") || !strings.Contains(txt, "Call +49 30 5550101") {
		t.Errorf("to call: %q", txt)
	}
	if done.Doc().Find(`[data-testid="closure-bookings"]`).Length() != 0 {
		t.Error("cancelled bookings still listed")
	}
	// A second submit of the same form cancels and sends nothing more.
	admin.Post(cancel.Action, cancel.Values).Want(http.StatusOK)
	for _, b := range []booking.Confirmation{withMail1, withMail2} {
		if n := cancellations(t, a, b.Booking.ID); n != 1 {
			t.Errorf("%s: %d cancellation e-mails, want 1", b.Booking.Patient.Name, n)
		}
		if st := a.booking(t, b.Booking.ID).Status; st != "cancelled" {
			t.Errorf("%s: %s", b.Booking.Patient.Name, st)
		}
	}
	if n := cancellations(t, a, phoneOnly.Booking.ID); n != 0 {
		t.Errorf("the patient without an address has %d messages", n)
	}
	if st := a.booking(t, later.Booking.ID).Status; st != "confirmed" {
		t.Errorf("the next day's booking is %s", st)
	}
}

// cancellations counts the cancellation e-mails of one booking.
func cancellations(t *testing.T, a *app, bookingID uuid.UUID) int {
	t.Helper()
	var n int
	if err := a.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM messages WHERE booking_id = $1 AND kind = 'cancellation'`, bookingID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A time on a closed date cannot be booked by a crafted call: a new hold
// is refused as no slot (400, as any time off the grid), and a hold taken
// before the closure is refused at the booking with 409 SLOT_UNAVAILABLE.
func TestClosedDateRefusesABooking(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp, typ := c.Specialists[0].ID, c.Type0()
	wed := c.Next(time.Wednesday, 11, 0)
	client := clientID()
	h := a.holdOf(t, typ.ID, sp, wed, client)

	admin := a.signIn(t, c.Admin)
	closeDates(t, admin, sp.String(), localDate(c, wed), localDate(c, wed), "Away")

	r := a.do(t, "POST", bookPath(typ.ID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patientFor(client)})
	wantError(t, r, http.StatusConflict, "SLOT_UNAVAILABLE", "")
	r = a.postHold(t, typ.ID, sp, wed.Add(time.Hour), clientID())
	wantError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", "slotStartDate")
	if n := a.confirmedAt(t, sp, wed); n != 0 {
		t.Errorf("%d bookings on the closed date", n)
	}
	// Nor by the desk's phone form.
	r = admin.Post("/staff/bookings", phoneForm(c, sp, wed.Add(2*time.Hour), "Desk Caller", "desk@example.org", ""))
	if r.Status != http.StatusConflict {
		t.Errorf("phone booking on a closed date: %d", r.Status)
	}
}
