package web_test

// The booking dialog and its attendance marks: a mark from one clerk
// reaches another clerk's open calendar, each mark writes its audit row,
// marks keep to the booking's day (a no-show to after its start), another
// clinic's booking is not found, and the dialog's controls have names.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// dialogOf opens the booking dialog of id as cl.
func dialogOf(t *testing.T, cl *client, id string) *goquery.Selection {
	t.Helper()
	r := cl.do("GET", "/staff/bookings/"+id+"/dialog", nil, http.Header{"Hx-Request": {"true"}}).Want(http.StatusOK)
	d := r.Doc().Find(`dialog[data-testid="booking-dialog"]`)
	if d.Length() != 1 {
		t.Fatalf("no booking dialog: %s", clip(r.Body, 500))
	}
	return d
}

// pressMark posts what the dialog's button for mark posts, as htmx does,
// and returns the answer.
func pressMark(t *testing.T, cl *client, dialog *goquery.Selection, mark string) *response {
	t.Helper()
	btn := dialog.Find(`button[data-mark="` + mark + `"]`)
	if btn.Length() != 1 {
		t.Fatalf("the dialog has no button for %q", mark)
	}
	path, _ := btn.Attr("hx-post")
	var vals map[string]string
	raw, _ := btn.Attr("hx-vals")
	if err := json.Unmarshal([]byte(raw), &vals); err != nil {
		t.Fatalf("the %q button's hx-vals %q: %v", mark, raw, err)
	}
	form := url.Values{}
	for k, v := range vals {
		form.Set(k, v)
	}
	return cl.HXPost(path, form)
}

// reschedVersion is the version the live day block's move form of the
// booking carries, "" when it has none.
func reschedVersion(t *testing.T, fragment, id string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(fragment))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := doc.Find(`form[action="/staff/bookings/` + id + `/reschedule"] input[name="version"]`).Attr("value")
	return v
}

// Reception marks a booking that has begun as arrived, then as a no-show:
// each mark is an audit row of that account, the dialog shows it, and an
// admin's open calendar gets the changed day block each time.
func TestAttendanceMarksReachAnotherScreen(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	start := c.At(0, 0, 0) // today's midnight: begun, and today
	date := start.Format(time.DateOnly)
	bk := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, start, booking.Patient{Name: "Ada Patient", Email: "ada@example.org", Phone: "030 1234567"}).Booking
	id := bk.ID.String()
	recep := a.newAccount(t, c.ID, staff.RoleReception)
	clerk := a.signIn(t, recep)
	admin := a.signIn(t, c.Admin)

	s := dialSSE(t, admin.hc, a.URL+"/staff/live?view=day&date="+date)
	first, _ := s.until(evWait, "the day block", func(e sseEvent) bool { return e.Name == "cal-"+date })
	if v := reschedVersion(t, first.Data(), id); v != strconv.Itoa(int(bk.Version)) {
		t.Fatalf("the day block shows version %q of the booking, want %d", v, bk.Version)
	}

	for i, mark := range []string{desk.Arrived, desk.NoShow} {
		before := a.auditCount(t, c.ID)
		res := pressMark(t, clerk, dialogOf(t, clerk, id), mark).Want(http.StatusOK)
		d := res.Doc().Find(`dialog[data-testid="booking-dialog"]`)
		if got, _ := d.Attr("data-attendance"); got != mark {
			t.Fatalf("after %s the dialog says %q: %s", mark, got, clip(res.Body, 600))
		}
		if d.Find(`[data-testid="booking-dialog-notice"]`).Length() != 1 || !strings.Contains(text(d.Find(`[data-testid="attendance"]`)), map[string]string{desk.Arrived: "Arrived", desk.NoShow: "No-show"}[mark]) {
			t.Errorf("after %s: %s", mark, clip(res.Body, 600))
		}
		row := a.lastAudit(t, c.ID)
		if n := a.auditCount(t, c.ID); n != before+1 || row.Action != "booking.attendance" || row.EntityID != id || row.Actor != recep.Actor() {
			t.Errorf("after %s: %d new audit rows, newest %s %s by %s", mark, n-before, row.Action, row.EntityID, row.Actor)
		}
		if !strings.Contains(string(row.After), `"`+mark+`"`) || row.Before == nil {
			t.Errorf("after %s: audit before %s after %s", mark, row.Before, row.After)
		}
		want := strconv.Itoa(int(bk.Version) + i + 1)
		s.until(evWait, "the day block after "+mark, func(e sseEvent) bool {
			return e.Name == "cal-"+date && reschedVersion(t, e.Data(), id) == want
		})
	}
	if b := a.booking(t, bk.ID); b.Status != booking.StatusConfirmed {
		t.Errorf("a marked booking is %s, want it confirmed (its time stays taken)", b.Status)
	}
	page := admin.Get("/staff/bookings/" + id).Want(http.StatusOK)
	if got, _ := page.Doc().Find(`[data-testid="attendance"]`).Attr("data-attendance"); got != desk.NoShow {
		t.Errorf("the booking page shows attendance %q", got)
	}
}

// Undo works on the booking's day; the day after, neither a mark nor its
// undo is taken (409 ATTENDANCE_CLOSED, saying why), and the dialog
// offers them disabled with the reason.
func TestAttendanceUndoWithinTheDayOnly(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	todays := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.At(0, 0, 0), booking.Patient{Name: "Today Patient", Email: "t@example.org"}).Booking
	pressMark(t, admin, dialogOf(t, admin, todays.ID.String()), desk.Completed).Want(http.StatusOK)
	undone := pressMark(t, admin, dialogOf(t, admin, todays.ID.String()), desk.NotMarked).Want(http.StatusOK)
	if got, _ := undone.Doc().Find("dialog").Attr("data-attendance"); got != "" {
		t.Fatalf("after undo the dialog says %q", got)
	}
	if row := a.lastAudit(t, c.ID); row.Action != "booking.attendance" || !strings.Contains(string(row.Before), `"completed"`) {
		t.Errorf("the undo's audit row: %s %s -> %s", row.Action, row.Before, row.After)
	}

	past := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.At(-1, 10, 0), booking.Patient{Name: "Past Patient", Email: "p@example.org"}).Booking
	if _, err := a.Pool.Exec(t.Context(), `UPDATE bookings SET attendance = 'arrived', attendance_at = slot_start WHERE id = $1`, past.ID); err != nil {
		t.Fatal(err)
	}
	d := dialogOf(t, admin, past.ID.String())
	if d.Find(`button[data-mark]:not([disabled])`).Length() != 0 || !strings.Contains(text(d.Find(`[data-testid="mark-note"]`)), "is over") {
		t.Errorf("yesterday's dialog offers marks: %s", clip(text(d), 600))
	}
	before := a.auditCount(t, c.ID)
	for _, mark := range []string{desk.NotMarked, desk.NoShow} {
		res := admin.HXPost("/staff/bookings/"+past.ID.String()+"/attendance", url.Values{"mark": {mark}, "_csrf": {admin.CSRF}}).Want(http.StatusConflict)
		e := res.Doc().Find(`[data-testid="booking-dialog-error"]`)
		if code, _ := e.Attr("data-code"); code != desk.CodeAttendanceClosed || !strings.Contains(text(e), "can no longer be changed") {
			t.Errorf("mark %q the day after: code %q, %q", mark, code, text(e))
		}
	}
	if a.auditCount(t, c.ID) != before || a.bookingAttendance(t, past.ID.String()) != desk.Arrived {
		t.Error("a refused mark changed something")
	}
}

// bookingAttendance is the booking's mark as stored.
func (a *app) bookingAttendance(t *testing.T, id string) string {
	t.Helper()
	var m string
	if err := a.Pool.QueryRow(t.Context(), `SELECT attendance FROM bookings WHERE id = $1`, id).Scan(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A no-show before the appointment has begun is refused (and offered
// disabled), while arrived is taken.
func TestAttendanceNoShowBeforeStartRefused(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	start := c.At(0, 23, 30)
	if !time.Now().Before(start.Add(-5 * time.Minute)) {
		t.Skip("too late in the clinic's day for a booking of today that has not begun")
	}
	admin := a.signIn(t, c.Staff)
	bk := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, start, booking.Patient{Name: "Later Patient", Email: "l@example.org"}).Booking
	d := dialogOf(t, admin, bk.ID.String())
	if _, disabled := d.Find(`button[data-mark="no_show"]`).Attr("disabled"); !disabled {
		t.Error("the dialog offers a no-show before the start")
	}
	res := admin.HXPost("/staff/bookings/"+bk.ID.String()+"/attendance", url.Values{"mark": {desk.NoShow}, "_csrf": {admin.CSRF}}).Want(http.StatusConflict)
	if code, _ := res.Doc().Find(`[data-testid="booking-dialog-error"]`).Attr("data-code"); code != desk.CodeNoShowTooEarly {
		t.Errorf("a no-show before the start: code %q\n%s", code, clip(res.Body, 500))
	}
	pressMark(t, admin, d, desk.Arrived).Want(http.StatusOK)
	if m := a.bookingAttendance(t, bk.ID.String()); m != desk.Arrived {
		t.Errorf("attendance %q after arrived", m)
	}
}

// Another clinic's booking is not found by the dialog nor by a mark.
func TestAttendanceOtherClinicNotFound(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	mine := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	theirs := a.bookAs(t, other, other.Type0(), other.Specialists[0].ID, other.At(0, 0, 0), booking.Patient{Name: "Their Patient", Email: "x@example.org"}).Booking
	admin := a.signIn(t, mine.Admin)
	r := admin.Get("/staff/bookings/" + theirs.ID.String() + "/dialog").Want(http.StatusNotFound)
	if strings.Contains(r.Body, "Their Patient") {
		t.Error("the 404 shows their patient")
	}
	admin.HXPost("/staff/bookings/"+theirs.ID.String()+"/attendance", url.Values{"mark": {desk.Arrived}, "_csrf": {admin.CSRF}}).Want(http.StatusNotFound)
	admin.Get("/staff/bookings/not-an-id/dialog").Want(http.StatusNotFound)
	if m := a.bookingAttendance(t, theirs.ID.String()); m != "" {
		t.Errorf("their booking was marked %q", m)
	}
}

// The dialog shows the booking and names every control: the marks, Move,
// the cancel form with its labelled reason and CSRF token, the booking
// page and Close (which Escape presses).
func TestAttendanceDialogControls(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	bk := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 9, 30), booking.Patient{Name: "Ada Patient", Email: "ada@example.org", Phone: "030 555"}).Booking
	id := bk.ID.String()
	d := dialogOf(t, admin, id)
	if l, _ := d.Attr("aria-labelledby"); l == "" || d.Find("#"+l).Length() != 1 || !strings.Contains(text(d.Find("#"+l)), "09:30–10:00 Ada Patient") {
		t.Errorf("the dialog's name: %q -> %q", l, text(d.Find("h2")))
	}
	body := text(d)
	for _, want := range []string{"Ada Patient", "ada@example.org", "030 555", c.Type0().Name, "Booked", "Not marked"} {
		if !strings.Contains(body, want) {
			t.Errorf("the dialog lacks %q: %s", want, body)
		}
	}
	for mark, name := range map[string]string{desk.Arrived: "Mark Ada Patient as arrived", desk.NoShow: "Mark Ada Patient as no-show", desk.Completed: "Mark Ada Patient as completed"} {
		if l, _ := d.Find(`button[data-mark="` + mark + `"]`).Attr("aria-label"); l != name {
			t.Errorf("the %s button is named %q, want %q", mark, l, name)
		}
	}
	if d.Find(`button[data-mark=""]`).Length() != 0 {
		t.Error("an unmarked booking offers Undo")
	}
	d.Find("button, a").Each(func(_ int, b *goquery.Selection) {
		if l, _ := b.Attr("aria-label"); l == "" && text(b) == "" {
			t.Errorf("a control without a name: %s", goquery.NodeName(b))
		}
	})
	if g, _ := d.Find(`[data-testid="move"]`).Attr("hx-get"); g != "/staff/bookings/"+id+"/move" {
		t.Errorf("Move gets %q", g)
	}
	f := d.Find(`form[data-testid="cancel-form"]`)
	action, _ := f.Attr("action")
	reason := f.Find(`input[name="reason"]`)
	rid, _ := reason.Attr("id")
	if !strings.HasPrefix(action, "/staff/bookings/"+id+"/cancel") || f.Find(`label[for="`+rid+`"]`).Length() != 1 || f.Find(`input[name="_csrf"]`).AttrOr("value", "") != admin.CSRF {
		t.Errorf("the cancel form: action %q, reason %q", action, rid)
	}
	if href, _ := d.Find(`[data-testid="booking-page"]`).Attr("href"); href != "/staff/bookings/"+id {
		t.Errorf("the booking page link is %q", href)
	}
	if d.Find(`button[data-desk-close][data-mark-close]`).Length() != 1 {
		t.Error("no Close button for Escape to press")
	}
	// The cancel form works as it is.
	admin.Post(action, url.Values{"reason": {"patient called"}}).Want(http.StatusOK)
	if b := a.booking(t, bk.ID); b.Status != booking.StatusCancelled {
		t.Errorf("after the dialog's cancel the booking is %s", b.Status)
	}
	if dialogOf(t, admin, id).Find(`button[data-mark], form[data-testid="cancel-form"], [data-testid="move"]`).Length() != 0 {
		t.Error("a cancelled booking's dialog offers marks, move or cancel")
	}
}
