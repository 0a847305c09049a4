package web_test

// Tests of a patient's data export: the JSON and the page hold every
// booking (moved, cancelled, by phone), every e-mail with its kept text,
// the waitlist place and the audit entries of one patient, found by any
// spelling of their address or number, and nothing of another patient
// who shares their times, specialist, a moved booking's freed time or
// the lookups; each export is audited without the patient's details.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// exportWorld is a clinic where two patients' data lie side by side.
type exportWorld struct {
	a     *app
	c     clinic
	admin *client
	// The patient exported, and the other one.
	me, other booking.Patient
	digits    string // the end of both patients' numbers
	// The exported patient's bookings: kept, moved (old and new),
	// cancelled, and one booked with another address and the same number
	// in another spelling.
	kept, movedOld, movedNew, cancelled, byPhone uuid.UUID
	myPlace                                      uuid.UUID
	// Ids of the other patient's rows, which no export of mine may name.
	theirs []string
}

// newExportWorld books, moves, cancels and mails for both patients and
// waits until every e-mail that goes at once is kept.
func newExportWorld(t *testing.T) *exportWorld {
	t.Helper()
	a := keepingApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	ctx := context.Background()
	tag := strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	digits := fmt.Sprintf("%04d", rand.IntN(10000))
	w := &exportWorld{a: a, c: c, digits: digits,
		me:    booking.Patient{Name: "Ada Exportwell", Email: "ada-" + tag + "@example.org", Phone: "+49 30 555" + digits},
		other: booking.Patient{Name: "Otto Otherperson", Email: "otto-" + tag + "@example.org", Phone: "+49 40 777" + digits},
	}
	typ, sp0, sp1 := c.Type0(), c.Specialists[0].ID, c.Specialists[1].ID
	admin := c.Admin.Actor()
	book := func(sp uuid.UUID, start time.Time, p booking.Patient) uuid.UUID {
		req := deskBooking(c, typ, sp, start, p)
		req.Actor = admin
		conf, err := a.Deps.Bookings.Book(ctx, req)
		if err != nil {
			t.Fatalf("book %s: %v", p.Name, err)
		}
		return conf.Booking.ID
	}
	tue := c.Next(time.Tuesday, 10, 0)
	// The other patient waits for Tuesday: the time my move frees is
	// offered to them.
	theirPlace := exportJoin(t, a, c, w.other, tue)
	w.myPlace = exportJoin(t, a, c, w.me, c.Next(time.Wednesday, 9, 0), waitlist.Morning)

	w.kept = book(sp0, c.Next(time.Monday, 9, 0), w.me)
	w.movedOld = book(sp0, tue, w.me)
	w.cancelled = book(sp0, c.Next(time.Wednesday, 9, 0), w.me)
	w.byPhone = book(sp1, c.Next(time.Friday, 9, 0), booking.Patient{Name: "Ada E.", Email: "ada-work-" + tag + "@example.net", Phone: "030 555" + digits})
	exportSent(t, a, c)

	moved, err := a.Deps.Bookings.Reschedule(ctx, booking.RescheduleRequest{BookingID: w.movedOld, Start: tue.Add(time.Hour), Actor: admin, Reason: "specialist late"})
	if err != nil {
		t.Fatal(err)
	}
	w.movedNew = moved.ID
	if _, _, err := a.Deps.Bookings.Cancel(ctx, booking.CancelRequest{BookingID: w.cancelled, Actor: admin, Reason: "patient is ill"}); err != nil {
		t.Fatal(err)
	}
	var opening, theirOffer uuid.UUID
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_openings WHERE clinic_id = $1 AND slot_start = $2`, c.ID, tue).Scan(&opening); err != nil {
		t.Fatalf("no opening of the time the move freed: %v", err)
	}
	pwStep(t, a, opening)
	if err := a.Pool.QueryRow(ctx, `SELECT id FROM waitlist_offers WHERE entry_id = $1`, theirPlace).Scan(&theirOffer); err != nil {
		t.Fatalf("the freed time is not offered to the other patient: %v", err)
	}
	// Booked after the offer: a patient who booked the type is passed over.
	theirSameTime := book(sp1, c.Next(time.Monday, 9, 0), w.other)
	theirSameSpecialist := book(sp0, c.Next(time.Thursday, 9, 0), w.other)
	// Each asks for the list of their bookings; mine under another spelling.
	if err := a.Deps.Outbox.RequestLookup(ctx, c.ID, strings.ToUpper(w.me.Email), "en"); err != nil {
		t.Fatal(err)
	}
	if err := a.Deps.Outbox.RequestLookup(ctx, c.ID, w.other.Email, "en"); err != nil {
		t.Fatal(err)
	}
	exportSent(t, a, c)

	w.theirs = []string{theirSameTime.String(), theirSameSpecialist.String(), theirPlace.String(), theirOffer.String()}
	rows, err := a.Pool.Query(ctx, `SELECT id::text FROM messages WHERE clinic_id = $1 AND (lower(recipient) = $2 OR entry_id = $3)`,
		c.ID, strings.ToLower(w.other.Email), theirPlace)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		w.theirs = append(w.theirs, id)
	}
	if len(w.theirs) < 8 {
		t.Fatalf("the other patient has %d rows, want their bookings, place, offer and e-mails", len(w.theirs))
	}
	w.admin = a.signIn(t, c.Admin)
	return w
}

// exportJoin puts p on the waitlist for start's day, confirmed.
func exportJoin(t *testing.T, a *app, c clinic, p booking.Patient, day time.Time, times ...string) uuid.UUID {
	t.Helper()
	e, _, err := a.Deps.Waitlist.Join(context.Background(), waitlist.JoinRequest{
		ClinicID: c.ID, AppointmentTypeID: c.Type0().ID, From: pwDay(c, day), To: pwDay(c, day), Times: times,
		Patient: p, ClientID: "c-" + uuid.NewString(), Language: "en",
	})
	if err != nil {
		t.Fatalf("join %s: %v", p.Name, err)
	}
	pwConfirm(t, a, c, e.ID)
	return e.ID
}

// exportSent waits until the clinic has no e-mail waiting to go now.
func exportSent(t *testing.T, a *app, c clinic) {
	t.Helper()
	testkit.WaitFor(t, mailWait, "the e-mails sent", func() bool {
		var n int
		err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages
			WHERE clinic_id = $1 AND status IN ('queued', 'sending', 'retrying') AND send_at <= now()`, c.ID).Scan(&n)
		return err == nil && n == 0
	})
}

// exportPath is the export's address for these query values.
func exportPath(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return "/staff/patients/export?" + q.Encode()
}

// wantNothingOf fails when body holds any detail or row id of the other
// patient.
func (w *exportWorld) wantNothingOf(t *testing.T, what, body string) {
	t.Helper()
	lower := strings.ToLower(body)
	for _, s := range append([]string{w.other.Name, w.other.Email, w.other.Phone, "otto", "Otherperson"}, w.theirs...) {
		if strings.Contains(lower, strings.ToLower(s)) {
			t.Errorf("%s holds %q of the other patient", what, s)
		}
	}
}

func (w *exportWorld) jsonExport(t *testing.T, kv ...string) (privacy.Export, string) {
	t.Helper()
	r := w.admin.Get(exportPath(append(kv, "format", "json")...)).Want(http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="patient-export-`) || !strings.HasSuffix(cd, `.json"`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	var x privacy.Export
	if err := json.Unmarshal([]byte(r.Body), &x); err != nil {
		t.Fatalf("the export is no JSON: %v\n%s", err, clip(r.Body, 500))
	}
	return x, r.Body
}

func bookingIDs(x privacy.Export) []uuid.UUID {
	var ids []uuid.UUID
	for _, b := range x.Bookings {
		ids = append(ids, b.ID)
	}
	return ids
}

func TestPatientExportHoldsThePatientAndNobodyElse(t *testing.T) {
	t.Parallel()
	w := newExportWorld(t)
	spelled := strings.Replace(strings.ToUpper(w.me.Email), "@", "+clinic@", 1)
	x, body := w.jsonExport(t, "email", spelled)
	w.wantNothingOf(t, "the JSON", body)
	for _, key := range []string{`"format"`, `"exportedAt"`, `"clinic"`, `"bookings"`, `"startUtc"`, `"emails"`, `"waitlistPlaces"`, `"auditEntries"`} {
		if !strings.Contains(body, key) {
			t.Errorf("the JSON has no %s", key)
		}
	}
	want := []uuid.UUID{w.kept, w.movedOld, w.movedNew, w.cancelled}
	if got := bookingIDs(x); !sameIDs(got, want) {
		t.Fatalf("bookings %v, want %v", got, want)
	}
	t.Run("Bookings", func(t *testing.T) { w.wantBookings(t, x) })
	t.Run("Emails", func(t *testing.T) { w.wantEmails(t, x) })
	t.Run("Waitlist", func(t *testing.T) {
		if len(x.Waitlist) != 1 || x.Waitlist[0].ID != w.myPlace || x.Waitlist[0].Patient.Email != w.me.Email ||
			!slices.Equal(x.Waitlist[0].PartsOfDay, []string{waitlist.Morning}) || x.Waitlist[0].ConfirmedAt == nil {
			t.Errorf("waitlist places %+v", x.Waitlist)
		}
	})
	t.Run("Audit", func(t *testing.T) { w.wantAudit(t, x) })
	t.Run("Clinic", func(t *testing.T) {
		if x.Format != privacy.ExportFormat || x.Clinic.Name == "" || x.Clinic.TimeZone != w.c.Loc.String() ||
			time.Since(x.ExportedAt) > time.Minute || x.ExportedBy.Kind != "staff" || x.ExportedBy.Role != staff.RoleAdmin {
			t.Errorf("export %s by %+v at %s of %+v", x.Format, x.ExportedBy, x.ExportedAt, x.Clinic)
		}
	})
	t.Run("Page", func(t *testing.T) {
		r := w.admin.Get(exportPath("email", spelled)).Want(http.StatusOK)
		w.wantNothingOf(t, "the page", r.Body)
		doc := r.Doc()
		if n := doc.Find(`[data-testid="export-booking"]`).Length(); n != 4 {
			t.Errorf("the page shows %d bookings", n)
		}
		if n := doc.Find(`[data-testid="export-email"]`).Length(); n != len(x.Emails) {
			t.Errorf("the page shows %d e-mails, the JSON %d", n, len(x.Emails))
		}
		if !strings.Contains(r.Text(`[data-testid="patient-export"]`), w.me.Name) || !strings.Contains(r.Text(`[data-testid="export-audit"]`), "Test admin (admin)") {
			t.Errorf("the page: %s", clip(r.Text("main"), 1500))
		}
		if href, _ := doc.Find(`[data-testid="export-json"]`).Attr("href"); !strings.Contains(href, "format=json") {
			t.Errorf("the JSON link %q", href)
		}
	})
	t.Run("ByPhoneAlone", func(t *testing.T) {
		x, body := w.jsonExport(t, "phone", "0049 (0)30 555-"+w.digits)
		w.wantNothingOf(t, "the export by phone", body)
		want := []uuid.UUID{w.kept, w.movedOld, w.movedNew, w.cancelled, w.byPhone}
		if got := bookingIDs(x); !sameIDs(got, want) {
			t.Errorf("bookings by phone %v, want %v", got, want)
		}
	})
	t.Run("Audited", func(t *testing.T) {
		row := w.a.lastAudit(t, w.c.ID)
		if row.Action != privacy.ActionExport || row.Actor != w.c.Admin.Actor() || row.Entity != "export" {
			t.Fatalf("the newest audit row: %s by %s on %s", row.Action, row.Actor, row.Entity)
		}
		var n privacy.Counts
		if err := json.Unmarshal(row.After, &n); err != nil || n.Bookings != 5 || n.Emails == 0 {
			t.Errorf("the export's counts %s: %v", row.After, err)
		}
		all := strings.ToLower(row.EntityID + string(row.Before) + string(row.After) + row.Reason)
		for _, s := range []string{w.me.Name, w.me.Email, "ada-", "555", "exportwell"} {
			if strings.Contains(all, strings.ToLower(s)) {
				t.Errorf("the export's audit row holds %q", s)
			}
		}
	})
}

func (w *exportWorld) wantBookings(t *testing.T, x privacy.Export) {
	byID := map[uuid.UUID]privacy.ExportBooking{}
	for _, b := range x.Bookings {
		byID[b.ID] = b
		if b.Patient.Name != w.me.Name || b.Patient.Email != w.me.Email || b.AppointmentType != w.c.Type0().Name || b.Specialist == "" {
			t.Errorf("booking %s: %+v", b.ID, b)
		}
		start, err := time.Parse(time.RFC3339, b.Time.Start)
		if err != nil || !start.Equal(b.Time.StartUTC) || b.Time.StartUTC.Location() != time.UTC {
			t.Errorf("booking %s at %q and %s UTC: %v", b.ID, b.Time.Start, b.Time.StartUTC, err)
		}
		if _, off := start.Zone(); off != func() int { _, o := b.Time.StartUTC.In(w.c.Loc).Zone(); return o }() {
			t.Errorf("booking %s: %q is not in the clinic's zone", b.ID, b.Time.Start)
		}
	}
	old, nb, cx := byID[w.movedOld], byID[w.movedNew], byID[w.cancelled]
	if old.Status != booking.StatusRescheduled || old.MovedTo == nil || *old.MovedTo != w.movedNew || nb.MovedFrom == nil || *nb.MovedFrom != w.movedOld {
		t.Errorf("the move: old %+v, new %+v", old, nb)
	}
	if cx.Status != booking.StatusCancelled || cx.CancelledAt == nil || cx.CancelReason != "patient is ill" {
		t.Errorf("the cancelled booking: %+v", cx)
	}
}

func (w *exportWorld) wantEmails(t *testing.T, x privacy.Export) {
	kinds := map[string]int{}
	for _, m := range x.Emails {
		kinds[m.Kind]++
		switch {
		case m.Status == "sent" && (m.Text == nil || m.Subject == nil || *m.Subject == ""):
			t.Errorf("sent e-mail %s (%s) without its kept text", m.ID, m.Kind)
		case m.Status == "queued" && m.Text != nil:
			t.Errorf("queued e-mail %s (%s) with a text", m.ID, m.Kind)
		}
		if m.BookingID == nil && m.WaitlistPlaceID == nil && m.Kind != "lookup" {
			t.Errorf("e-mail %s (%s) about nothing of the patient's", m.ID, m.Kind)
		}
	}
	// Reminders are written for the bookings whose reminder time is ahead
	// (not tomorrow's, on some days): not counted.
	for kind, n := range map[string]int{"confirmation": 3, "change": 1, "cancellation": 1, "lookup": 1, "waitlist_joined": 1} {
		if kinds[kind] != n {
			t.Errorf("%d e-mails of kind %s, want %d (all: %v)", kinds[kind], kind, n, kinds)
		}
	}
	for _, m := range x.Emails {
		if m.Kind == "confirmation" && m.Text != nil && *m.BookingID == w.kept && !strings.Contains(*m.Text, w.me.Name) {
			t.Errorf("the confirmation's text does not name the patient:\n%s", *m.Text)
		}
		if m.Kind == "change" && (m.Text == nil || !strings.Contains(*m.Text, "specialist late")) {
			t.Errorf("the change notice's text lacks the staff's reason: %v", m.Text)
		}
	}
}

func (w *exportWorld) wantAudit(t *testing.T, x privacy.Export) {
	actions := map[string]int{}
	for _, e := range x.Audit {
		actions[e.Action]++
		if strings.HasPrefix(e.Action, "booking.") && (e.By.Kind != "staff" || e.By.Name != "Test admin" || e.By.Role != staff.RoleAdmin) {
			t.Errorf("%s by %+v, want the admin by name and role", e.Action, e.By)
		}
	}
	// A move is one entry about the booking it moved; the booking it
	// became has no entry of its own.
	for action, n := range map[string]int{"booking.create": 3, "booking.reschedule": 1, "booking.cancel": 1, "waitlist.join": 1, "waitlist.confirm": 1} {
		if actions[action] != n {
			t.Errorf("%d audit entries %s, want %d (all: %v)", actions[action], action, n, actions)
		}
	}
	for _, e := range x.Audit {
		if e.Action == "booking.cancel" && e.Reason != "patient is ill" {
			t.Errorf("the cancel's reason %q", e.Reason)
		}
	}
}

func sameIDs(got, want []uuid.UUID) bool {
	a, b := slices.Clone(got), slices.Clone(want)
	cmp := func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) }
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}
