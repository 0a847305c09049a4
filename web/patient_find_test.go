package web_test

// Tests of "find my booking": the same answer for an address with
// bookings and one without, the e-mail field checked, the limits per
// client address and per e-mail address, and, with the workers sending to
// a real SMTP server, the list reaching the address with bookings (its
// links open them) while the other address gets nothing and is not kept.
// Also the helpers of the e-mail tests of this package.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/testkit"
)

// mailWait is how long a test waits for the workers to send.
const mailWait = 30 * time.Second

// fastRetry retries a failed send within a second.
var fastRetry = outbox.Retry{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond}

// ownQueue is a job queue of the test's own, so that no other test's
// workers on the shared database take its messages.
func ownQueue() string { return "mail_" + strings.ReplaceAll(uuid.NewString(), "-", "") }

// queueApp is an app that only writes its messages to the queue (no
// workers): they stay queued.
func queueApp(t *testing.T) *app {
	t.Helper()
	return newApp(t, withOptions(program.Options{Mail: program.MailOptions{Queue: ownQueue()}}))
}

// smtpApp is an app on a database of its own whose workers send to a real
// SMTP server.
func smtpApp(t *testing.T) (*app, *testkit.SMTPServer) {
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
	a := newApp(t, withPool(freshPool(t)), withOptions(program.Options{Mail: program.MailOptions{
		Sender: sender, Workers: 2, Retry: fastRetry, Queue: ownQueue(),
	}}))
	return a, srv
}

// waitBacklogEmpty waits until no message is due and unsent (the app's
// database must be its own: the backlog counts every message in it).
func waitBacklogEmpty(t *testing.T, a *app) {
	t.Helper()
	testkit.WaitFor(t, mailWait, "the queue to empty", func() bool {
		n, _, err := a.Deps.Outbox.Backlog(context.Background())
		return err == nil && n == 0
	})
}

// manageLink finds the manage links in a text.
var manageLink = regexp.MustCompile(`https?://[^\s<>"]+/manage/[A-Za-z0-9_-]+`)

// pathOf is the path of an absolute link.
func pathOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("link %q: %v", link, err)
	}
	return u.Path
}

// messageRows counts the rows of messages of a kind ("": any) addressed
// to email.
func messageRows(t *testing.T, a *app, email, kind string) int {
	t.Helper()
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE lower(recipient) = lower($1) AND (kind = $2 OR $2 = '')`, email, kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// avoidHourEdge waits for the next hour when less than need is left of
// this one, so that a test's requests fall in one window of the hourly
// limits.
func avoidHourEdge(need time.Duration) {
	now := time.Now()
	next := now.Truncate(time.Hour).Add(time.Hour)
	if next.Sub(now) < need {
		time.Sleep(next.Sub(now) + 100*time.Millisecond)
	}
}

func uniqueEmail(what string) string {
	return what + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12] + "@example.org"
}

func findPath(c clinic) string { return "/c/" + c.Slug + "/find" }

// The clinic page links to the form; an address with bookings and one
// without get the same status and the same bytes, and both requests are
// queued alike.
func TestFindSameAnswerWithOrWithoutBookings(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	known, unknown := uniqueEmail("known"), uniqueEmail("unknown")
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 10, 0), booking.Patient{Name: "Known Patient", Email: known})

	cl := a.newClient(t)
	if cl.Get("/c/"+c.Slug).Want(http.StatusOK).Doc().Find(`a[href="`+findPath(c)+`"]`).Length() != 1 {
		t.Fatal("the clinic page does not link to the form")
	}
	page := cl.Get(findPath(c)).Want(http.StatusOK)
	f := page.Form(`[data-testid="find-form"]`)
	if f.Action != findPath(c) || page.Doc().Find(`label[for="email"]`).Length() != 1 {
		t.Fatalf("the form posts to %q; label: %d", f.Action, page.Doc().Find(`label[for="email"]`).Length())
	}

	yes := a.newClient(t).Post(findPath(c), url.Values{"email": {known}})
	no := a.newClient(t).Post(findPath(c), url.Values{"email": {unknown}})
	if yes.Status != http.StatusOK || no.Status != yes.Status {
		t.Fatalf("known address: %d, unknown: %d, want 200 both", yes.Status, no.Status)
	}
	if yes.Body != no.Body {
		t.Fatalf("the answers differ:\nknown:   %s\nunknown: %s", clip(yes.Body, 2000), clip(no.Body, 2000))
	}
	if got := yes.Text(`[data-testid="find-sent"]`); got != "If this address has upcoming appointments with us, we have sent it a list with a link for each." {
		t.Errorf("the answer says %q", got)
	}
	if strings.Contains(yes.Body, known) || strings.Contains(no.Body, unknown) {
		t.Error("the answer repeats the address")
	}
	for _, email := range []string{known, unknown} {
		var kind, status string
		if err := a.Pool.QueryRow(context.Background(), `SELECT kind, status FROM messages WHERE clinic_id = $1 AND recipient = $2 AND kind = 'lookup'`, c.ID, email).Scan(&kind, &status); err != nil {
			t.Errorf("%s: no list queued: %v", email, err)
		} else if status != "queued" {
			t.Errorf("%s: the list is %s, want queued", email, status)
		}
	}

	// In German too, the same for both.
	de := func(email string) *response {
		return a.newClient(t).PostRaw(findPath(c), url.Values{"email": {email}}, http.Header{"Accept-Language": {"de"}})
	}
	dy, dn := de(known), de(unknown)
	if dy.Status != http.StatusOK || dy.Body != dn.Body || !strings.Contains(dy.Text(`[data-testid="find-sent"]`), "Liste") {
		t.Errorf("German answers: %d %q / %d", dy.Status, dy.Text(`[data-testid="find-sent"]`), dn.Status)
	}
}

// An address that is none is refused with 400 naming the field, what was
// typed kept; nothing is queued.
func TestFindRefusesWhatIsNoAddress(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	for _, bad := range []string{"", "not-an-address", "ana@localhost", "Ana <ana@example.org>", "ana@exa\u202emple.org", strings.Repeat("a", 250) + "@example.org"} {
		r := a.newClient(t).Post(findPath(c), url.Values{"email": {bad}}).Want(http.StatusBadRequest)
		in := r.Doc().Find(`input[name="email"]`)
		if v, _ := in.Attr("aria-invalid"); v != "true" {
			t.Errorf("%q: the field is not marked invalid", bad)
		}
		if got := r.Text(`[data-testid="email-error"]`); got != "Please enter a valid e-mail address." {
			t.Errorf("%q: the field's error says %q", bad, got)
		}
		if v, _ := in.Attr("value"); bad == "not-an-address" && v != bad {
			t.Errorf("%q: the field shows %q", bad, v)
		}
	}
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE clinic_id = $1`, c.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("refused requests queued %d messages (%v)", n, err)
	}
	de := a.newClient(t).PostRaw(findPath(c), url.Values{"email": {"nope"}}, http.Header{"Accept-Language": {"de"}}).Want(http.StatusBadRequest)
	if got := de.Text(`[data-testid="email-error"]`); got != "Bitte geben Sie eine gültige E-Mail-Adresse ein." {
		t.Errorf("German field error: %q", got)
	}
}

// wantTooMany checks a 429 of the form with a Retry-After within the hour.
func wantTooMany(t *testing.T, r *response) {
	t.Helper()
	r.Want(http.StatusTooManyRequests)
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs <= 0 || secs > 3600 {
		t.Errorf("%s: Retry-After %q, want 1-3600 seconds", r.what, r.Header.Get("Retry-After"))
	}
	if !strings.Contains(r.Text(`[data-testid="find-problem"]`), "try again in") {
		t.Errorf("%s: the page says %q", r.what, r.Text(`[data-testid="find-problem"]`))
	}
}

// Three lists an hour per e-mail address and clinic, whoever asks and
// however the address is written, the same for an address with bookings
// and one without; no address is kept in Redis. Ten requests an hour per
// client address.
func TestFindLimits(t *testing.T) {
	t.Parallel()
	avoidHourEdge(30 * time.Second)
	a := queueApp(t)
	c := a.patientClinic(t)
	known, unknown := uniqueEmail("known"), uniqueEmail("unknown")
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Thursday, 11, 0), booking.Patient{Name: "Known Patient", Email: known})
	for _, email := range []string{known, unknown} {
		for _, spelt := range []string{email, strings.ToUpper(email), " " + email} {
			a.newClient(t).Post(findPath(c), url.Values{"email": {spelt}}).Want(http.StatusOK)
		}
		wantTooMany(t, a.newClient(t).Post(findPath(c), url.Values{"email": {email}}))
		if n := messageRows(t, a, email, outbox.KindLookup); n != 3 {
			t.Errorf("%d lists queued for one address, want 3", n)
		}
	}
	keys, err := a.RDB.Keys(context.Background(), "ratelimit:*find-email*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("no per-address counters in Redis: %v", err)
	}
	// Not the address, nor its plain digest, which a list of guesses
	// would reverse: a hash keyed with the server's secret.
	for _, k := range keys {
		if strings.Contains(k, "@") || strings.Contains(strings.ToLower(k), "example.org") {
			t.Errorf("Redis keeps an address: %s", k)
		}
		for _, email := range []string{known, unknown} {
			if sum := sha256.Sum256([]byte(strings.ToLower(email))); strings.Contains(k, hex.EncodeToString(sum[:])) {
				t.Errorf("Redis keeps the plain digest of an address: %s", k)
			}
		}
	}

	// Another clinic counts on its own.
	other := a.patientClinic(t)
	a.newClient(t).Post(findPath(other), url.Values{"email": {known}}).Want(http.StatusOK)

	// One client address: ten requests, valid or not, then 429.
	cl := a.newClient(t)
	for i := range 10 {
		email := uniqueEmail("many" + strconv.Itoa(i))
		if i == 9 {
			email = "no address"
		}
		if r := cl.Post(findPath(c), url.Values{"email": {email}}); r.Status != http.StatusOK && r.Status != http.StatusBadRequest {
			t.Fatalf("request %d: %d", i+1, r.Status)
		}
	}
	fresh := uniqueEmail("fresh")
	wantTooMany(t, cl.Post(findPath(c), url.Values{"email": {fresh}}))
	if n := messageRows(t, a, fresh, ""); n != 0 {
		t.Errorf("a refused request queued %d lists", n)
	}
	// Another address is not held back.
	a.newClient(t).Post(findPath(c), url.Values{"email": {fresh}}).Want(http.StatusOK)
}

// When Redis cannot count the limits, nothing is queued: 503 with
// Retry-After and a page that says to try again, the same for every
// address; the form itself still opens.
func TestFindFailsClosedWithoutRedis(t *testing.T) {
	t.Parallel()
	a := newApp(t, withRedisDown(), withOptions(program.Options{Mail: program.MailOptions{Queue: ownQueue()}}))
	c := a.patientClinic(t)
	a.newClient(t).Get(findPath(c)).Want(http.StatusOK)
	email := uniqueEmail("outage")
	var bodies []string
	for _, spelt := range []string{email, uniqueEmail("other"), "not an address"} {
		r := a.newClient(t).Post(findPath(c), url.Values{"email": {spelt}}).Want(http.StatusServiceUnavailable)
		if got := r.Header.Get("Retry-After"); got != "60" {
			t.Errorf("%q: Retry-After %q, want 60", spelt, got)
		}
		if got := r.Text(`[data-testid="find-problem"]`); got != "Lists cannot be sent right now. Please try again in a minute." {
			t.Errorf("%q: the page says %q", spelt, got)
		}
		bodies = append(bodies, r.Body)
	}
	if bodies[0] != bodies[1] {
		t.Error("the answers to two addresses differ")
	}
	de := a.newClient(t).PostRaw(findPath(c), url.Values{"email": {email}}, http.Header{"Accept-Language": {"de"}}).Want(http.StatusServiceUnavailable)
	if got := de.Text(`[data-testid="find-problem"]`); !strings.Contains(got, "Listen können gerade nicht versandt werden") {
		t.Errorf("German: %q", got)
	}
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE clinic_id = $1`, c.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d messages queued without Redis (%v)", n, err)
	}
}

// With the workers sending: the address with bookings receives one list
// naming each, whose links open them; the address without receives
// nothing, and no row keeps it.
func TestFindSendsTheList(t *testing.T) {
	t.Parallel()
	a, srv := smtpApp(t)
	c := a.patientClinic(t)
	known, unknown := uniqueEmail("known"), uniqueEmail("unknown")
	first, second := c.Next(time.Wednesday, 10, 0), c.Next(time.Friday, 14, 0)
	a.bookAs(t, c, c.Types[0], c.Specialists[0].ID, first, booking.Patient{Name: "Known Patient", Email: known})
	a.bookAs(t, c, c.Types[1], c.Specialists[1].ID, second, booking.Patient{Name: "Known Patient", Email: known})
	srv.WaitFor(t, 2, mailWait) // the confirmations
	waitBacklogEmpty(t, a)
	before := len(srv.Messages())

	a.newClient(t).Post(findPath(c), url.Values{"email": {unknown}}).Want(http.StatusOK)
	a.newClient(t).Post(findPath(c), url.Values{"email": {strings.ToUpper(known)}}).Want(http.StatusOK)
	srv.WaitFor(t, before+1, mailWait)
	waitBacklogEmpty(t, a)

	var got []testkit.Received // the lists (a reminder falling due meanwhile is no list)
	for _, m := range srv.Messages()[before:] {
		if strings.HasPrefix(testkit.ParseReceived(t, m).Subject, "Your appointments at ") {
			got = append(got, m)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d lists sent, want 1 (%d messages after the requests)", len(got), len(srv.Messages())-before)
	}
	for _, m := range srv.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, unknown) {
				t.Fatal("a message went to the address without bookings")
			}
		}
	}
	if n := messageRows(t, a, unknown, ""); n != 0 {
		t.Errorf("%d rows of messages keep the address without bookings", n)
	}
	pm := testkit.ParseReceived(t, got[0])
	if !strings.EqualFold(pm.To, known) || !strings.Contains(pm.Subject, c.Name) {
		t.Fatalf("the list went to %q with subject %q", pm.To, pm.Subject)
	}
	links := manageLink.FindAllString(pm.Text, -1)
	if len(links) != 2 {
		t.Fatalf("the list has %d manage links, want 2:\n%s", len(links), pm.Text)
	}
	opened := map[string]bool{}
	for _, link := range links {
		s := summaryOf(t, a.newClient(t).Get(pathOf(t, link)).Want(http.StatusOK))
		opened[s["What"]] = s["For"] == "Known Patient"
	}
	for _, want := range []string{c.Types[0].Name, c.Types[1].Name} {
		if !strings.Contains(pm.Text, want) || !opened[want] {
			t.Errorf("the list names %s: %v; its link opens it: %v", want, strings.Contains(pm.Text, want), opened)
		}
	}
}

// A manage link that leads nowhere shows the way to a new one: /find,
// which lists the clinics, each with its form.
func TestFindFromAManageLinkThatLeadsNowhere(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c1, c2 := a.patientClinic(t), a.patientClinic(t)
	cl := a.newClient(t)
	for _, p := range []string{"/manage/no-such-token", "/manage/no-such-token/reschedule"} {
		r := cl.Get(p)
		wantErrorPage(t, r, http.StatusNotFound)
		if r.Doc().Find(`a[href="/find"]`).Length() != 1 {
			t.Errorf("%s: no link to /find:\n%s", p, clip(r.Body, 2000))
		}
	}
	de := a.newClient(t).do(http.MethodGet, "/manage/no-such-token", nil, http.Header{"Accept-Language": {"de"}})
	if got := de.Text(`a[href="/find"]`); got != "Meine Buchung finden" {
		t.Errorf("German link: %q", got)
	}
	list := cl.Get("/find").Want(http.StatusOK).Doc()
	for _, c := range []clinic{c1, c2} {
		if list.Find(`[data-testid="find-clinics"] a[href="`+findPath(c)+`"]`).Length() != 1 {
			t.Errorf("/find does not list %s", c.Slug)
		}
	}
	// A manage link that works is unchanged.
	conf := a.bookAs(t, c1, c1.Type0(), c1.Specialists[0].ID, c1.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Still Here", Email: uniqueEmail("here")})
	if s := summaryOf(t, cl.Get("/manage/"+conf.ManageToken).Want(http.StatusOK)); s["For"] != "Still Here" {
		t.Errorf("the manage page shows %v", s)
	}
}
