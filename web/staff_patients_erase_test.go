package web_test

// Erasure end to end: a patient with bookings past and future, e-mails
// sent and queued, a waitlist place, a lookup, a booking form's draft,
// a stored idempotent answer, audit rows and Redis keys, all made through
// the real paths, then erased by an admin from the Patients page: the
// whole database (pg_dump, bytes decoded) and all of Redis hold no trace
// of them; another patient is untouched; the freed times are bookable;
// and a backup taken before, restored, gets the erasure again from the
// ledger.

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
)

// erasePatient is the patient of an erasure test, and how they may be
// found written anywhere.
type erasePatient struct {
	booking.Patient
	PhoneTyped2 string // another spelling of the number
}

func newErasePatient(t testing.TB, first string) erasePatient {
	t.Helper()
	n, err := rand.Int(rand.Reader, big.NewInt(900000))
	if err != nil {
		t.Fatal(err)
	}
	digits := fmt.Sprintf("%06d", n.Int64()+100000)
	letters := strings.Map(func(r rune) rune { return 'a' + (r - '0') }, digits)
	return erasePatient{
		Patient:     booking.Patient{Name: first + " Quarz" + letters, Email: strings.ToLower(first) + ".quarz" + digits + "@example.org", Phone: "030 5" + digits},
		PhoneTyped2: "+49 30 5" + digits,
	}
}

// needles are the patient's details in every spelling the test used.
func (p erasePatient) needles() []string {
	key := "+49305" + strings.TrimPrefix(p.Phone, "030 5")
	return []string{p.Name, p.Email, p.Phone, p.PhoneTyped2, key}
}

// eraseScenario is what the patient did, for the checks.
type eraseScenario struct {
	apiStart, phoneStart time.Time // the two future bookings, type 0
	apiSpecialist        uuid.UUID
	phoneSpecialist      uuid.UUID
}

// actAsPatient makes everything the patient leaves behind, through the
// API, the pages and the front desk.
func actAsPatient(t *testing.T, a *app, c clinic, p erasePatient, admin *client) eraseScenario {
	t.Helper()
	s := eraseScenario{
		apiStart: c.Next(time.Tuesday, 10, 0), apiSpecialist: c.Specialists[0].ID,
		phoneStart: c.Next(time.Wednesday, 11, 0), phoneSpecialist: c.Specialists[1].ID,
	}
	// Online through the API, with an Idempotency-Key: a stored answer,
	// the client's cooldown keys, a confirmation and a reminder.
	client := clientID()
	h := a.holdOf(t, c.Types[0].ID, s.apiSpecialist, s.apiStart, client)
	a.bookFor(t, c.Types[0].ID, h, client, p.Patient, "Idempotency-Key", uuid.NewString())
	// By phone at the front desk, the address spelled otherwise.
	a.phoneBook(t, admin, c, s.phoneSpecialist, s.phoneStart, p.Name, strings.ToUpper(p.Email), p.PhoneTyped2)
	// One in the past, seen.
	past := a.bookAs(t, c, c.Types[1], c.Specialists[0].ID, c.Next(time.Thursday, 14, 0), p.Patient)
	if _, err := a.Pool.Exec(context.Background(), `UPDATE bookings SET slot_start = slot_start - interval '21 days',
		slot_end = slot_end - interval '21 days', created_at = created_at - interval '30 days', attendance = 'completed'
		WHERE id = $1`, past.Booking.ID); err != nil {
		t.Fatal(err)
	}
	// A waitlist place, a lookup, a draft kept by a confirm that failed,
	// and a hold of the patient's browser.
	cl := a.newClient(t)
	from := c.Monday(9, 0).AddDate(0, 0, 7)
	pwJoinNoJS(t, cl, c, c.Types[1], pwValues(c, p.Name, p.Email, from, from.AddDate(0, 0, 14)))
	cl.Post(findPath(c), url.Values{"email": {p.Email}}).Want(http.StatusOK)
	r := cl.Post(c.BookPath(c.Types[1])+"/confirm", url.Values{"name": {p.Name}, "email": {p.Email}, "phone": {p.Phone},
		"holdId": {"h" + strings.Repeat("0", 52)}, "start": {rfc(s.apiStart)}})
	if r.Status < 400 {
		t.Fatalf("a confirm without a hold: %d", r.Status)
	}
	a.holdOf(t, c.Types[1].ID, c.Specialists[1].ID, c.Next(time.Friday, 15, 0), client)
	return s
}

func TestErasureLeavesNoTrace(t *testing.T) {
	t.Parallel()
	dbURL, pool := migratedDB(t)
	ledger := filepath.Join(t.TempDir(), "erasures.ledger")
	a := newApp(t, withPool(pool), withOptions(program.Options{ErasureLedger: ledger,
		Mail: program.MailOptions{Workers: 2, Retry: fastRetry, Queue: ownQueue()}}))
	c := a.patientClinic(t)
	admin := a.signIn(t, c.Admin)
	p, other := newErasePatient(t, "Erika"), newErasePatient(t, "Otto")
	s := actAsPatient(t, a, c, p, admin)
	a.bookAs(t, c, c.Types[0], c.Specialists[0].ID, c.Next(time.Friday, 9, 0), other.Patient)
	pwJoinNoJS(t, a.newClient(t), c, c.Types[1], pwValues(c, other.Name, other.Email, c.Monday(9, 0), c.Monday(9, 0).AddDate(0, 0, 10)))
	waitBacklogEmpty(t, a)

	if found := traces(dataText(t, dbURL), p.needles()...); len(found) < 3 {
		t.Fatalf("before the erasure the dump shows only %v: the search is blind", found)
	}
	backup := pgDump(t, dbURL, "--format=custom")
	otherBefore := patientRows(t, a, other)

	page := admin.Get("/staff/patients?email=" + url.QueryEscape(p.Email)).Want(http.StatusOK)
	for id, want := range map[string]int{"patients-bookings": 3, "patients-places": 1} {
		if got := page.Doc().Find(`[data-testid="` + id + `"] tbody tr`).Length(); got != want {
			t.Errorf("%s: %d rows, want %d", id, got, want)
		}
	}
	if got := page.Doc().Find(`[data-testid="patients-messages"] tbody tr`).Length(); got < 5 {
		t.Errorf("%d e-mails shown, want the confirmations, reminders, the place's and the lookup", got)
	}
	if got := page.Text(`[data-testid="patients-drafts"]`); !strings.HasSuffix(got, ": 1") {
		t.Errorf("drafts: %q", got)
	}
	f := page.Form(`[data-testid="patients-erase"]`)
	f.Values.Set("confirm", strings.ToUpper(p.Email))
	done := admin.Post(f.Action, f.Values).Want(http.StatusOK)
	if got := done.Text(`[data-testid="patients-notice"]`); !strings.Contains(got, "3 bookings (2 future ones cancelled") {
		t.Fatalf("notice: %q", got)
	}
	waitBacklogEmpty(t, a)

	wantNoTrace(t, "the database", dataText(t, dbURL), p.needles()...)
	wantNoTrace(t, "Redis", redisText(t, a.RDB), p.needles()...)
	if got := patientRows(t, a, other); got != otherBefore {
		t.Errorf("the other patient's rows changed:\n%s\nwas\n%s", got, otherBefore)
	}
	wantErasureAudited(t, a, c)
	// The freed times are anyone's.
	third := newErasePatient(t, "Tina")
	a.bookAs(t, c, c.Types[0], s.apiSpecialist, s.apiStart, third.Patient)
	a.bookAs(t, c, c.Types[0], s.phoneSpecialist, s.phoneStart, third.Patient)
	if r := admin.Get("/staff/patients?email=" + url.QueryEscape(p.Email)).Want(http.StatusOK); r.Doc().Find(`[data-testid="patients-none"]`).Length() != 1 {
		t.Error("the erased patient is still found")
	}

	t.Run("RestoredBackupIsErasedAgainAtStart", func(t *testing.T) {
		url2, pool2 := restored(t, backup)
		if len(traces(dataText(t, url2), p.needles()...)) == 0 {
			t.Fatal("the restored backup holds nothing of the patient")
		}
		a2 := newApp(t, withPool(pool2), withOptions(program.Options{ErasureLedger: ledger, Mail: program.MailOptions{Queue: ownQueue()}}))
		r, err := a2.Deps.Privacy.Replay(context.Background(), false)
		if err != nil || r.Checked != 1 || r.Matched != 1 || r.Erased.Bookings != 3 {
			t.Fatalf("replay: %+v, %v", r, err)
		}
		wantNoTrace(t, "the restored database", dataText(t, url2), p.needles()...)
		if r, err := a2.Deps.Privacy.Replay(context.Background(), false); err != nil || r.Checked != 0 {
			t.Errorf("a second start: %+v, %v, want nothing to check", r, err)
		}
	})
	t.Run("ReplayKeepsWhatCameAfter", func(t *testing.T) {
		back := a.bookAs(t, c, c.Types[1], c.Specialists[1].ID, c.Next(time.Monday, 15, 0), p.Patient)
		if _, err := a.Deps.Privacy.Replay(context.Background(), true); err != nil {
			t.Fatal(err)
		}
		if got := a.booking(t, back.Booking.ID); got.Patient.Name != p.Name {
			t.Errorf("the patient's booking after the erasure is now %q", got.Patient.Name)
		}
	})
}

// patientRows are q's bookings, places and messages as JSON, for a
// comparison.
func patientRows(t testing.TB, a *app, q erasePatient) string {
	t.Helper()
	var out string
	err := a.Pool.QueryRow(context.Background(), `SELECT concat_ws(E'\n',
		(SELECT string_agg(to_jsonb(b)::text, E'\n' ORDER BY b.id) FROM bookings b WHERE b.patient_email = $1),
		(SELECT string_agg(to_jsonb(w)::text, E'\n' ORDER BY w.id) FROM waitlist_entries w WHERE w.patient_email = $1),
		(SELECT string_agg(m.id || ' ' || m.kind || ' ' || m.status, E'\n' ORDER BY m.id) FROM messages m WHERE m.recipient = $1),
		(SELECT string_agg(a.id || ' ' || coalesce(a.after::text, ''), E'\n' ORDER BY a.id) FROM audit_log a
		 WHERE a.entity_id IN (SELECT id::text FROM bookings WHERE patient_email = $1)))`, q.Email).Scan(&out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, q.Name) {
		t.Fatalf("no rows of %s", q.Name)
	}
	return out
}

// wantErasureAudited wants exactly one audit row "patient.erase", by the
// admin, with counts and nothing else.
func wantErasureAudited(t testing.TB, a *app, c clinic) {
	t.Helper()
	var n int
	var actor, after string
	err := a.Pool.QueryRow(context.Background(), `SELECT count(*) OVER (), actor, after::text FROM audit_log
		WHERE clinic_id = $1 AND action = 'patient.erase'`, c.ID).Scan(&n, &actor, &after)
	if err != nil || n != 1 || actor != c.Admin.Actor() || !strings.Contains(after, `"cancelled": 2`) {
		t.Errorf("the erasure's audit: %d rows, %q, %s, %v", n, actor, after, err)
	}
}
