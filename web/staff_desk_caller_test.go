package web_test

// A caller at the front desk: booked with a name and a phone number and
// no e-mail address (the booking then sends none), found again by name or
// phone as the receptionist types, and the calendar's form that answers
// beside itself and keeps what was typed.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
)

// messagesOf counts the e-mails written about a booking.
func (a *app) messagesOf(t testing.TB, bookingID string) int {
	t.Helper()
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE booking_id = $1`, bookingID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeskBooksACallerWithoutEmail(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))
	start := c.Next(time.Wednesday, 11, 0)

	t.Run("NeitherPhoneNorEmailNamesThePhone", func(t *testing.T) {
		f := withCSRF(rec, deskForm(t, rec, sp.ID, start, "Caller Patient", ""))
		r := rec.HXPost("/staff/desk/book", f).Want(http.StatusUnprocessableEntity)
		if v, _ := r.Doc().Find("#desk-phone").Attr("aria-invalid"); v != "true" {
			t.Errorf("the phone field is not marked invalid:\n%s", r.Text(`[data-testid="desk-error"]`))
		}
		g := withCSRF(rec, r.Form(`[data-testid="desk-form"]`).Values)
		g.Set("phone", "030 1234567")
		res := rec.HXPost("/staff/desk/book", g).Want(http.StatusCreated)
		if msg := res.Text(`[data-testid="desk-booked"]`); !strings.Contains(msg, "Booked Caller Patient") {
			t.Errorf("after booking the container reads %q", msg)
		}
	})
	rows := a.bookingsOf(t, c, start.Add(-time.Hour), start.Add(time.Hour))
	if len(rows) != 1 || rows[0].PatientEmail != "" || rows[0].PatientPhone != "030 1234567" {
		t.Fatalf("bookings %+v, want one with a phone and no e-mail", rows)
	}
	if n := a.messagesOf(t, rows[0].ID.String()); n != 0 {
		t.Errorf("%d e-mails written for a booking without an address", n)
	}
	// A second caller without an e-mail books the same type: an empty
	// address is nobody's, so no cooldown or lock joins the two.
	other := c.Next(time.Wednesday, 14, 0)
	f := withCSRF(rec, deskForm(t, rec, sp.ID, other, "Second Caller", ""))
	f.Set("phone", "030 7654321")
	rec.HXPost("/staff/desk/book", f).Want(http.StatusCreated)
	// A patient online still gives an address.
	if _, err := booking.ValidatePatientAs(booking.ActorPatient, booking.Patient{Name: "Online Patient", Phone: "030 1234567"}); err == nil {
		t.Error("a patient's own booking without an e-mail address was accepted")
	}
}

func TestDeskLooksUpPatientsByNameOrPhone(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	ada := a.bookAs(t, c, c.Types[0], sp.ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Ada Lovelace", Email: "ada@example.org", Phone: "+49 30 1234567"})
	a.bookAs(t, c, c.Types[0], sp.ID, c.Next(time.Tuesday, 10, 0), booking.Patient{Name: "Ben Byron", Phone: "+49 40 555000"})
	acc := a.newAccount(t, c.ID, staff.RoleReception)
	rec := a.signIn(t, acc)
	look := func(q url.Values) []string {
		t.Helper()
		r := rec.do(http.MethodGet, "/staff/desk/patients?"+q.Encode(), nil, http.Header{"Hx-Request": {"true"}}).Want(http.StatusOK)
		var names []string
		for _, n := range r.Doc().Find(`[data-testid="desk-match"]`).EachIter() {
			name, _ := n.Attr("data-fill-name")
			names = append(names, name)
		}
		return names
	}
	for _, tc := range []struct {
		q    url.Values
		want string
	}{
		{url.Values{"name": {"love"}}, "Ada Lovelace"},
		{url.Values{"name": {"BYR"}}, "Ben Byron"},
		{url.Values{"phone": {"30 123"}}, "Ada Lovelace"},
		{url.Values{"name": {"B"}, "phone": {"555"}}, "Ben Byron"},
		{url.Values{"name": {"a"}}, ""},
		{url.Values{"name": {"%"}}, ""},
		{url.Values{"phone": {"12"}}, ""},
	} {
		if got := strings.Join(look(tc.q), ","); got != tc.want {
			t.Errorf("look-up %v offers %q, want %q", tc.q, got, tc.want)
		}
	}
	var shown bool
	for _, r := range a.accessRecords(t, acc.ID) {
		if r.Page == privacy.PagePatientLookup && len(r.Bookings) == 1 && r.Bookings[0] == ada.Booking.ID {
			shown = true
		}
	}
	if !shown {
		t.Errorf("the look-up that showed Ada is not in the record of reads: %+v", a.accessRecords(t, acc.ID))
	}
	a.newClient(t).Get("/staff/desk/patients?name=Ada").WantRedirect("/staff/login")
}

func TestPhoneFormAnswersBesideItselfAndKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[1]
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))
	page := rec.Get("/staff").Want(http.StatusOK)
	if got, _ := page.Doc().Find("#pb-date").Attr("value"); got != availability.DateOf(time.Now(), c.Loc).String() {
		t.Errorf("the form's date is %q, want today", got)
	}
	if got, _ := page.Doc().Find(`#pb-type option`).First().Attr("data-specialists"); !strings.Contains(got, sp.ID.String()) {
		t.Errorf("the type's option names its specialists %q", got)
	}
	start := c.Next(time.Thursday, 10, 0).In(c.Loc)
	f := url.Values{"type": {c.Types[0].ID.String()}, "specialist": {sp.ID.String()}, "date": {start.Format(time.DateOnly)},
		"time": {"10:00"}, "name": {"Typed Caller"}, "phone": {"030 999"}, "email": {"not-an-address"}}
	r := rec.HXPost("/staff/bookings", withCSRF(rec, f)).Want(http.StatusUnprocessableEntity)
	doc := r.Doc()
	if doc.Find(`#phone-booking [data-testid="calendar-error"]`).Length() != 1 {
		t.Errorf("the refusal is not beside the form:\n%s", r.Body)
	}
	for id, want := range map[string]string{"pb-name": "Typed Caller", "pb-phone": "030 999", "pb-email": "not-an-address", "pb-time": "10:00", "pb-date": start.Format(time.DateOnly)} {
		if got, _ := doc.Find("#" + id).Attr("value"); got != want {
			t.Errorf("#%s keeps %q, want %q", id, got, want)
		}
	}
	if got, _ := doc.Find(`#pb-specialist option[selected]`).Attr("value"); got != sp.ID.String() {
		t.Errorf("the chosen specialist is %q after the refusal", got)
	}
	f.Del("email")
	r = rec.HXPost("/staff/bookings", withCSRF(rec, f)).Want(http.StatusCreated)
	if msg := r.Text(`#phone-booking [data-testid="phone-booked"]`); !strings.Contains(msg, "Booked Typed Caller") {
		t.Errorf("after booking the form says %q", msg)
	}
	if got, _ := r.Doc().Find("#pb-name").Attr("value"); got != "" {
		t.Errorf("the booked caller's name stays in the form: %q", got)
	}
}

// A move or cancel made from the day grid's dialog comes back to the
// grid, on the day moved to, not to the list.
func TestMoveFromTheGridStaysOnTheGrid(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	from := c.Next(time.Wednesday, 10, 0)
	bk := a.bookAs(t, c, c.Types[0], sp.ID, from, booking.Patient{Name: "Moving Caller", Phone: "030 1234567"}).Booking
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))
	rec.Get("/staff/day")
	to := from.AddDate(0, 0, 1).In(c.Loc)
	day := to.Format(time.DateOnly)
	f := url.Values{"version": {"1"}, "reason": {"Asked to"}, "start": {to.Format("2006-01-02T15:04")}, "specialist": {sp.ID.String()}}
	res := rec.PostRaw("/staff/bookings/"+bk.ID.String()+"/reschedule?view=day&date="+day, withCSRF(rec, f), http.Header{
		"Hx-Request": {"true"}, "Hx-Current-Url": {a.URL + "/staff/day?date=" + from.In(c.Loc).Format(time.DateOnly) + "&specialists=" + sp.ID.String()},
	}).Want(http.StatusOK)
	want := "/staff/day?date=" + day + "&specialists=" + sp.ID.String()
	if loc := res.Header.Get("HX-Redirect"); loc != want {
		t.Fatalf("after the move htmx is sent to %q, want %q", loc, want)
	}
	if msg := rec.Get(want).Want(http.StatusOK).Text(`[data-testid="grid-notice"]`); !strings.Contains(msg, "Moved to") {
		t.Errorf("the grid says %q after the move", msg)
	}
}
