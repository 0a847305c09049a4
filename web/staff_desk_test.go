package web_test

// Tests of the front desk's booking dialog: it holds the clicked time
// (an online patient is refused it until the dialog closes), offers the
// types that fit there, books exactly that time through the gate, once
// however often it is submitted, and keeps what was typed when it
// refuses.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// deskClinic is a clinic with two specialists and two types: a 30-minute
// consultation and a 60-minute check-up on a 30-minute step, neither with
// a cooldown.
func (a *app) deskClinic(t testing.TB) clinic {
	t.Helper()
	return a.clinic(t, testkit.ClinicOptions{Specialists: 2, Types: []db.AppointmentTypeInsertParams{
		{Name: "Consultation", DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Check-up", DurationMin: 60, SlotStepMin: 30, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}})
}

// deskPath is the dialog of sp's time start.
func deskPath(sp uuid.UUID, start time.Time) string {
	return "/staff/desk/new?specialist=" + sp.String() + "&start=" + url.QueryEscape(rfc(start))
}

// openDesk opens the dialog as htmx does and returns its answer.
func openDesk(cl *client, sp uuid.UUID, start time.Time) *response {
	cl.t.Helper()
	if cl.CSRF == "" {
		cl.Get("/staff/day") // a page, for its CSRF token
	}
	return cl.HXPost(deskPath(sp, start), url.Values{"_csrf": {cl.CSRF}})
}

// deskForm opens the dialog, which must hold the time, and returns its
// form with the patient's details filled in.
func deskForm(t *testing.T, cl *client, sp uuid.UUID, start time.Time, name, email string) url.Values {
	t.Helper()
	r := openDesk(cl, sp, start).Want(http.StatusOK)
	f := r.Form(`[data-testid="desk-form"]`).Values
	if f.Get("client") == "" || f.Get("Idempotency-Key") == "" || f.Get("type") == "" {
		t.Fatalf("the dialog's form lacks its hold owner, key or type: %v\n%s", f, r.Body)
	}
	f.Set("name", name)
	f.Set("email", email)
	return f
}

// deskHolds are the clinic's live holds owned by desk dialogs.
func (a *app) deskHolds(t testing.TB, clinicID uuid.UUID) []holds.Hold {
	t.Helper()
	active, err := a.Deps.Holds.Active(context.Background(), clinicID)
	if err != nil {
		t.Fatal(err)
	}
	var out []holds.Hold
	for _, h := range active {
		if strings.HasPrefix(h.ClientID, "desk:") {
			out = append(out, h)
		}
	}
	return out
}

// The dialog shows the clicked time and specialist and holds the time:
// an online patient is refused it while the dialog is open; the booking
// made from it is exactly that time, by the staff member, and spends the
// hold.
func TestDeskBookByClicking(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[1]
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))
	start := c.Next(time.Wednesday, 10, 30)

	r := openDesk(rec, sp.ID, start).Want(http.StatusOK)
	doc := r.Doc()
	if got := text(doc.Find(`[data-testid="desk-specialist"]`)); got != sp.Name {
		t.Errorf("the dialog's specialist reads %q, want %q", got, sp.Name)
	}
	if got := text(doc.Find(`[data-testid="desk-time"]`)); !strings.Contains(got, start.In(c.Loc).Format("15:04")) {
		t.Errorf("the dialog's time reads %q", got)
	}
	if doc.Find(`dialog[open]`).Length() != 1 {
		t.Errorf("no open dialog:\n%s", r.Body)
	}
	held := a.deskHolds(t, c.ID)
	if len(held) != 1 || held[0].SpecialistID != sp.ID || !held[0].Start.Equal(start) {
		t.Fatalf("desk holds %+v, want one of %s at %s", held, sp.Name, start)
	}
	// An online patient asks for the same time, with any type.
	for _, typ := range c.Types {
		wantError(t, a.postHold(t, typ.ID, sp.ID, start, clientID()), http.StatusLocked, "SLOT_HELD", "")
	}

	f := r.Form(`[data-testid="desk-form"]`).Values
	f.Set("name", "Ada Patient")
	f.Set("email", "ada@example.org")
	f.Set("phone", "+49 30 1234567")
	res := rec.HXPost("/staff/desk/book", withCSRF(rec, f)).Want(http.StatusCreated)
	if msg := res.Text(`[data-testid="desk-booked"]`); !strings.Contains(msg, "Booked Ada Patient") || !strings.Contains(msg, "/manage/") {
		t.Errorf("after booking the container reads %q", msg)
	}
	if res.Doc().Find("dialog").Length() != 0 {
		t.Error("the dialog is still there after booking")
	}
	rows := a.bookingsOf(t, c, start.Add(-time.Hour), start.Add(2*time.Hour))
	if len(rows) != 1 || !rows[0].SlotStart.Equal(start) || rows[0].SpecialistID != sp.ID || rows[0].PatientName != "Ada Patient" {
		t.Fatalf("bookings %+v, want Ada Patient with %s at %s", rows, sp.Name, start)
	}
	if got := a.lastAudit(t, c.ID).Actor; !strings.HasPrefix(got, "staff:") {
		t.Errorf("the booking's audit actor is %q", got)
	}
	if h := a.deskHolds(t, c.ID); len(h) != 0 {
		t.Errorf("desk holds left after booking: %+v", h)
	}
}

// bookingsOf are the clinic's confirmed bookings from from to to.
func (a *app) bookingsOf(t testing.TB, c clinic, from, to time.Time) []db.BookingCalendarRow {
	t.Helper()
	rows, err := db.New(a.Pool).BookingCalendar(context.Background(), db.BookingCalendarParams{ClinicID: c.ID, RangeStart: from, RangeEnd: to})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// withCSRF is the form with the session's CSRF token.
func withCSRF(cl *client, f url.Values) url.Values {
	f = cloneValues(f)
	f.Set("_csrf", cl.CSRF)
	return f
}

// Two submits of one dialog (a double click), released together, book
// once: both answer with the one booking.
func TestDeskDoubleSubmitBooksOnce(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	admin := a.signIn(t, c.Admin)
	start := c.Next(time.Thursday, 9, 0)
	f := withCSRF(admin, deskForm(t, admin, sp.ID, start, "Twice Clicked", "twice@example.org"))

	const n = 2
	answers := make([]*response, n)
	testkit.Together(n, func(i int) { answers[i] = admin.HXPost("/staff/desk/book", f) })
	var msgs []string
	for _, r := range answers {
		if r.Status != http.StatusCreated {
			t.Fatalf("a submit answered %d:\n%s", r.Status, clip(r.Body, 600))
		}
		msgs = append(msgs, r.Text(`[data-testid="desk-booked"]`))
	}
	if msgs[0] != msgs[1] || msgs[0] == "" {
		t.Errorf("the two submits answered differently: %q and %q", msgs[0], msgs[1])
	}
	if rows, overlaps := a.confirmedRows(t, c.ID); rows != 1 || overlaps != 0 {
		t.Fatalf("%d confirmed bookings (%d overlapping), want 1", rows, overlaps)
	}
	if h := a.deskHolds(t, c.ID); len(h) != 0 {
		t.Errorf("desk holds left after booking: %+v", h)
	}
}

// Closing the dialog lets go of the time: the hold is gone and an online
// patient may hold it.
func TestDeskCloseReleasesTheHold(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	st := a.signIn(t, c.Staff)
	start := c.Next(time.Tuesday, 14, 0)
	f := deskForm(t, st, sp.ID, start, "", "")
	patient := clientID()
	wantError(t, a.postHold(t, c.Types[0].ID, sp.ID, start, patient), http.StatusLocked, "SLOT_HELD", "")

	r := st.HXPost("/staff/desk/release", withCSRF(st, url.Values{"client": {f.Get("client")}})).Want(http.StatusOK)
	if strings.TrimSpace(r.Body) != "" {
		t.Errorf("closing answers %q, want nothing (the container empties)", r.Body)
	}
	if h := a.deskHolds(t, c.ID); len(h) != 0 {
		t.Fatalf("desk holds after closing: %+v", h)
	}
	a.holdOf(t, c.Types[0].ID, sp.ID, start, patient)
	// Another account cannot close someone else's dialog.
	other := a.signIn(t, c.Admin)
	f2 := deskForm(t, st, sp.ID, start.Add(time.Hour), "", "")
	other.HXPost("/staff/desk/release", withCSRF(other, url.Values{"client": {f2.Get("client")}})).Want(http.StatusBadRequest)
	if h := a.deskHolds(t, c.ID); len(h) != 1 {
		t.Errorf("desk holds after another account's close: %+v", h)
	}
}

// Only the types that fit before the next booking are offered; a booked
// time and a time off the hours say so in the dialog (409), held by a
// patient says so too (423); another clinic's specialist is not found.
func TestDeskOffersTypesThatFit(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	admin := a.signIn(t, c.Admin)
	a.bookDirect(t, c, c.Types[0], sp.ID, c.Next(time.Wednesday, 11, 0), "Next Patient")

	offered := func(start time.Time) []string {
		var names []string
		r := openDesk(admin, sp.ID, start).Want(http.StatusOK)
		r.Doc().Find(`#desk-type option`).Each(func(_ int, o *goquery.Selection) { names = append(names, text(o)) })
		admin.HXPost("/staff/desk/release", withCSRF(admin, url.Values{"client": {r.Form(`[data-testid="desk-form"]`).Values.Get("client")}})).Want(http.StatusOK)
		return names
	}
	if got := offered(c.Next(time.Wednesday, 10, 30)); strings.Join(got, "|") != "Consultation (30 min)" {
		t.Errorf("at 10:30, before an 11:00 booking: %v, want the consultation only", got)
	}
	if got := offered(c.Next(time.Wednesday, 9, 30)); strings.Join(got, "|") != "Consultation (30 min)|Check-up (60 min)" {
		t.Errorf("at 09:30: %v, want both types", got)
	}

	r := openDesk(admin, sp.ID, c.Next(time.Wednesday, 11, 0)).Want(http.StatusConflict)
	if msg := r.Text(`[data-testid="desk-error"]`); !strings.Contains(msg, "already booked") {
		t.Errorf("a booked time: %q", msg)
	}
	r = openDesk(admin, sp.ID, c.Next(time.Wednesday, 20, 0)).Want(http.StatusConflict)
	if msg := r.Text(`[data-testid="desk-error"]`); !strings.Contains(msg, "No appointment type") {
		t.Errorf("a time off the hours: %q", msg)
	}
	heldAt := c.Next(time.Wednesday, 15, 0)
	a.holdOf(t, c.Types[0].ID, sp.ID, heldAt, clientID())
	r = openDesk(admin, sp.ID, heldAt).Want(http.StatusLocked)
	if msg := r.Text(`[data-testid="desk-error"]`); msg == "" || r.Doc().Find(`button[type=submit]`).Length() != 0 {
		t.Errorf("a held time: %q, with a Book button: %d", msg, r.Doc().Find(`button[type=submit]`).Length())
	}

	other := a.deskClinic(t)
	openDesk(admin, other.Specialists[0].ID, other.Next(time.Wednesday, 10, 0)).Want(http.StatusNotFound)
	if h := a.deskHolds(t, other.ID); len(h) != 0 {
		t.Errorf("the other clinic's time is held: %+v", h)
	}
}

// A refused submit shows why in the dialog with what was typed, and the
// dialog keeps its hold; corrected, it books.
func TestDeskFieldErrorKeepsTheTypedValues(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	st := a.signIn(t, c.Staff)
	start := c.Next(time.Friday, 9, 0)
	f := withCSRF(st, deskForm(t, st, sp.ID, start, "Typo Patient", "not-an-address"))
	f.Set("phone", "+49 30 999")

	r := st.HXPost("/staff/desk/book", f).Want(http.StatusUnprocessableEntity)
	doc := r.Doc()
	if msg := r.Text(`[data-testid="desk-error"]`); !strings.Contains(msg, "e-mail") {
		t.Errorf("the refusal reads %q", msg)
	}
	for id, want := range map[string]string{"desk-name": "Typo Patient", "desk-email": "not-an-address", "desk-phone": "+49 30 999"} {
		if got, _ := doc.Find("#" + id).Attr("value"); got != want {
			t.Errorf("#%s keeps %q, want %q", id, got, want)
		}
	}
	if v, _ := doc.Find("#desk-email").Attr("aria-invalid"); v != "true" {
		t.Error("the e-mail field is not marked invalid")
	}
	if len(a.deskHolds(t, c.ID)) != 1 {
		t.Fatal("the dialog lost its hold")
	}
	g := withCSRF(st, r.Form(`[data-testid="desk-form"]`).Values)
	if g.Get("Idempotency-Key") != f.Get("Idempotency-Key") || g.Get("client") != f.Get("client") {
		t.Errorf("the dialog changed its key or hold owner")
	}
	g.Set("email", "typo@example.org")
	st.HXPost("/staff/desk/book", g).Want(http.StatusCreated)
}

// The dialog's heartbeat keeps its hold, and a type of another length
// chosen in the form moves the hold to that type: one hold, never two.
func TestDeskHeartbeatKeepsAndFollowsTheType(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	st := a.signIn(t, c.Staff)
	start := c.Next(time.Tuesday, 9, 0)
	f := withCSRF(st, deskForm(t, st, sp.ID, start, "", ""))
	before := a.deskHolds(t, c.ID)
	if len(before) != 1 || before[0].AppointmentTypeID != c.Types[0].ID {
		t.Fatalf("desk holds %+v, want one of the first type", before)
	}

	f.Set("type", c.Types[1].ID.String())
	r := st.HXPost("/staff/desk/heartbeat", f).Want(http.StatusOK)
	if r.Doc().Find(`#desk-keep [data-held-until]`).Length() != 1 {
		t.Errorf("the heartbeat answers %s", clip(r.Body, 300))
	}
	after := a.deskHolds(t, c.ID)
	if len(after) != 1 || after[0].AppointmentTypeID != c.Types[1].ID || !after[0].End.Equal(start.Add(time.Hour)) {
		t.Fatalf("desk holds after choosing the check-up: %+v", after)
	}
	// An online patient's half hour right after is refused: the hour is held.
	wantError(t, a.postHold(t, c.Types[0].ID, sp.ID, start.Add(30*time.Minute), clientID()), http.StatusLocked, "SLOT_HELD", "")

	// Another account's heartbeat of this dialog is refused and holds nothing.
	other := a.signIn(t, c.Admin)
	if msg := other.HXPost("/staff/desk/heartbeat", withCSRF(other, f)).Want(http.StatusOK).Text(`[data-testid="desk-hold"]`); !strings.Contains(msg, "not one of yours") {
		t.Errorf("another account's heartbeat answers %q", msg)
	}
	if n := len(a.deskHolds(t, c.ID)); n != 1 {
		t.Errorf("%d desk holds after another account's heartbeat", n)
	}
}

// A desk dialog's hold that lapses (the dialog left open, its heartbeats
// gone) frees the time: an online patient then holds it, and the desk's
// late booking of it is refused, leaving the patient's hold. The hold is
// expired on purpose (PEXPIRE), not waited out. Fails if a lapsed desk
// hold still blocks online claims, or if the desk's booking does not check
// its hold is still its own.
func TestDeskHoldThatLapsesIsTakenOnline(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp := c.Specialists[0]
	st := a.signIn(t, c.Staff)
	start := c.Next(time.Wednesday, 11, 0)
	f := deskForm(t, st, sp.ID, start, "Desk Patient", "desk@example.org")
	patient := clientID()
	wantError(t, a.postHold(t, c.Types[0].ID, sp.ID, start, patient), http.StatusLocked, "SLOT_HELD", "")

	dh := a.deskHolds(t, c.ID)
	if len(dh) != 1 {
		t.Fatalf("desk holds: %+v, want the dialog's", dh)
	}
	// The hold lapses as it would at the end of its TTL: its key expires,
	// and its expiry (by which the sweeper announces the lapse, and the
	// live view frees the time) is now.
	key := holdKeyOf(dh[0].ClinicID, dh[0].AppointmentTypeID, dh[0].SpecialistID, dh[0].Start)
	if err := a.RDB.ZAddXX(t.Context(), "holds:expiry:{"+c.ID.String()+"}", redis.Z{Score: float64(time.Now().UnixMilli()), Member: dh[0].HoldID}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.RDB.PExpire(t.Context(), key, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "the desk hold's key to expire", func() bool { return a.RDB.Exists(t.Context(), key).Val() == 0 })

	var claim *response
	testkit.WaitFor(t, 15*time.Second, "the lapsed desk hold's time to be free online", func() bool {
		claim = a.postHold(t, c.Types[0].ID, sp.ID, start, patient)
		return claim.Status == http.StatusCreated
	})
	var online holdView
	claim.Decode(&online)
	res := st.HXPost("/staff/desk/book", withCSRF(st, f))
	if res.Status < 400 || res.Status >= 500 {
		t.Fatalf("the desk's booking of a time held online since: %d, want refused\n%s", res.Status, clip(res.Body, 300))
	}
	var n int
	if err := a.Pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings WHERE clinic_id = $1 AND slot_start = $2 AND status = 'confirmed'`, c.ID, start).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d bookings of the time held online", n)
	}
	if held, ok, err := a.Deps.Holds.HeldBy(t.Context(), c.ID, c.Types[0].ID, sp.ID, start); err != nil || !ok || held.HoldID != online.HoldID {
		t.Fatalf("the time is held by %+v (%v, %v), want the online patient's hold %s", held, ok, err, online.HoldID)
	}
}
