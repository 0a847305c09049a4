package web_test

// Tests of the record of who looked: every staff route (the list of
// staff_routes_test.go) that shows a patient's name or contacts writes a
// record naming that patient's bookings or waitlist places, a live grid
// records a booking that appears on it once and nothing for the events
// that show no new booking, and only admins read the record.

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/views"
)

// accessRecord is one row of the record.
type accessRecord struct {
	Page               string
	Bookings, Waitlist []uuid.UUID
}

// accessRecords are the rows an account wrote, oldest first.
func (a *app) accessRecords(t testing.TB, staffID uuid.UUID) []accessRecord {
	t.Helper()
	rows, err := a.Pool.Query(context.Background(),
		`SELECT page, booking_ids, waitlist_ids FROM access_records WHERE staff_id = $1 ORDER BY id`, staffID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []accessRecord
	for rows.Next() {
		var r accessRecord
		if err := rows.Scan(&r.Page, &r.Bookings, &r.Waitlist); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// streamText opens a stream as cl and reads it until it has shown want
// or within has passed, and returns what it read.
func streamText(t *testing.T, a *app, cl *client, path, want string, within time.Duration) string {
	t.Helper()
	res, cancel := getStream(t, cl.hc, a.URL+path)
	defer cancel()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		chunk := make([]byte, 4096)
		for {
			n, err := res.Body.Read(chunk)
			buf.Write(chunk[:n])
			if err != nil || bytes.Contains(buf.Bytes(), []byte(want)) {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(within):
		cancel()
		<-done
	}
	return buf.String()
}

// Every GET route of the staff list, each by a fresh admin account: a
// page that shows the patient's name, e-mail address or phone number (or
// the waiting patient's) has written a record naming the booking (or the
// waitlist place) by the time it answered. The routes known to show
// patients must show them here, or the walk proves nothing of them.
func TestAccessEveryRouteShowingPatientsRecordsIt(t *testing.T) {
	t.Parallel()
	a := keepingApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0].ID
	// A week the calendar a sign-in opens does not show.
	start := c.Next(time.Wednesday, 10, 0).AddDate(0, 0, 7)
	email := uniqueEmail("looked")
	patient := booking.Patient{Name: "Looked-At Patient", Email: email, Phone: "+49 30 5550199"}
	bk := a.bookAs(t, c, c.Type0(), sp, start, patient).Booking
	entry := a.wlJoin(t, c, c.Type0(), start, start.AddDate(0, 0, 7), "Waiting Patient")
	keptMessage(t, a.signIn(t, c.Admin), email)
	var msg string
	if err := a.Pool.QueryRow(context.Background(), `SELECT m.id::text FROM messages m JOIN outbox_copies o ON o.message_id = m.id
		WHERE m.booking_id = $1 LIMIT 1`, bk.ID).Scan(&msg); err != nil {
		t.Fatalf("the booking's kept message: %v", err)
	}

	day := c.Week(start)
	routes := staffRoutes(sp, c.Type0().ID, 0, bk.ID)
	checkRouteList(t, routes)
	paths := map[string]string{
		"":                         "/staff?view=week&date=" + day,
		"/live":                    "/staff/live?view=week&date=" + day,
		"/day":                     "/staff/day?date=" + day,
		"/day/live":                "/staff/day/live?date=" + day,
		"/week":                    "/staff/week?date=" + day,
		"/week/live":               "/staff/week/live?date=" + day,
		"/day/sheet":               "/staff/day/sheet?date=" + day,
		"/bookings/search":         "/staff/bookings/search?q=" + url.QueryEscape(email),
		"/desk/patients":           "/staff/desk/patients?name=Looked-At",
		"/waitlist/:id/offer":      "/staff/waitlist/" + entry.ID.String() + "/offer",
		"/outbox/:id":              "/staff/outbox/" + msg,
		"/outbox/:id/message.html": "/staff/outbox/" + msg + "/message.html",
		"/outbox/:id/message.eml":  "/staff/outbox/" + msg + "/message.eml",
		"/outbox/:id/calendar.ics": "/staff/outbox/" + msg + "/calendar.ics",
		"/users/:id/access":        "/staff/users/" + c.Staff.ID.String() + "/access",
		"/access":                  "/staff/access?email=" + url.QueryEscape(email),
		"/patients":                "/staff/patients?email=" + url.QueryEscape(email),
		"/patients/export":         "/staff/patients/export?email=" + url.QueryEscape(email),
	}
	showing := map[string]bool{}
	for _, r := range routes {
		if r.Method != http.MethodGet {
			continue
		}
		path := r.Path
		if p, ok := paths[r.Pattern]; ok {
			path = p
		}
		acct := a.newAccount(t, c.ID, staff.RoleAdmin)
		cl := a.signIn(t, acct)
		before := len(a.accessRecords(t, acct.ID))
		var body string
		if strings.HasSuffix(r.Pattern, "/live") {
			body = streamText(t, a, cl, path, patient.Name, 5*time.Second)
		} else {
			body = cl.Get(path).Body
		}
		recs := a.accessRecords(t, acct.ID)[before:]
		showsBooking := strings.Contains(body, patient.Name) || strings.Contains(body, email) || strings.Contains(body, "5550199")
		showsPlace := strings.Contains(body, "Waiting Patient")
		if r.Pattern == "/access" {
			// The admin's own search answers with what the admin typed, and
			// no other patient detail: no view, no record.
			if len(recs) != 0 {
				t.Errorf("GET %s wrote %d access records", path, len(recs))
			}
			continue
		}
		showing[r.Pattern] = showsBooking || showsPlace
		var booked, placed bool
		for _, rec := range recs {
			booked = booked || slices.Contains(rec.Bookings, bk.ID)
			placed = placed || slices.Contains(rec.Waitlist, entry.ID)
		}
		if showsBooking && !booked {
			t.Errorf("GET %s shows the patient and wrote no access record naming the booking (records: %+v)", path, recs)
		}
		if showsPlace && !placed {
			t.Errorf("GET %s shows the waiting patient and wrote no access record naming the place (records: %+v)", path, recs)
		}
	}
	for _, p := range []string{"", "/live", "/day", "/day/live", "/week", "/week/live", "/bookings/search", "/bookings/:id",
		"/bookings/:id/dialog", "/bookings/:id/move", "/desk/patients", "/day/sheet", "/waitlist", "/waitlist/:id/offer", "/outbox", "/outbox/:id",
		"/outbox/:id/message.html", "/outbox/:id/message.eml", "/audit", "/patients", "/patients/export"} {
		if !showing[p] {
			t.Errorf("GET /staff%s showed no patient in this test: the walk proves nothing of it", p)
		}
	}
}

// A form's answer that shows the booking's dialog again records it too.
func TestAccessAttendanceDialogRecordsTheBooking(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	bk := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Thursday, 11, 0).AddDate(0, 0, 7),
		booking.Patient{Name: "Dialog Patient", Email: uniqueEmail("dialog")}).Booking
	acct := a.newAccount(t, c.ID, staff.RoleReception)
	cl := a.signIn(t, acct)
	// Not begun: the mark is refused and the dialog shown again.
	r := cl.Post("/staff/bookings/"+bk.ID.String()+"/attendance", url.Values{"mark": {"arrived"}, "version": {"1"}})
	if !strings.Contains(r.Body, "Dialog Patient") {
		t.Fatalf("%d: the dialog is not shown: %s", r.Status, clip(r.Body, 300))
	}
	recs := a.accessRecords(t, acct.ID)
	if len(recs) != 1 || recs[0].Page != "booking dialog" || !slices.Equal(recs[0].Bookings, []uuid.UUID{bk.ID}) {
		t.Errorf("records %+v, want the booking dialog's", recs)
	}
	// The same dialog again at once is the same view: counted, not written.
	cl.Get("/staff/bookings/" + bk.ID.String() + "/dialog").Want(http.StatusOK)
	if n := len(a.accessRecords(t, acct.ID)); n != 1 {
		t.Errorf("the dialog opened again at once wrote %d records", n-1)
	}
	if w, r := a.metricSum(t, `clinic_access_records_total\{result="written"\}`), a.metricSum(t, `clinic_access_records_total\{result="repeat"\}`); w < 1 || r < 1 {
		t.Errorf("clinic_access_records_total: written %v, repeat %v; want both counted", w, r)
	}
}

// An open day grid records the bookings of its first state, then a
// booking that appears on it, once; a hold changing the grid shows no
// new booking and writes nothing.
func TestAccessLiveGridRecordsNewBookingsOnce(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0].ID
	start := c.Next(time.Tuesday, 9, 0).AddDate(0, 0, 7)
	first := a.bookAs(t, c, c.Type0(), sp, start, booking.Patient{Name: "First Patient", Email: uniqueEmail("first")}).Booking
	acct := a.newAccount(t, c.ID, staff.RoleStaff)
	cl := a.signIn(t, acct)

	res, cancel := getStream(t, cl.hc, a.URL+"/staff/day/live?date="+c.Week(start))
	defer cancel()
	conn := &sseConn{events: make(chan sseEvent, 256)}
	go conn.read(res)
	waitEvent := func(what string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev, ok := <-conn.events:
				if !ok {
					t.Fatalf("the stream ended before %s", what)
				}
				if strings.Contains(strings.Join(ev.Lines, "\n"), what) {
					return
				}
			case <-deadline:
				t.Fatalf("the stream never showed %s", what)
			}
		}
	}
	waitEvent("First Patient")
	if recs := a.accessRecords(t, acct.ID); len(recs) != 1 || recs[0].Page != "day grid" || !slices.Equal(recs[0].Bookings, []uuid.UUID{first.ID}) {
		t.Fatalf("records after the first state %+v, want the day grid's naming the first booking", recs)
	}

	later := a.bookAs(t, c, c.Type0(), sp, start.Add(2*time.Hour), booking.Patient{Name: "Later Patient", Email: uniqueEmail("later")}).Booking
	waitEvent("Later Patient")
	recs := a.accessRecords(t, acct.ID)
	if len(recs) != 2 || !slices.Equal(recs[1].Bookings, []uuid.UUID{later.ID}) {
		t.Fatalf("records after a booking appeared %+v, want a second naming only it", recs)
	}

	a.holdOf(t, c.Type0().ID, sp, start.Add(4*time.Hour), "access-hold-client")
	waitEvent("grid-held")
	if n := len(a.accessRecords(t, acct.ID)); n != 2 {
		t.Errorf("a hold on the grid wrote %d more records", n-2)
	}
}

// The admins' pages of the record: per account from the users page, per
// patient by e-mail address; reception and staff get 403.
func TestAccessAdminPages(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	email := uniqueEmail("read")
	bk := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Friday, 10, 0).AddDate(0, 0, 7),
		booking.Patient{Name: "Read Patient", Email: email}).Booking
	clerk := a.newAccount(t, c.ID, staff.RoleReception)
	a.signIn(t, clerk).Get("/staff/bookings/" + bk.ID.String() + "/dialog").Want(http.StatusOK)

	admin := a.signIn(t, c.Admin)
	users := admin.Get("/staff/users").Want(http.StatusOK)
	link, ok := users.Doc().Find(`a[href="/staff/users/` + clerk.ID.String() + `/access"]`).Attr("href")
	if !ok {
		t.Fatal("the users page has no link to the clerk's record")
	}
	if users.Doc().Find(`[data-testid="access-link"]`).Length() != 1 {
		t.Error("the users page has no link to the record per patient")
	}
	page := admin.Get(link).Want(http.StatusOK)
	if got := page.Text(`[data-testid="look-page"]`); got != "booking dialog" {
		t.Errorf("the clerk's record shows %q, want the booking dialog", got)
	}
	if got := page.Text(`[data-testid="look-bookings"]`); got != "1" {
		t.Errorf("the clerk's record counts %q bookings", got)
	}

	auditBefore := a.auditCount(t, c.ID)
	page = admin.Get("/staff/access?email=" + url.QueryEscape(strings.ToUpper(email))).Want(http.StatusOK)
	look := page.Text(`[data-testid="look"]`)
	if !strings.Contains(look, clerk.Email) || !strings.Contains(look, "booking dialog") {
		t.Errorf("the patient's record shows %q, want the clerk's view of the dialog", look)
	}
	if strings.Contains(page.Body, "Read Patient") {
		t.Error("the record per patient shows the patient's name")
	}
	if n := a.auditCount(t, c.ID) - auditBefore; n != 1 {
		t.Errorf("reading the record wrote %d audit rows, want 1", n)
	}
	if row := a.lastAudit(t, c.ID); row.Action != "access.read_patient" || strings.Contains(string(row.After)+row.EntityID, email) {
		t.Errorf("the audit row %+v", row)
	}
	if href, _ := admin.Get("/staff/patients?email=" + url.QueryEscape(email)).Doc().Find(`[data-testid="patients-access"]`).Attr("href"); href != views.AccessPatientURL(email, "") {
		t.Errorf("the Patients page links the record at %q", href)
	}
	// The export's file is a view of the patient's bookings too.
	exporter := a.newAccount(t, c.ID, staff.RoleAdmin)
	a.signIn(t, exporter).Get("/staff/patients/export?format=json&email=" + url.QueryEscape(email)).Want(http.StatusOK)
	if recs := a.accessRecords(t, exporter.ID); len(recs) != 1 || recs[0].Page != "export" || !slices.Contains(recs[0].Bookings, bk.ID) {
		t.Errorf("the export's records %+v, want one naming the booking", recs)
	}
	admin.Get("/staff/access?email=&phone=%20").Want(http.StatusOK)
	admin.Get("/staff/access?email=not-an-address").Want(http.StatusOK)

	for _, role := range []string{staff.RoleReception, staff.RoleStaff} {
		cl := a.signIn(t, a.newAccount(t, c.ID, role))
		cl.Get("/staff/access?email=" + url.QueryEscape(email)).Want(http.StatusForbidden)
		cl.Get(link).Want(http.StatusForbidden)
		if cl.Get("/staff/users").Doc().Find(`a[href="`+link+`"]`).Length() != 0 {
			t.Errorf("%s sees the link to the record", role)
		}
	}
}
