package web_test

// Tests of the staff calendar: phone bookings, cancels and moves from it,
// with their refusals in place, and its live stream of day blocks, whose
// forms carry the viewer's own CSRF token.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

func TestStaffPhoneBookingCancelReschedule(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	sp := c.Specialists[0]
	start := c.Next(time.Tuesday, 10, 0)
	date := start.Format(time.DateOnly)

	bk := a.phoneBook(t, admin, c, sp.ID, start, "Phone Patient", "phone@example.org", "+49 30 1234567")
	if row := a.lastAudit(t, c.ID); row.Action != "booking.create" || row.Actor != c.Admin.Actor() || row.EntityID != bk.ID.String() {
		t.Errorf("audit row %s by %s for %s", row.Action, row.Actor, row.EntityID)
	}
	if bk.Patient.Phone != "+49 30 1234567" || bk.Status != booking.StatusConfirmed {
		t.Errorf("booking: %+v", bk)
	}

	t.Run("ShowsOnTheCalendarDay", func(t *testing.T) {
		cal := admin.Get("/staff?date=" + date + "&view=day").Want(http.StatusOK)
		entry := cal.Doc().Find(`section#cal-` + date + ` [data-testid="entry-booking"]`)
		if entry.Length() != 1 || !strings.Contains(entry.Text(), "Phone Patient") || !strings.Contains(entry.Text(), "10:00") || !strings.Contains(entry.Text(), c.Types[0].Name) {
			t.Fatalf("calendar entry: %q", entry.Text())
		}
		week := admin.Get("/staff?date=" + date + "&specialist=" + sp.ID.String()).Want(http.StatusOK)
		if week.Doc().Find(`[data-testid="cal-day"]`).Length() != 7 {
			t.Error("the week view does not have 7 days")
		}
		if !strings.Contains(week.Text(`section#cal-`+date), "Phone Patient") {
			t.Error("the week view lacks the booking")
		}
	})

	t.Run("TakenSlotIs409InPlace", func(t *testing.T) {
		before := a.auditCount(t, c.ID)
		r := admin.Post("/staff/bookings", phoneForm(c, sp.ID, start, "Second Caller", "second@example.org", "")).Want(http.StatusConflict)
		if msg := r.Text(`[data-testid="calendar-error"]`); msg != "That slot is no longer available. Please pick another time." {
			t.Errorf("taken: %q", msg)
		}
		if n := a.auditCount(t, c.ID); n != before {
			t.Errorf("wrote %d rows", n-before)
		}
	})

	t.Run("HeldOnlineIs423InPlace", func(t *testing.T) {
		phoneBookHeldOnline(t, a, admin, c)
	})

	t.Run("BadInputIs400InPlace", func(t *testing.T) {
		f := phoneForm(c, sp.ID, c.Next(time.Tuesday, 12, 0), "No Email", "", "")
		r := admin.Post("/staff/bookings", f)
		if r.Status != http.StatusBadRequest || r.Text(`[data-testid="calendar-error"]`) == "" {
			t.Errorf("no e-mail: %d %q", r.Status, r.Text(`[data-testid="calendar-error"]`))
		}
		f = phoneForm(c, sp.ID, c.Next(time.Tuesday, 12, 0), "No Time", "t@example.org", "")
		f.Set("time", "")
		if r := admin.Post("/staff/bookings", f); r.Status != http.StatusBadRequest || r.Text(`[data-testid="calendar-error"]`) == "" {
			t.Errorf("no time: %d", r.Status)
		}
	})

	t.Run("TypedTimeInTheSpringGapIs400InPlace", func(t *testing.T) {
		phoneBookInTheSpringGap(t, a, admin, c, sp.ID, start)
	})

	t.Run("CancelNeedsAReason", func(t *testing.T) {
		cancelNeedsAReason(t, a, admin, c)
	})

	// A move without the version the form was opened at is refused, like a
	// stale one: every edit carries the row's version, and nothing is
	// overwritten silently.
	t.Run("RescheduleWithoutVersionIsRefused", func(t *testing.T) {
		mv := a.phoneBook(t, admin, c, sp.ID, c.Next(time.Thursday, 10, 0), "No Version", "nv@example.org", "")
		to := mv.Start.Add(4 * time.Hour).In(c.Loc).Format("2006-01-02T15:04")
		before := a.auditCount(t, c.ID)
		r := admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "reason": {"no version given"}})
		if r.Status < 400 {
			t.Errorf("a reschedule without a version: %d, want a refusal (the form's version is ignored when missing: staffReschedule passes 0, and booking.Reschedule skips the check for ExpectVersion 0)", r.Status)
		}
		if b := a.booking(t, mv.ID); b.Status != booking.StatusConfirmed || !b.Start.Equal(mv.Start) {
			t.Errorf("the booking was moved without a version check: status %s", b.Status)
		}
		if n := a.auditCount(t, c.ID); n != before && r.Status < 400 {
			t.Logf("it wrote %d audit rows", n-before)
		}
	})

	t.Run("RescheduleStaleVersionChangesNothing", func(t *testing.T) {
		rescheduleWithVersions(t, a, admin, c, start)
	})
}

// phoneBookInTheSpringGap: 02:30 on 28 March 2027 does not exist in
// Berlin, so a phone booking typed for it is refused in place and writes
// nothing (time.Date would have booked 03:30 instead).
func phoneBookInTheSpringGap(t *testing.T, a *app, admin *client, c clinic, specialistID uuid.UUID, start time.Time) {
	t.Helper()
	before := a.auditCount(t, c.ID)
	f := phoneForm(c, specialistID, start, "Gap Caller", "gap@example.org", "")
	f.Set("date", "2027-03-28")
	f.Set("time", "02:30")
	r := admin.Post("/staff/bookings", f).Want(http.StatusBadRequest)
	if msg := r.Text(`[data-testid="calendar-error"]`); !strings.Contains(msg, "skip") {
		t.Errorf("gap: %q", msg)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("wrote %d rows", n-before)
	}
}

// phoneBookHeldOnline: a time a patient holds online shows on the
// calendar without the patient, and a phone booking over it is refused
// in place.
func phoneBookHeldOnline(t *testing.T, a *app, admin *client, c clinic) {
	sp := c.Specialists[0]
	held := c.Next(time.Tuesday, 11, 0)
	a.holdOf(t, c.Types[0].ID, sp.ID, held, "online-patient-"+uuid.NewString()[:8])
	cal := admin.Get("/staff?date=" + held.Format(time.DateOnly) + "&view=day").Want(http.StatusOK)
	h := cal.Doc().Find(`[data-testid="entry-held"]`)
	if h.Length() != 1 || !strings.Contains(h.Text(), "11:00") || strings.Contains(h.Text(), "online-patient") {
		t.Errorf("the calendar's held entry: %q", h.Text())
	}
	before := a.auditCount(t, c.ID)
	r := admin.Post("/staff/bookings", phoneForm(c, sp.ID, held.Add(-15*time.Minute), "Overlapping Caller", "o@example.org", "")).Want(http.StatusLocked)
	if msg := r.Text(`[data-testid="calendar-error"]`); !strings.Contains(msg, "Someone is booking this slot right now") {
		t.Errorf("held: %q", msg)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("wrote %d rows", n-before)
	}
}

// cancelNeedsAReason: a cancel without a reason changes nothing; with one
// it cancels, with an audit row that keeps the reason.
func cancelNeedsAReason(t *testing.T, a *app, admin *client, c clinic) {
	sp := c.Specialists[0]
	other := a.phoneBook(t, admin, c, sp.ID, c.Next(time.Wednesday, 9, 30), "Cancel Me", "cancel@example.org", "")
	before := a.auditCount(t, c.ID)
	r := admin.Post("/staff/bookings/"+other.ID.String()+"/cancel", url.Values{"reason": {"  "}}).Want(http.StatusBadRequest)
	if msg := r.Text(`[data-testid="calendar-error"]`); msg != "Give a reason: it goes into the audit log." {
		t.Errorf("no reason: %q", msg)
	}
	if b := a.booking(t, other.ID); b.Status != booking.StatusConfirmed {
		t.Fatalf("cancelled without a reason: %s", b.Status)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("wrote %d rows", n-before)
	}
	r = admin.Post("/staff/bookings/"+other.ID.String()+"/cancel", url.Values{"reason": {"Patient called to cancel"}}).Want(http.StatusOK)
	if n := r.Text(`p.notice`); n != "Cancelled the booking of Cancel Me." {
		t.Errorf("notice %q", n)
	}
	if b := a.booking(t, other.ID); b.Status != booking.StatusCancelled {
		t.Fatalf("status %s", b.Status)
	}
	row := a.lastAudit(t, c.ID)
	if row.Action != "booking.cancel" || row.Reason != "Patient called to cancel" || row.Actor != c.Admin.Actor() || row.EntityID != other.ID.String() {
		t.Errorf("audit row: %s %q by %s", row.Action, row.Reason, row.Actor)
	}
	admin.Post("/staff/bookings/"+uuid.NewString()+"/cancel", url.Values{"reason": {"x"}}).Want(http.StatusNotFound)
	admin.Post("/staff/bookings/not-an-id/cancel", url.Values{"reason": {"x"}}).Want(http.StatusNotFound)
}

// rescheduleWithVersions: a move with a stale version, without a reason
// or onto the taken time changes nothing; with the current one it moves.
func rescheduleWithVersions(t *testing.T, a *app, admin *client, c clinic, taken time.Time) {
	sp := c.Specialists[0]
	mv := a.phoneBook(t, admin, c, sp.ID, c.Next(time.Thursday, 9, 0), "Move Me", "move@example.org", "")
	to := mv.Start.Add(3 * time.Hour).In(c.Loc).Format("2006-01-02T15:04")
	before := a.auditCount(t, c.ID)
	r := admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "version": {strconv.Itoa(int(mv.Version) + 1)}, "reason": {"x"}})
	if r.Status != http.StatusPreconditionFailed && r.Status != http.StatusConflict {
		t.Fatalf("stale reschedule: %d", r.Status)
	}
	if msg := r.Text(`[data-testid="calendar-error"]`); !strings.Contains(msg, "changed since you loaded it") {
		t.Errorf("stale reschedule message %q", msg)
	}
	if b := a.booking(t, mv.ID); b.Status != booking.StatusConfirmed || !b.Start.Equal(mv.Start) || b.Version != mv.Version {
		t.Errorf("the stale reschedule changed the booking: %+v", b)
	}
	if n := a.auditCount(t, c.ID); n != before {
		t.Errorf("wrote %d rows", n-before)
	}
	// Without a reason: refused too.
	admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "version": {strconv.Itoa(int(mv.Version))}}).Want(http.StatusBadRequest)
	// Onto a taken time: refused, nothing changes.
	r = admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {taken.Format("2006-01-02T15:04")}, "version": {strconv.Itoa(int(mv.Version))}, "reason": {"x"}}).Want(http.StatusConflict)
	if b := a.booking(t, mv.ID); b.Status != booking.StatusConfirmed {
		t.Errorf("a refused move changed the booking: %+v", b)
	}
	// With the current version it moves.
	r = admin.Post("/staff/bookings/"+mv.ID.String()+"/reschedule", url.Values{"start": {to}, "version": {strconv.Itoa(int(mv.Version))}, "reason": {"doctor is late"}}).Want(http.StatusOK)
	if !strings.Contains(r.Text(`p.notice`), "Moved to") {
		t.Errorf("notice %q", r.Text(`p.notice`))
	}
	if b := a.booking(t, mv.ID); b.Status != booking.StatusRescheduled {
		t.Errorf("old booking status %s", b.Status)
	}
	row := a.lastAudit(t, c.ID)
	if row.Action != "booking.reschedule" || row.Reason != "doctor is late" || row.Actor != c.Admin.Actor() {
		t.Errorf("audit: %s %q %s", row.Action, row.Reason, row.Actor)
	}
}

// The calendar's stream sends whole day blocks, and a booking made
// elsewhere arrives in its day without a reload.
func TestStaffCalendarStream(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	start := c.Next(time.Wednesday, 15, 0)
	date := start.Format(time.DateOnly)

	s := dialSSE(t, admin.hc, a.URL+"/staff/live?date="+date+"&view=day")
	first, _ := s.until(20*time.Second, "the first day block", func(e sseEvent) bool { return e.Name != "" })
	if first.Name != "cal-"+date || !strings.Contains(first.Data(), `id="cal-`+date+`"`) || strings.Contains(first.Data(), "Stream Patient") {
		t.Fatalf("first event %q: %s", first.Name, clip(first.Data(), 300))
	}
	// A patient books through the API.
	h := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, start, "stream-client")
	a.bookFor(t, c.Types[0].ID, h, "stream-client", map[string]string{"name": "Stream Patient", "email": "stream@example.org"})
	ev, _ := s.until(20*time.Second, "the day block with the booking", func(e sseEvent) bool {
		return e.Name == "cal-"+date && strings.Contains(e.Data(), "Stream Patient")
	})
	if !strings.Contains(ev.Data(), `data-testid="entry-booking"`) {
		t.Errorf("the booking arrives but not as an entry: %s", clip(ev.Data(), 400))
	}
	checkLiveForms(t, ev.Data())
}

// Forms in the calendar's live day blocks carry the viewer's own CSRF
// token: the live view is shared, the token is not.
func TestStaffLiveCalendarFormsCarryTheViewersCSRFToken(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	start := c.Next(time.Wednesday, 11, 0)
	date := start.Format(time.DateOnly)
	admin := a.signIn(t, c.Admin)
	nurse := a.signIn(t, c.Staff)
	a.phoneBook(t, admin, c, c.Specialists[0].ID, start, "Live Form Patient", "live@example.org", "")

	for _, cl := range []*client{admin, nurse} {
		s := dialSSE(t, cl.hc, a.URL+"/staff/live?view=day&date="+date)
		ev, _ := s.until(evWait, "the day block", func(e sseEvent) bool { return e.Name == "cal-"+date })
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(ev.Data()))
		if err != nil {
			t.Fatal(err)
		}
		fields := doc.Find(`form[method="post"] input[name="_csrf"]`)
		if fields.Length() == 0 {
			t.Fatalf("the day block has no post form with a _csrf field: %s", clip(ev.Data(), 500))
		}
		fields.Each(func(_ int, in *goquery.Selection) {
			if v, _ := in.Attr("value"); v != cl.CSRF {
				t.Errorf("a live form's _csrf is %q, want the viewer's token %q", v, cl.CSRF)
			}
		})
		// And the form works as it arrived.
		f := formOf(t, doc.Find(`form[method="post"]`), "a live form")
		if !f.Values.Has("_csrf") {
			t.Fatal("no _csrf value in the form")
		}
		s.cancel()
	}
}

// checkLiveForms fails for a form in a live calendar fragment that
// would post without the session's CSRF token: a plain form (not hx-post)
// sends only its fields, so its _csrf field must hold the token.
func checkLiveForms(t *testing.T, fragment string) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(fragment))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find("form").Each(func(_ int, f *goquery.Selection) {
		method, _ := f.Attr("method")
		if !strings.EqualFold(method, "post") {
			return
		}
		if _, hx := f.Attr("hx-post"); hx {
			return
		}
		if _, boosted := f.Attr("hx-boost"); boosted {
			return
		}
		action, _ := f.Attr("action")
		tok, _ := f.Find(`input[name="_csrf"]`).Attr("value")
		if tok == "" {
			t.Errorf("the live calendar block's form %s posts as a plain form with an empty _csrf field: after the stream swaps the block in, "+
				"submitting it is refused with 403 (hx-headers on the frame only applies to htmx requests)", action)
		}
	})
}
