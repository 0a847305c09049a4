package web_test

// The proof of a patient's e-mail address on the JSON API: the allowance
// of unverified bookings per address, the e-mailed code, its tries and its
// limit per recipient, the token, and the clinic's setting.

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/testkit"
)

// codeWait is how long a test waits for a code's e-mail: it is sent
// during the request, so it is there when the answer is.
const codeWait = 5 * time.Second

// verifyApp is an app whose codes go to a real SMTP server, with the
// server's default allowance of unverified bookings per address (3)
// unless o says otherwise. Its outbox only enqueues.
func verifyApp(t *testing.T, o program.Options) (*app, *testkit.SMTPServer) {
	t.Helper()
	srv := testkit.SMTP(t)
	cfg, err := mail.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	sender, err := mail.NewSMTP(cfg, "Clinic bookings <bookings@example.org>")
	if err != nil {
		t.Fatal(err)
	}
	if o.BookingsPerAddress == 0 {
		o.BookingsPerAddress = 3
	}
	o.Mail = program.MailOptions{Sender: sender, Queue: ownQueue()}
	return newApp(t, withOptions(o)), srv
}

// setVerification sets the clinic's verification setting.
func (a *app) setVerification(t *testing.T, c clinic, mode string) {
	t.Helper()
	if _, err := a.Pool.Exec(context.Background(), `UPDATE clinics SET verification = $1 WHERE id = $2`, mode, c.ID); err != nil {
		t.Fatal(err)
	}
}

var sixDigits = regexp.MustCompile(`\b\d{6}\b`)

// codeSentTo is the code of the last e-mail srv accepted for email, after
// waiting for at least n messages in all.
func codeSentTo(t *testing.T, srv *testkit.SMTPServer, n int, email string) string {
	t.Helper()
	msgs := srv.WaitFor(t, n, codeWait)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := testkit.ParseReceived(t, msgs[i])
		if m.To != email {
			continue
		}
		code := sixDigits.FindString(m.Text)
		if code == "" {
			t.Fatalf("no code in %q", m.Text)
		}
		return code
	}
	t.Fatalf("no e-mail to %s among %d", email, len(msgs))
	return ""
}

// tryBook posts a booking of h for patient, with extra headers.
func (a *app) tryBook(t *testing.T, typeID uuid.UUID, h holdView, client string, patient booking.Patient, hdr ...string) *response {
	t.Helper()
	return a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patient}, hdr...)
}

// invented is a made-up patient of its own e-mail address.
func invented(i int) booking.Patient {
	return booking.Patient{Name: "Invented Person", Email: uniqueEmail(fmt.Sprintf("victim%d", i))}
}

// redeem posts a code for email to POST /v1/verifications.
func (a *app) redeem(t *testing.T, email, code string) *response {
	t.Helper()
	return a.do(t, "POST", "/v1/verifications", map[string]string{"email": email, "code": code})
}

// One address books at most 3 invented patients without a code, however
// many try at once; the rest are asked for a code (428), which is e-mailed
// to each of them.
func TestAllowanceHoldsAtABarrier(t *testing.T) {
	t.Parallel()
	a, srv := verifyApp(t, program.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	const n = 12
	starts := freeStarts(c, n)
	holds, clients, patients := make([]holdView, n), make([]string, n), make([]booking.Patient, n)
	for i := range n {
		clients[i], patients[i] = clientID(), invented(i)
		holds[i] = a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[i], clients[i])
	}
	replies := make([]*response, n)
	testkit.Together(n, func(i int) {
		replies[i] = a.tryBook(t, c.Types[0].ID, holds[i], clients[i], patients[i])
	})
	booked, asked := 0, 0
	for _, r := range replies {
		switch r.Status {
		case http.StatusCreated:
			booked++
		case http.StatusPreconditionRequired:
			e := wantError(t, r, http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
			if e.Error.Details["codeExpiresAt"] == nil {
				t.Fatalf("no codeExpiresAt: %s", r.Body)
			}
			asked++
		default:
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
	}
	if booked != 3 || asked != n-3 {
		t.Fatalf("%d booked and %d asked for a code, want 3 and %d", booked, asked, n-3)
	}
	if got := len(srv.WaitFor(t, n-3, codeWait)); got != n-3 {
		t.Fatalf("%d codes sent, want %d", got, n-3)
	}
	if v := a.metricSum(t, `clinic_verification_steps_total\{step="code_required"\}`); v != n-3 {
		t.Fatalf("code_required counted %v, want %d", v, n-3)
	}
}

// A booking that fails after reserving its place gives it back: the
// allowance counts bookings made, not tried.
func TestAllowanceGivesBackAFailedBooking(t *testing.T) {
	t.Parallel()
	a, _ := verifyApp(t, program.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	starts := freeStarts(c, 5)
	same := invented(0)
	a.bookFor(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[0], "first"), "first", same)
	// The same patient again: the cooldown refuses it after the allowance
	// let it through.
	again := a.tryBook(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[1], "again"), "again", same)
	wantError(t, again, http.StatusTooManyRequests, "COOLDOWN", "")
	for i := 2; i < 4; i++ {
		client := clientID()
		a.bookFor(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[i], client), client, invented(i))
	}
	client := clientID()
	r := a.tryBook(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[4], client), client, invented(4))
	wantError(t, r, http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
}

// The code step over the API: 428 e-mails a code, POST /v1/verifications
// turns it into a token, and the booking sent again with the token in
// Verification-Token is made. The hold waits meanwhile without heartbeats.
// A token is worth nothing for another address.
func TestVerificationCodeStepOverTheAPI(t *testing.T) {
	t.Parallel()
	a, srv := verifyApp(t, program.Options{HoldTTL: 2 * time.Second})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.setVerification(t, c, clinics.VerifyAlways)
	starts := freeStarts(c, 2)
	p := invented(1)
	client := clientID()
	h := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[0], client)

	r := a.tryBook(t, c.Types[0].ID, h, client, p)
	wantError(t, r, http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
	code := codeSentTo(t, srv, 1, p.Email)
	// Asking again while the code lives sends no second one.
	wantError(t, a.tryBook(t, c.Types[0].ID, h, client, p), http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")

	// The hold lives as long as the code, not just the confirm's pin of
	// 30 s, and no longer than its longest life (10 min from its claim).
	live, err := a.Deps.Holds.Active(context.Background(), c.ID)
	if err != nil || len(live) != 1 || live[0].HoldID != h.HoldID {
		t.Fatalf("live holds %+v, %v", live, err)
	}
	if exp := live[0].ExpiresAt; exp.Before(time.Now().Add(9*time.Minute)) || exp.After(live[0].KeepUntil) {
		t.Fatalf("the hold expires at %s (keep until %s): not pinned for the code", exp, live[0].KeepUntil)
	}
	time.Sleep(3 * time.Second) // past the hold's TTL, no heartbeat: the patient reads their mail
	if got := len(srv.Messages()); got != 1 {
		t.Fatalf("%d codes sent, want 1", got)
	}

	wrong := wrongCode(t, code)
	e := wantError(t, a.redeem(t, p.Email, wrong), http.StatusBadRequest, "VERIFICATION_CODE_WRONG", "code")
	if e.Error.Details["triesLeft"] != 4.0 {
		t.Fatalf("after one wrong try: %v", e.Error.Details)
	}
	ok := a.redeem(t, p.Email, code).Want(http.StatusOK)
	var tok struct {
		VerificationToken string `json:"verificationToken"`
		ExpiresAt         string `json:"expiresAt"`
	}
	ok.Decode(&tok)
	if exp, err := time.Parse(time.RFC3339, tok.ExpiresAt); err != nil || tok.VerificationToken == "" || exp.Before(time.Now().Add(29*24*time.Hour)) {
		t.Fatalf("token answer %s", ok.Body)
	}

	// Another patient with this token: ignored, so asked for a code.
	other, otherClient := invented(2), clientID()
	oh := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[1], otherClient)
	wantError(t, a.tryBook(t, c.Types[0].ID, oh, otherClient, other, "Verification-Token", tok.VerificationToken),
		http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")

	// The hold outlived its heartbeats; the token books it.
	if r := a.tryBook(t, c.Types[0].ID, h, client, p, "Verification-Token", tok.VerificationToken); r.Status != http.StatusCreated {
		t.Fatalf("book with the token: %d %s", r.Status, r.Body)
	}
	wantError(t, a.redeem(t, p.Email, code), http.StatusGone, "VERIFICATION_CODE_GONE", "")
}

// A code allows five tries; after them even the right code is refused.
func TestVerificationCodeDiesAfterFiveTries(t *testing.T) {
	t.Parallel()
	a, srv := verifyApp(t, program.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.setVerification(t, c, clinics.VerifyAlways)
	p, client := invented(1), clientID()
	h := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, freeStarts(c, 1)[0], client)
	wantError(t, a.tryBook(t, c.Types[0].ID, h, client, p), http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
	code := codeSentTo(t, srv, 1, p.Email)
	wrong := wrongCode(t, code)
	for left := 4; left >= 0; left-- {
		e := wantError(t, a.redeem(t, p.Email, wrong), http.StatusBadRequest, "VERIFICATION_CODE_WRONG", "code")
		if e.Error.Details["triesLeft"] != float64(left) {
			t.Fatalf("tries left %v, want %d", e.Error.Details["triesLeft"], left)
		}
	}
	wantError(t, a.redeem(t, p.Email, code), http.StatusGone, "VERIFICATION_CODE_GONE", "")
	wantError(t, a.redeem(t, p.Email, "12345"), http.StatusBadRequest, "INVALID_ARGUMENT", "code")
}

// One address is sent at most CODES_PER_RECIPIENT codes an hour; past it
// the booking is 429 with Retry-After, and nothing more is sent.
func TestVerificationCodesPerRecipient(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a, srv := verifyApp(t, program.Options{CodesPerRecipient: 1})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.setVerification(t, c, clinics.VerifyAlways)
	p, client := invented(1), clientID()
	h := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, freeStarts(c, 1)[0], client)
	wantError(t, a.tryBook(t, c.Types[0].ID, h, client, p), http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
	code := codeSentTo(t, srv, 1, p.Email)
	wrong := wrongCode(t, code)
	for range 5 { // the code dies
		a.redeem(t, p.Email, wrong)
	}
	r := a.tryBook(t, c.Types[0].ID, h, client, p)
	wantError(t, r, http.StatusTooManyRequests, "VERIFICATION_CODE_QUOTA", "")
	if s := retryAfter(t, r); s < 1 || s > 3600 {
		t.Fatalf("Retry-After %d", s)
	}
	if got := len(srv.Messages()); got != 1 {
		t.Fatalf("%d codes sent, want 1", got)
	}
}

// A clinic that confirms at once refuses bookings past the allowance with
// 429 and Retry-After, and sends no code.
func TestVerificationNeverRefusesPastTheAllowance(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a, srv := verifyApp(t, program.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.setVerification(t, c, clinics.VerifyNever)
	starts := freeStarts(c, 4)
	for i := range 3 {
		client := clientID()
		a.bookFor(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[i], client), client, invented(i))
	}
	client := clientID()
	r := a.tryBook(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[3], client), client, invented(3))
	wantError(t, r, http.StatusTooManyRequests, "BOOKING_ALLOWANCE", "")
	if s := retryAfter(t, r); s < 1 || s > 3600 {
		t.Fatalf("Retry-After %d", s)
	}
	if got := len(srv.Messages()); got != 0 {
		t.Fatalf("%d e-mails sent, want none", got)
	}
	if v := a.metricSum(t, `clinic_verification_steps_total\{step="allowance_refused"\}`); v != 1 {
		t.Fatalf("allowance_refused counted %v, want 1", v)
	}
}

// A clinic that always asks asks at the first booking; staff bookings
// never ask.
func TestVerificationAlwaysAsksAtTheFirstBooking(t *testing.T) {
	t.Parallel()
	a, srv := verifyApp(t, program.Options{})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.setVerification(t, c, clinics.VerifyAlways)
	starts := freeStarts(c, 2)
	p, client := invented(1), clientID()
	r := a.tryBook(t, c.Types[0].ID, a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, starts[0], client), client, p)
	wantError(t, r, http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
	codeSentTo(t, srv, 1, p.Email)

	staff := invented(2)
	a.phoneBook(t, a.signIn(t, c.Admin), c, c.Specialists[0].ID, starts[1], staff.Name, staff.Email, "")
	if got := len(srv.Messages()); got != 1 {
		t.Fatalf("%d codes sent, want only the online booking's", got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The codes one address network's requests have e-mailed are counted,
// whoever they went to: a script sending one hold back with a new address
// each time gets 429 past CODES_PER_ADDRESS, and nothing more is sent.
func TestVerificationCodesPerAddress(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a, srv := verifyApp(t, program.Options{CodesPerAddress: 3})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.setVerification(t, c, clinics.VerifyAlways)
	client := clientID()
	h := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, freeStarts(c, 1)[0], client)
	for i := range 3 {
		wantError(t, a.tryBook(t, c.Types[0].ID, h, client, invented(i)), http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
	}
	srv.WaitFor(t, 3, codeWait)
	r := a.tryBook(t, c.Types[0].ID, h, client, invented(3))
	wantError(t, r, http.StatusTooManyRequests, "VERIFICATION_CODE_QUOTA", "")
	if s := retryAfter(t, r); s < 1 || s > 3600 {
		t.Fatalf("Retry-After %d", s)
	}
	if got := len(srv.Messages()); got != 3 {
		t.Fatalf("%d codes sent, want 3", got)
	}
}

// The codes one address network types are counted: past
// CODE_GUESSES_PER_ADDRESS a stranger guessing at someone's code is 429,
// and the code's own tries are left for its patient.
func TestVerificationGuessesPerAddress(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a, srv := verifyApp(t, program.Options{CodeGuessesPerAddress: 2, TrustedProxies: loopbackProxy})
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	a.setVerification(t, c, clinics.VerifyAlways)
	p, client := invented(1), clientID()
	h := a.holdOf(t, c.Types[0].ID, c.Specialists[0].ID, freeStarts(c, 1)[0], client)
	wantError(t, a.tryBook(t, c.Types[0].ID, h, client, p), http.StatusPreconditionRequired, "VERIFICATION_REQUIRED", "code")
	code := codeSentTo(t, srv, 1, p.Email)
	wrong := wrongCode(t, code)
	guess := func() *response {
		return a.do(t, "POST", "/v1/verifications", map[string]string{"email": p.Email, "code": wrong}, "X-Forwarded-For", "198.51.100.60")
	}
	for range 2 {
		wantError(t, guess(), http.StatusBadRequest, "VERIFICATION_CODE_WRONG", "code")
	}
	r := guess()
	wantError(t, r, http.StatusTooManyRequests, "RATE_LIMITED", "")
	if s := retryAfter(t, r); s < 1 || s > 3600 {
		t.Fatalf("Retry-After %d", s)
	}
	if r := a.redeem(t, p.Email, code); r.Status != http.StatusOK {
		t.Fatalf("the patient's own code after the stranger's guesses: %d %s", r.Status, r.Body)
	}
}
