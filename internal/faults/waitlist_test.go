package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/testkit"
)

// A time freed while a patient waits is held for them, offered, and the
// offer e-mailed. The instance that made the offer is SIGKILLed while the
// mail server refuses every message, before the offer's e-mail got
// through: once the mail server is back, another instance sends that
// e-mail, exactly once, and the time stays held for the offer.
func TestWaitlistKilledBeforeOfferMailSendsOnce(t *testing.T) {
	t.Parallel()
	smtp := testkit.SMTP(t)
	smtp.RefuseNext(1<<30, 451, "4.3.2 out of service") // the outage
	// A refused e-mail waits 5 s for its retry: time to see it waiting,
	// and to kill the instance while no attempt is under way.
	f := newWaitlistFixture(t, smtp, map[string]string{"MAIL_RETRY_SECONDS": "5"})
	victim := startServer(t, "victim", f.env)
	client := newClient()

	id, token := f.book(t, client, victim)
	f.join(t, client, victim)
	f.cancel(t, client, victim, id, token)
	cancelled := time.Now()
	// The offer is made (its job done), and the time held for it.
	testkit.WaitFor(t, 30*time.Second, "the offer made", func() bool {
		return count(t, f.pool, `SELECT count(*) FROM waitlist_offers`) == 1 &&
			count(t, f.pool, `SELECT count(*) FROM river_job WHERE kind = 'waitlist_offer' AND state = 'completed'`) == 1
	})
	f.expectHeld(t, client, victim)
	// Its e-mail has been tried, refused, and waits for its retry (no
	// attempt is under way): then the instance dies.
	testkit.WaitFor(t, 30*time.Second, "the offer's e-mail refused and waiting for its retry", func() bool {
		return count(t, f.pool, `SELECT count(*) FROM messages m JOIN river_job j ON j.id = m.job_id
			WHERE m.kind = 'waitlist_offer' AND m.attempts >= 1 AND j.state = 'retryable'
			AND j.scheduled_at > now() + interval '300 milliseconds'`) == 1
	})
	t.Logf("killed %s after the cancellation", time.Since(cancelled).Round(time.Millisecond))
	victim.kill()
	orphans := testkit.Running(t, f.pool) // the victim's, run by nobody now
	if n := len(smtp.Messages()); n != 0 {
		t.Fatalf("%d e-mails got through the outage", n)
	}

	smtp.RefuseNext(0, 0, "") // the mail server is back
	successor := startServer(t, "successor", f.env)
	f.waitOfferMail(t, smtp, 60*time.Second)
	// Counted once no e-mail or offer job is left to run: a second offer
	// e-mail (the step run again by the successor) fails this.
	testkit.Drained(t, f.pool, testkit.Jobs{Kinds: []string{"send_message", "waitlist_offer"}, Orphans: orphans})
	f.checkOneOffer(t, smtp)
	f.expectHeld(t, client, successor)
	checkServerErrors(t, nil, successor)
}

// A time freed while a patient waits: the cancellation commits with the
// time held for the waitlist and the offer's job queued, and the instance
// is SIGKILLed before any worker ran that job (its queue is paused while
// it lives). Until an instance runs again, the hold keeps the time, and
// it ends by itself within the offer's life and a grace minute; once
// another instance runs, it makes the offer and sends its e-mail, exactly
// once, under the same hold.
func TestWaitlistKilledBeforeOfferJobOffersOnce(t *testing.T) {
	t.Parallel()
	smtp := testkit.SMTP(t)
	f := newWaitlistFixture(t, smtp, map[string]string{"WAITLIST_OFFER_MINUTES": "1"})
	const holdLife = time.Minute + time.Minute // the offer's, and the grace minute
	setQueuePaused(t, f.pool, waitlistQueue, true)
	victim := startServer(t, "victim", f.env)
	client := newClient()

	id, token := f.book(t, client, victim)
	f.join(t, client, victim)
	asked := time.Now()
	f.cancel(t, client, victim, id, token)
	answered := time.Now()
	victim.kill()
	orphans := testkit.Running(t, f.pool) // the victim's, run by nobody now

	// The opening and its job are there, the job untouched; no offer.
	var openingID uuid.UUID
	var holdID, queue, state string
	var attempt int
	err := f.pool.QueryRow(ctxTimeout(t, 10*time.Second), `SELECT o.id, o.hold_id, j.queue, j.state, j.attempt
		FROM waitlist_openings o JOIN river_job j ON j.kind = 'waitlist_offer' AND j.args->>'opening_id' = o.id::text
		WHERE o.state = 'open'`).Scan(&openingID, &holdID, &queue, &state, &attempt)
	if err != nil {
		t.Fatalf("no open opening with its job after the kill (the cancellation offered the time to nobody?): %v", err)
	}
	if queue != waitlistQueue || state != "available" || attempt != 0 {
		t.Fatalf("the offer's job is in queue %q, %s after %d attempts; want %q, available, none: the test did not kill before the job ran",
			queue, state, attempt, waitlistQueue)
	}
	if n := count(t, f.pool, `SELECT count(*) FROM waitlist_offers`); n != 0 {
		t.Fatalf("%d offers made before the kill, want none", n)
	}
	// With no instance running, the time is held for the opening, and the
	// hold ends by itself: within its life from the cancellation.
	h := f.heldBy(t)
	if h.HoldID != holdID || h.ClientID != "waitlist:"+openingID.String() {
		t.Fatalf("the time is held by %q (hold %s), want the opening's hold %s", h.ClientID, h.HoldID, holdID)
	}
	if h.ExpiresAt.Before(asked.Add(holdLife-2*time.Second)) || h.ExpiresAt.After(answered.Add(holdLife+2*time.Second)) {
		t.Fatalf("the opening's hold ends %s after the cancellation was answered, want about %s", h.ExpiresAt.Sub(answered), holdLife)
	}

	setQueuePaused(t, f.pool, waitlistQueue, false)
	successor := startServer(t, "successor", f.env)
	f.waitOfferMail(t, smtp, 30*time.Second)
	// As above: a double offer, made by the successor's job and again by
	// the sweep, fails this.
	testkit.Drained(t, f.pool, testkit.Jobs{Kinds: []string{"send_message", "waitlist_offer"}, Orphans: orphans})
	f.checkOneOffer(t, smtp)
	// The offer kept the opening's hold, for the offer and a grace minute.
	var expires time.Time
	if err := f.pool.QueryRow(ctxTimeout(t, 10*time.Second), `SELECT expires_at FROM waitlist_offers`).Scan(&expires); err != nil {
		t.Fatal(err)
	}
	if h := f.heldBy(t); h.HoldID != holdID || h.ExpiresAt.Sub(expires.Add(time.Minute)).Abs() > time.Second {
		t.Errorf("after the offer the time is held by hold %s until %s, want hold %s until the offer's end %s and a minute", h.HoldID, h.ExpiresAt, holdID, expires)
	}
	f.expectHeld(t, client, successor)
	checkServerErrors(t, nil, successor)
}

// waitlistQueue is the job queue the server's waitlist jobs run in: the
// outbox's default queue's work queue.
const waitlistQueue = "mail_work"

// setQueuePaused pauses or resumes a job queue of the database. A queue's
// workers read whether it is paused when they start (and hear of later
// changes), so a queue paused before any server starts never runs a job.
func setQueuePaused(t *testing.T, pool *pgxpool.Pool, queue string, paused bool) {
	t.Helper()
	_, err := pool.Exec(ctxTimeout(t, 10*time.Second), `INSERT INTO river_queue (name, paused_at, updated_at)
		VALUES ($1, CASE WHEN $2 THEN now() END, now())
		ON CONFLICT (name) DO UPDATE SET paused_at = excluded.paused_at, updated_at = now()`, queue, paused)
	if err != nil {
		t.Fatalf("pause queue %s (%v): %v", queue, paused, err)
	}
}

// waitlistFixture is a fresh database with a clinic of one specialist,
// one of whose times a patient booked and another waits for.
type waitlistFixture struct {
	pool    *pgxpool.Pool
	env     map[string]string
	clinic  testkit.Clinic
	typeID  uuid.UUID
	spID    uuid.UUID
	start   time.Time
	waiting string // the waiting patient's address
}

func newWaitlistFixture(t *testing.T, smtp *testkit.SMTPServer, env map[string]string) *waitlistFixture {
	t.Helper()
	url := testkit.FreshDB(t)
	migrate(t, url)
	pool := openPool(t, url)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{
		Specialists: 1,
		Types: []db.AppointmentTypeInsertParams{{
			Name: "Check-up", DurationMin: 10, SlotStepMin: 10, MaxAdvanceDays: 60, MaxHoldsPerClient: 1,
		}},
	})
	f := &waitlistFixture{
		pool: pool, clinic: c, typeID: c.Types[0].ID, spID: c.Specialists[0].ID,
		start: slotStarts(t, c, 10)[0], waiting: "waiting@example.org",
		env: map[string]string{
			"DATABASE_URL": url, "REDIS_URL": testRedisURL(), "SMTP_URL": smtp.URL(),
			"MAIL_FROM": "Clinic <bookings@clinic.test>", "MAIL_RETRY_SECONDS": "1", "DB_MAX_CONNS": "10",
		},
	}
	for k, v := range env {
		f.env[k] = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			logWaitlistRows(t, pool)
		}
	})
	return f
}

// book holds and books the time through the API and returns the
// booking's id and manage token.
func (f *waitlistFixture) book(t *testing.T, client *http.Client, on *server) (id, token string) {
	t.Helper()
	clientID := "booker-" + uuid.NewString()
	hold := holdOn(t, client, on, fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"specialistId":%q,"clientId":%q}`,
		f.typeID, f.start.UTC().Format(time.RFC3339), f.spID, clientID))
	st, b, err := postJSON(client, on.URL+"/v1/appointment-types/"+f.typeID.String()+"/book",
		fmt.Sprintf(`{"holdId":%q,"clientId":%q,"patient":{"name":"Booked Patient","email":"booked@example.org"}}`, hold, clientID))
	if err != nil || st != http.StatusCreated {
		t.Fatalf("book on %s: %d %s %v", on.name, st, b, err)
	}
	var a struct {
		Appointment struct {
			ID string `json:"id"`
		} `json:"appointment"`
		ManageToken string `json:"manageToken"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.Appointment.ID == "" || a.ManageToken == "" {
		t.Fatalf("booking answer without an id or a manage token: %s", b)
	}
	return a.Appointment.ID, a.ManageToken
}

// join puts the waiting patient on the list for the time's day, through
// the API.
func (f *waitlistFixture) join(t *testing.T, client *http.Client, on *server) {
	t.Helper()
	day := f.start.Format(time.DateOnly) // slotStarts are in the clinic's zone
	st, b, err := postJSON(client, on.URL+"/v1/appointment-types/"+f.typeID.String()+"/waitlist",
		fmt.Sprintf(`{"clientId":%q,"from":%q,"to":%q,"patient":{"name":"Waiting Patient","email":%q}}`,
			"waiter-"+uuid.NewString(), day, day, f.waiting))
	if err != nil || st != http.StatusCreated {
		t.Fatalf("join on %s: %d %s %v", on.name, st, b, err)
	}
	f.confirm(t, client, on)
}

// confirm confirms the waiting patient's place as they would, pressing
// Confirm on the page of a link from their e-mail (minted here as the
// outbox mints one: the join's e-mail may be held up by the fault under
// test).
func (f *waitlistFixture) confirm(t *testing.T, client *http.Client, on *server) {
	t.Helper()
	token := "m" + strings.ReplaceAll(uuid.NewString(), "-", "")
	if _, err := f.pool.Exec(ctxTimeout(t, 10*time.Second), `INSERT INTO waitlist_links (token_hash, entry_id, mailed, clinic_id)
		SELECT sha256($1::bytea), id, true, clinic_id FROM waitlist_entries WHERE patient_email = $2 AND state = 'waiting'`,
		[]byte(token), f.waiting); err != nil {
		t.Fatal(err)
	}
	res, err := client.PostForm(on.URL+"/c/"+f.clinic.Slug+"/waitlist/"+token+"/confirm", nil)
	if err != nil {
		t.Fatalf("confirm on %s: %v", on.name, err)
	}
	res.Body.Close()
	if n := count(t, f.pool, `SELECT count(*) FROM waitlist_entries WHERE patient_email = '`+f.waiting+`' AND confirmed_at IS NOT NULL`); n != 1 {
		t.Fatalf("confirm on %s: %d, the place is not confirmed", on.name, res.StatusCode)
	}
}

// cancel cancels the booking through the patients' API.
func (f *waitlistFixture) cancel(t *testing.T, client *http.Client, on *server, id, token string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, on.URL+"/v1/appointments/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("cancel on %s: %v", on.name, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("cancel on %s: %d", on.name, res.StatusCode)
	}
}

// expectHeld: another patient asking for the time is told it is held.
func (f *waitlistFixture) expectHeld(t *testing.T, client *http.Client, on *server) {
	t.Helper()
	st, b, err := postJSON(client, on.URL+"/v1/holds", fmt.Sprintf(`{"appointmentTypeId":%q,"slotStartDate":%q,"specialistId":%q,"clientId":%q}`,
		f.typeID, f.start.UTC().Format(time.RFC3339), f.spID, "other-"+uuid.NewString()))
	if err != nil || st != http.StatusLocked {
		t.Fatalf("the offered time, asked for on %s: want 423, got %d %s %v", on.name, st, b, err)
	}
}

// heldBy is the live hold on the time, read from Redis.
func (f *waitlistFixture) heldBy(t *testing.T) holds.Hold {
	t.Helper()
	h, ok, err := holds.NewStore(testkit.Redis(t), 0, nil).HeldBy(ctxTimeout(t, 5*time.Second), f.clinic.ID, f.typeID, f.spID, f.start)
	if err != nil || !ok {
		t.Fatalf("the time is not held (%v)", err)
	}
	return h
}

// offerMails are the offer e-mails the mail server accepted for the
// waiting patient: theirs, with a link to an offer's page.
func (f *waitlistFixture) offerMails(t *testing.T, smtp *testkit.SMTPServer) int {
	t.Helper()
	n := 0
	for _, r := range smtp.Messages() {
		m := testkit.ParseReceived(t, r)
		if m.To == f.waiting && strings.Contains(m.Text, "/c/"+f.clinic.Slug+"/offer/") {
			n++
		}
	}
	return n
}

func (f *waitlistFixture) waitOfferMail(t *testing.T, smtp *testkit.SMTPServer, within time.Duration) {
	t.Helper()
	began := time.Now()
	deadline := began.Add(within)
	for f.offerMails(t, smtp) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no offer e-mail within %s (%d e-mails accepted, %d attempts)", within, len(smtp.Messages()), smtp.Attempts())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the offer e-mail came %s after the restart", time.Since(began).Round(time.Millisecond))
}

// checkOneOffer: one offer, open, to the waiting patient; one offer
// e-mail, recorded as sent; and the mail server got it once.
func (f *waitlistFixture) checkOneOffer(t *testing.T, smtp *testkit.SMTPServer) {
	t.Helper()
	if n := f.offerMails(t, smtp); n != 1 {
		t.Errorf("%d offer e-mails reached the mail server, want 1", n)
	}
	if n := count(t, f.pool, `SELECT count(*) FROM waitlist_offers`); n != 1 {
		t.Errorf("%d offers, want 1", n)
	}
	if n := count(t, f.pool, `SELECT count(*) FROM waitlist_offers o JOIN waitlist_entries e ON e.id = o.entry_id
		WHERE o.state = 'open' AND e.state = 'offered' AND e.patient_email = '`+f.waiting+`'`); n != 1 {
		t.Errorf("%d open offers to the waiting patient, want 1", n)
	}
	if n := count(t, f.pool, `SELECT count(*) FROM messages WHERE kind = 'waitlist_offer'`); n != 1 {
		t.Errorf("%d offer messages, want 1", n)
	}
	if n := count(t, f.pool, `SELECT count(*) FROM messages WHERE kind = 'waitlist_offer' AND status = 'sent'`); n != 1 {
		t.Errorf("%d offer messages recorded as sent, want 1", n)
	}
}

// logWaitlistRows logs the waitlist's rows and the queue's jobs (no
// patient data), to tell what a failed run left behind.
func logWaitlistRows(t *testing.T, pool *pgxpool.Pool) {
	for _, q := range []string{
		`SELECT json_build_object('entry', id, 'state', state, 'from', from_date, 'to', to_date, 'times', times)::text FROM waitlist_entries`,
		`SELECT json_build_object('opening', id, 'state', state, 'slot', slot_start, 'hold', hold_id)::text FROM waitlist_openings`,
		`SELECT json_build_object('offer', id, 'state', state, 'entry', entry_id, 'expires', expires_at)::text FROM waitlist_offers`,
		`SELECT json_build_object('message', id, 'kind', kind, 'status', status, 'attempts', attempts)::text FROM messages`,
		`SELECT json_build_object('job', id, 'kind', kind, 'queue', queue, 'state', state, 'attempt', attempt, 'args', args)::text FROM river_job`,
		`SELECT json_build_object('booking', id, 'status', status, 'slot', slot_start)::text FROM bookings`,
	} {
		rows, err := pool.Query(ctxTimeout(t, 5*time.Second), q)
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		for rows.Next() {
			var row string
			if err := rows.Scan(&row); err == nil {
				t.Log(row)
			}
		}
		rows.Close()
	}
}
