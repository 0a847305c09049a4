package web_test

// Tests of the staff's waitlist: the list (oldest first, places per type,
// filters, who may see it), taking a patient off it, the day grid's count
// of those waiting, and the CSRF check of its forms. Offering a time by
// hand is in staff_waitlist_offer_test.go.

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
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// wlJoin puts name on the clinic's waitlist for typ over the days from..to
// (clinic time), behind the pages' back.
func (a *app) wlJoin(t testing.TB, c clinic, typ db.AppointmentType, from, to time.Time, name string) waitlist.Entry {
	t.Helper()
	email := strings.ToLower(strings.Fields(name)[0]) + "-" + uuid.NewString()[:8] + "@example.org"
	e, _, err := a.Deps.Waitlist.Join(context.Background(), waitlist.JoinRequest{
		ClinicID: c.ID, AppointmentTypeID: typ.ID,
		From: from.In(c.Loc).Format(time.DateOnly), To: to.In(c.Loc).Format(time.DateOnly),
		Patient:  booking.Patient{Name: name, Email: email, Phone: "+49 30 555 0101"},
		ClientID: "c-" + email, Language: "en",
	})
	if err != nil {
		t.Fatalf("join %s: %v", name, err)
	}
	pwConfirm(t, a, c, e.ID)
	// Joined in this order: the next joins a moment later.
	time.Sleep(2 * time.Millisecond)
	return e
}

// wlState is the entry's state in the database.
func (a *app) wlState(t testing.TB, id uuid.UUID) string {
	t.Helper()
	var s string
	if err := a.Pool.QueryRow(context.Background(), `SELECT state FROM waitlist_entries WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// wlAudit is the clinic's one audit row of action on the entry.
func (a *app) wlAudit(t testing.TB, clinicID, entry uuid.UUID, action string) db.AuditLog {
	t.Helper()
	var row db.AuditLog
	err := a.Pool.QueryRow(context.Background(), `SELECT id, clinic_id, actor, action, entity, entity_id, before, after, reason, at
		FROM audit_log WHERE clinic_id = $1 AND entity_id = $2 AND action = $3`, clinicID, entry.String(), action).Scan(
		&row.ID, &row.ClinicID, &row.Actor, &row.Action, &row.Entity, &row.EntityID, &row.Before, &row.After, &row.Reason, &row.At)
	if err != nil {
		t.Fatalf("the %s audit row of entry %s: %v", action, entry, err)
	}
	return row
}

// wantNoPatientData fails when the audit row tells the entry's patient's
// name, e-mail or phone: the row names the entry, whose page has them.
func wantNoPatientData(t testing.TB, row db.AuditLog, e waitlist.Entry) {
	t.Helper()
	detail := string(row.Before) + string(row.After) + row.Reason
	for _, p := range []string{e.Patient.Name, e.Patient.Email, e.Patient.Phone} {
		if strings.Contains(detail, p) {
			t.Errorf("the %s audit row tells %q: %s", row.Action, p, detail)
		}
	}
}

// wlRow is a row of the staff's list as shown.
type wlRow struct{ id, place, name, typ string }

func wlRows(r *response) []wlRow {
	var out []wlRow
	r.Doc().Find(`[data-testid="waitlist-row"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, wlRow{id: s.AttrOr("data-entry", ""), place: text(s.Find("td").First()),
			name: text(s.Find(`[data-testid="wl-name"]`)), typ: text(s.Find(`[data-testid="wl-type"]`))})
	})
	return out
}

// wantRows fails unless the list shows exactly the entries, in order, at
// the places given.
func wantRows(t testing.TB, r *response, entries []waitlist.Entry, places []string) {
	t.Helper()
	rows := wlRows(r)
	ok := len(rows) == len(entries)
	for i := 0; ok && i < len(rows); i++ {
		ok = rows[i].id == entries[i].ID.String() && rows[i].place == places[i] && rows[i].name == entries[i].Patient.Name
	}
	if !ok {
		var want []string
		for i, e := range entries {
			want = append(want, places[i]+" "+e.Patient.Name)
		}
		t.Fatalf("%s lists %+v, want %v", r.what, rows, want)
	}
}

// A place its patient has not confirmed is listed as such, with no place
// in the list's order and no way to offer it a time (the offer page says
// why); confirmed, it is an ordinary place.
func TestStaffWaitlistShowsUnconfirmedPlaces(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	wed := c.Next(time.Wednesday, 9, 0)
	ada := a.wlJoin(t, c, c.Types[0], wed, wed, "Ada Waiting")
	email := "una-" + uuid.NewString()[:8] + "@example.org"
	una, _, err := a.Deps.Waitlist.Join(context.Background(), waitlist.JoinRequest{
		ClinicID: c.ID, AppointmentTypeID: c.Types[0].ID, From: wed.In(c.Loc).Format(time.DateOnly), To: wed.In(c.Loc).Format(time.DateOnly),
		Patient: booking.Patient{Name: "Una Unconfirmed", Email: email}, ClientID: "c-" + email, Language: "en",
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))
	page := rec.Get("/staff/waitlist").Want(http.StatusOK)
	wantRows(t, page, []waitlist.Entry{ada, una}, []string{"1", "–"})
	row := page.Doc().Find(`[data-testid="waitlist-row"][data-entry="` + una.ID.String() + `"]`)
	if st := row.Find(`[data-testid="wl-state"]`); st.AttrOr("data-confirmed", "") != "no" || !strings.Contains(st.Text(), "Not confirmed") {
		t.Errorf("the unconfirmed place's state reads %q (%s)", strings.TrimSpace(st.Text()), st.AttrOr("data-confirmed", ""))
	}
	if row.Find(`[data-testid="wl-offer"]`).Length() != 0 {
		t.Error("the unconfirmed place can be offered a time from the list")
	}
	offerPage := rec.Get("/staff/waitlist/" + una.ID.String() + "/offer").Want(http.StatusOK)
	if got := offerPage.Text(`[data-testid="wl-offered"]`); !strings.Contains(got, "has not confirmed") {
		t.Errorf("the offer page of an unconfirmed place says %q", got)
	}
	pwConfirm(t, a, c, una.ID)
	page = rec.Get("/staff/waitlist").Want(http.StatusOK)
	wantRows(t, page, []waitlist.Entry{ada, una}, []string{"1", "2"})
	row = page.Doc().Find(`[data-testid="waitlist-row"][data-entry="` + una.ID.String() + `"]`)
	if row.Find(`[data-testid="wl-state"]`).AttrOr("data-confirmed", "") != "yes" || row.Find(`[data-testid="wl-offer"]`).Length() != 1 {
		t.Error("the confirmed place is not listed as an ordinary place")
	}
}

// wantFieldError fails unless the JSON answer to path is a 400 naming field.
func wantFieldError(t testing.TB, cl *client, path, field string) {
	t.Helper()
	r := cl.send(http.MethodGet, path, nil, "Accept", "application/json")
	wantError(t, r, http.StatusBadRequest, "INVALID_ARGUMENT", field)
	page := cl.Get(path)
	if page.Status != http.StatusBadRequest || !strings.Contains(page.Text(`[data-testid="error-page"]`), field) {
		t.Errorf("%s as a page: %d %q, want 400 naming %s", path, page.Status, page.Text(`[data-testid="error-page"]`), field)
	}
}

// The list shows everyone waiting, oldest first, each with their place
// among those shown who wait for the same type; it filters by type and by
// day, and refuses a filter it cannot read, naming it.
func TestStaffWaitlistListsOldestFirst(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	wed := c.Next(time.Wednesday, 9, 0)
	thu := wed.AddDate(0, 0, 1)
	ada := a.wlJoin(t, c, c.Types[0], wed, thu, "Ada Waiting")
	ben := a.wlJoin(t, c, c.Types[1], wed, wed, "Ben Waiting")
	cleo := a.wlJoin(t, c, c.Types[0], thu, thu, "Cleo Waiting")
	a.wlJoin(t, other, other.Types[0], wed, wed, "Dora Elsewhere")
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))

	all := rec.Get("/staff/waitlist").Want(http.StatusOK)
	wantRows(t, all, []waitlist.Entry{ada, ben, cleo}, []string{"1", "1", "2"})
	for _, want := range []string{ada.Patient.Email, ada.Patient.Phone, c.Types[1].Name} {
		if !strings.Contains(all.Text(`[data-testid="waitlist"]`), want) {
			t.Errorf("the list does not show %q", want)
		}
	}
	byType := rec.Get("/staff/waitlist?type=" + c.Types[1].ID.String()).Want(http.StatusOK)
	wantRows(t, byType, []waitlist.Entry{ben}, []string{"1"})
	thuDate := thu.Format(time.DateOnly)
	wantRows(t, rec.Get("/staff/waitlist?day="+thuDate).Want(http.StatusOK), []waitlist.Entry{ada, cleo}, []string{"1", "2"})
	both := rec.Get("/staff/waitlist?day=" + wed.Format(time.DateOnly) + "&type=" + c.Types[0].ID.String()).Want(http.StatusOK)
	wantRows(t, both, []waitlist.Entry{ada}, []string{"1"})
	if v := both.Doc().Find(`#wl-day`).AttrOr("value", ""); v != wed.Format(time.DateOnly) {
		t.Errorf("the filter's day reads %q", v)
	}
	empty := rec.Get("/staff/waitlist?day=" + wed.AddDate(0, 0, 7).Format(time.DateOnly)).Want(http.StatusOK)
	if len(wlRows(empty)) != 0 || empty.Text(`[data-testid="waitlist-empty"]`) == "" {
		t.Errorf("a day nobody waits for lists %+v", wlRows(empty))
	}

	wantFieldError(t, rec, "/staff/waitlist?type=nope", "type")
	wantFieldError(t, rec, "/staff/waitlist?type="+other.Types[0].ID.String(), "type")
	wantFieldError(t, rec, "/staff/waitlist?day=2030-13-01", "day")
	wantFieldError(t, rec, "/staff/waitlist?day=tomorrow", "day")

	// Another clinic's staff see their own list only.
	elsewhere := a.signIn(t, other.Admin).Get("/staff/waitlist").Want(http.StatusOK)
	if rows := wlRows(elsewhere); len(rows) != 1 || rows[0].name != "Dora Elsewhere" {
		t.Errorf("another clinic's list: %+v", rows)
	}
}

// Who may see the list and act on it is the role table's: those who may
// book see it and offer times, those who may cancel remove; signed out,
// the pages lead to the sign-in.
func TestStaffWaitlistRoles(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	wed := c.Next(time.Wednesday, 9, 0)
	accounts := map[string]account{staff.RoleAdmin: c.Admin, staff.RoleStaff: c.Staff, staff.RoleReception: a.newAccount(t, c.ID, staff.RoleReception)}
	for _, role := range staff.Roles {
		e := a.wlJoin(t, c, c.Types[0], wed, wed, "Role "+role)
		cl := a.signIn(t, accounts[role])
		for _, r := range []struct {
			res    *response
			action staff.Action
		}{
			{cl.Get("/staff/waitlist"), staff.ActBook},
			{cl.Get("/staff/waitlist/" + e.ID.String() + "/offer"), staff.ActBook},
			{cl.Post("/staff/waitlist/"+e.ID.String()+"/remove", url.Values{"confirm": {"yes"}}), staff.ActCancel},
		} {
			switch may := allows(role, r.action); {
			case may && (r.res.Status == http.StatusForbidden || r.res.Status >= 500):
				t.Errorf("%s %s: %d, but %s may %s", role, r.res.what, r.res.Status, role, r.action)
			case !may && r.res.Status != http.StatusForbidden:
				t.Errorf("%s %s: %d, want 403", role, r.res.what, r.res.Status)
			}
		}
		if want := map[bool]string{true: waitlist.StateRemoved, false: waitlist.StateWaiting}[allows(role, staff.ActCancel)]; a.wlState(t, e.ID) != want {
			t.Errorf("%s removed the entry: it is %s, want %s", role, a.wlState(t, e.ID), want)
		}
	}
	anon := a.newClient(t)
	anon.Get("/staff/waitlist").WantRedirect("/staff/login")
}

// Remove asks first; confirmed, the patient leaves the list, audited
// without their details, and the list shows again with its filters; a
// second removal finds nothing.
func TestStaffWaitlistRemove(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	wed := c.Next(time.Wednesday, 9, 0)
	e := a.wlJoin(t, c, c.Types[0], wed, wed, "Erin Leaving")
	stays := a.wlJoin(t, c, c.Types[0], wed, wed, "Finn Staying")
	rec := a.newAccount(t, c.ID, staff.RoleReception)
	cl := a.signIn(t, rec)
	filter := "?day=" + wed.Format(time.DateOnly) + "&type=" + c.Types[0].ID.String()

	list := cl.Get("/staff/waitlist" + filter).Want(http.StatusOK)
	f := list.Form(`[data-entry="` + e.ID.String() + `"] [data-testid="wl-remove"]`)
	asked := cl.Post(f.Action, f.Values).Want(http.StatusOK)
	if s := asked.Text(`[data-testid="wl-remove-summary"]`); !strings.Contains(s, e.Patient.Name) || !strings.Contains(s, c.Types[0].Name) {
		t.Errorf("the question reads %q", s)
	}
	if st := a.wlState(t, e.ID); st != waitlist.StateWaiting {
		t.Fatalf("asking removed the entry: %s", st)
	}
	confirm := asked.Form(`[data-testid="wl-remove-confirm"]`)
	if confirm.Values.Get("confirm") != "yes" {
		t.Fatalf("the confirmation form sends %v", confirm.Values)
	}
	back := "/staff/waitlist?day=" + wed.Format(time.DateOnly) + "&type=" + c.Types[0].ID.String()
	cl.Post(confirm.Action, confirm.Values).WantRedirect(back)

	after := cl.Get(back).Want(http.StatusOK)
	if n := after.Text(`[data-testid="notice"]`); !strings.Contains(n, "Removed "+e.Patient.Name) {
		t.Errorf("the notice reads %q", n)
	}
	wantRows(t, after, []waitlist.Entry{stays}, []string{"1"})
	if st := a.wlState(t, e.ID); st != waitlist.StateRemoved {
		t.Errorf("the entry is %s, want removed", st)
	}
	row := a.wlAudit(t, c.ID, e.ID, "waitlist.remove")
	if row.Actor != rec.Actor() || row.Entity != "waitlist_entry" {
		t.Errorf("the audit row: %+v", row)
	}
	wantNoPatientData(t, row, e)

	before := a.auditCount(t, c.ID)
	cl.Post(confirm.Action, confirm.Values).Want(http.StatusNotFound)
	cl.Post(confirm.Action, url.Values{}).Want(http.StatusNotFound)
	cl.Post("/staff/waitlist/not-an-id/remove", url.Values{"confirm": {"yes"}}).Want(http.StatusNotFound)
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("removing again wrote %d audit rows", n-before)
	}
	// Another clinic's staff cannot remove the clinic's patients.
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.signIn(t, other.Admin).Post("/staff/waitlist/"+stays.ID.String()+"/remove", url.Values{"confirm": {"yes"}}).Want(http.StatusNotFound)
	if st := a.wlState(t, stays.ID); st != waitlist.StateWaiting {
		t.Errorf("another clinic's staff removed the entry: %s", st)
	}
}

// The day grid names how many wait for the day, linking to their list;
// a day nobody waits for names nothing.
func TestStaffDayGridNamesThoseWaiting(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	wed := c.Next(time.Wednesday, 9, 0)
	thu, fri := wed.AddDate(0, 0, 1), wed.AddDate(0, 0, 2)
	a.wlJoin(t, c, c.Types[0], wed, thu, "Gus Waiting")
	leaving := a.wlJoin(t, c, c.Types[1], thu, thu, "Hana Waiting")
	cl := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))

	for _, w := range []struct {
		day  time.Time
		want string
	}{{wed, "1 waiting"}, {thu, "2 waiting"}, {fri, ""}} {
		date := w.day.Format(time.DateOnly)
		link := cl.Get("/staff/day?date=" + date).Want(http.StatusOK).Doc().Find(`[data-testid="grid-waiting"]`)
		if w.want == "" {
			if link.Length() != 0 {
				t.Errorf("%s: the grid names %q though nobody waits", date, text(link))
			}
			continue
		}
		if text(link) != w.want || link.AttrOr("href", "") != "/staff/waitlist?day="+date {
			t.Errorf("%s: the grid's link reads %q to %q, want %q to the day's list", date, text(link), link.AttrOr("href", ""), w.want)
		}
	}
	cl.Post("/staff/waitlist/"+leaving.ID.String()+"/remove", url.Values{"confirm": {"yes"}}).Want(http.StatusSeeOther)
	if got := cl.Get("/staff/day?date=" + thu.Format(time.DateOnly)).Text(`[data-testid="grid-waiting"]`); got != "1 waiting" {
		t.Errorf("after a removal the grid reads %q, want 1 waiting", got)
	}
}

// The waitlist's forms need the session's CSRF token, as every staff
// form does: without it, or with a wrong one, nothing changes.
func TestStaffWaitlistCSRF(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	wed := c.Next(time.Wednesday, 10, 0)
	e := a.wlJoin(t, c, c.Types[0], wed, wed, "Ivo Waiting")
	admin := a.signIn(t, c.Admin)
	before := a.auditCount(t, c.ID)
	posts := []struct {
		path string
		form url.Values
	}{
		{"/staff/waitlist/" + e.ID.String() + "/remove", url.Values{"confirm": {"yes"}}},
		{"/staff/waitlist/" + e.ID.String() + "/offer", url.Values{"specialist": {c.Specialists[0].ID.String()}, "start": {rfc(wed)}}},
	}
	for _, p := range posts {
		for _, tok := range []string{"", "0000" + admin.CSRF[4:]} {
			form := cloneValues(p.form)
			if tok != "" {
				form.Set("_csrf", tok)
			}
			res := admin.PostRaw(p.path, form, nil)
			if res.Status != http.StatusForbidden || !strings.Contains(res.Text(`[data-testid="error-page"]`), "expired or came from another site") {
				t.Errorf("%s with CSRF token %q: %d %q, want 403", p.path, tok, res.Status, res.Text(`[data-testid="error-page"]`))
			}
		}
	}
	if st := a.wlState(t, e.ID); st != waitlist.StateWaiting {
		t.Errorf("a refused POST changed the entry: %s", st)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("refused POSTs wrote %d audit rows", n-before)
	}
	var openings int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, c.ID).Scan(&openings); err != nil {
		t.Fatal(err)
	}
	if openings != 0 {
		t.Errorf("a refused offer made %d openings", openings)
	}
}

// wlFill puts n patients on the clinic's waitlist for typ on day, straight
// into the table (joining through the service takes its time per entry),
// all joined before anyone the test adds after.
func (a *app) wlFill(t testing.TB, c clinic, typ db.AppointmentType, day time.Time, n int) {
	t.Helper()
	_, err := a.Pool.Exec(context.Background(), `INSERT INTO waitlist_entries
		(id, clinic_id, appointment_type_id, from_date, to_date, patient_name, patient_email, joined_at)
		SELECT gen_random_uuid(), $1, $2, $3::date, $3::date, 'Early ' || i, 'early-' || i || '-' || $4 || '@example.org',
		       now() - interval '1 hour' + i * interval '1 millisecond'
		FROM generate_series(1, $5::int) i`, c.ID, typ.ID, day.In(c.Loc).Format(time.DateOnly), uuid.NewString()[:8], n)
	if err != nil {
		t.Fatalf("fill the waitlist: %v", err)
	}
}

// A list cut at its 500 rows says so; a patient behind them can still be
// offered a time (checked like any other) and taken off the list; one
// taken off cannot be offered one.
//
// Mutations: finding the entry in the list (cut at 500): its pages are
// 404; offering without the entry's checks when it is not found: the time
// outside its days is offered.
func TestStaffWaitlistPastTheListsCap(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	wed := c.Next(time.Wednesday, 9, 0)
	a.wlFill(t, c, c.Types[1], wed, 500)
	e := a.wlJoin(t, c, c.Types[0], wed, wed, "Max Behind")
	cl := a.signIn(t, c.Staff)

	all := cl.Get("/staff/waitlist").Want(http.StatusOK)
	if n := len(wlRows(all)); n != 500 || !strings.Contains(all.Text(`[data-testid="notice"]`), "showing the first 500") {
		t.Errorf("the cut list shows %d rows, notice %q", n, all.Text(`[data-testid="notice"]`))
	}
	byType := cl.Get("/staff/waitlist?type=" + c.Types[0].ID.String()).Want(http.StatusOK)
	wantRows(t, byType, []waitlist.Entry{e}, []string{"1"})
	if n := byType.Text(`[data-testid="notice"]`); n != "" {
		t.Errorf("a short list says %q", n)
	}

	page := cl.Get(wlOfferPath(e)).Want(http.StatusOK)
	times := wlTimes(page, c.Specialists[0].ID)
	if len(times) == 0 {
		t.Fatalf("no time to offer:\n%s", clip(page.Body, 2000))
	}
	wlRefused(t, cl, e, c.Specialists[0].ID.String(), rfc(wed.AddDate(0, 0, 1)), http.StatusBadRequest, "start")
	cl.Post(wlOfferPath(e), url.Values{"specialist": {c.Specialists[0].ID.String()}, "start": {times[0]}}).WantRedirect("/staff/waitlist")
	a.wlAudit(t, c.ID, e.ID, "waitlist.offer")

	later := a.wlJoin(t, c, c.Types[0], wed, wed, "Nora Behind")
	asked := cl.Post("/staff/waitlist/"+later.ID.String()+"/remove", url.Values{}).Want(http.StatusOK)
	if s := asked.Text(`[data-testid="wl-remove-summary"]`); !strings.Contains(s, later.Patient.Name) {
		t.Errorf("the question reads %q", s)
	}
	cl.Post("/staff/waitlist/"+later.ID.String()+"/remove", url.Values{"confirm": {"yes"}}).WantRedirect("/staff/waitlist")
	if st := a.wlState(t, later.ID); st != waitlist.StateRemoved {
		t.Fatalf("the entry is %s, want removed", st)
	}
	cl.Post(wlOfferPath(later), url.Values{"specialist": {c.Specialists[0].ID.String()}, "start": {times[len(times)-1]}}).
		Want(http.StatusNotFound)
	var openings int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, c.ID).Scan(&openings); err != nil {
		t.Fatal(err)
	}
	if openings != 1 {
		t.Errorf("%d openings, want the one offer's", openings)
	}
}
