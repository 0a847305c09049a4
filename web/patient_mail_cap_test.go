package web_test

// The cap on e-mails strangers can aim at one address, end to end over a
// real SMTP server: the book-and-cancel loop of a script, from several
// client addresses, gets the victim the default cap of e-mails and no
// more; staff see the rest held back with the reason, and an admin may
// send one anyway; staff's own mail to the address still goes out. And
// the reasons typed through a manage link or the public API never reach
// an e-mail, while staff's do.

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/testkit"
)

// cappedSMTPApp is an app on a database of its own, behind a trusted
// proxy (so that a test speaks from several client addresses), sending
// to a real SMTP server with the default cap on one address's e-mails.
func cappedSMTPApp(t *testing.T) (*app, *testkit.SMTPServer) {
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
	a := newApp(t, withPool(freshPool(t)), withDefaultMailCap(), withOptions(program.Options{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Mail:           program.MailOptions{Sender: sender, Workers: 4, Retry: fastRetry, Queue: ownQueue()},
	}))
	return a, srv
}

// loopClinic is a clinic with n types without a cooldown: a loop that
// books each time with one address uses a type of its own each time, so
// that no rule of the cooldown stops it before the e-mails' cap does.
func loopClinic(t *testing.T, a *app, n int) clinic {
	t.Helper()
	types := make([]db.AppointmentTypeInsertParams, n)
	for i := range types {
		types[i] = db.AppointmentTypeInsertParams{Name: fmt.Sprintf("Consultation %d", i+1), DurationMin: 30, SlotStepMin: 30, MaxAdvanceDays: 60}
	}
	return a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: types})
}

// mailsTo are the e-mails the server accepted for email.
func mailsTo(srv *testkit.SMTPServer, email string) []testkit.Received {
	var out []testkit.Received
	for _, m := range srv.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, email) {
				out = append(out, m)
			}
		}
	}
	return out
}

// waitMailsTo waits until the server accepted n e-mails for email.
func waitMailsTo(t *testing.T, srv *testkit.SMTPServer, email string, n int) {
	t.Helper()
	testkit.WaitFor(t, mailWait, fmt.Sprintf("%d e-mails to %s", n, email), func() bool { return len(mailsTo(srv, email)) >= n })
}

func TestMailBombingLoopDeliversAtMostTheCap(t *testing.T) {
	t.Parallel()
	a, srv := cappedSMTPApp(t)
	const cycles = 15
	c := loopClinic(t, a, cycles)
	victim := uniqueEmail("victim")
	starts := freeStarts(c, cycles)
	for i := range cycles {
		// Five networks, three cycles each.
		from := []string{"X-Forwarded-For", fmt.Sprintf("10.%d.0.7", i%5+1)}
		client := clientID()
		typ := c.Types[i]
		r := a.postHold(t, typ.ID, c.Specialists[0].ID, starts[i], client, from...)
		if r.Status != http.StatusCreated {
			t.Fatalf("cycle %d: hold %d %s", i, r.Status, r.Body)
		}
		var h holdView
		r.Decode(&h)
		b := a.bookFor(t, typ.ID, h, client, booking.Patient{Name: "Vic Tim", Email: victim}, from...)
		if r := a.do(t, "DELETE", "/v1/appointments/"+b.Appointment.ID.String(), nil, append(bearer(b.ManageToken), from...)...); r.Status != http.StatusOK {
			t.Fatalf("cycle %d: cancel %d %s", i, r.Status, r.Body)
		}
	}
	waitBacklogEmpty(t, a)
	got := mailsTo(srv, victim)
	if len(got) != outbox.DefaultPerRecipient {
		t.Fatalf("the victim's mailbox got %d e-mails from the loop, want %d", len(got), outbox.DefaultPerRecipient)
	}
	if v := a.metricSum(t, `clinic_mail_held_back_total\{cap="clinic"\}`); v < 1 {
		t.Errorf("clinic_mail_held_back_total{cap=\"clinic\"} = %v", v)
	}
	if strings.Contains(a.metricsText(t), "victim") {
		t.Error("the metrics name the victim's address")
	}

	// Staff see the held-back messages with their reason; the header
	// links to them although a mail server sends.
	admin := a.signIn(t, c.Admin)
	if admin.Get("/staff").Doc().Find(`nav[aria-label="Staff"] a[href="/staff/outbox"]`).Length() != 1 {
		t.Error("the header has no Outbox link with messages held back")
	}
	page := admin.Get("/staff/outbox").Want(http.StatusOK)
	rows := page.Doc().Find(`[data-testid="held-row"]`)
	if rows.Length() == 0 || !strings.Contains(text(rows.First()), victim) {
		t.Fatalf("the outbox page shows %d held-back messages: %s", rows.Length(), clip(page.Text("main"), 600))
	}
	if reason := text(rows.First().Find(`[data-testid="held-reason"]`)); !strings.Contains(reason, "in the last 24 hours") {
		t.Errorf("a held-back message's reason reads %q", reason)
	}

	// The booking's own page says the same of its e-mail.
	var bookingPage string
	rows.EachWithBreak(func(_ int, row *goquery.Selection) bool {
		bookingPage, _ = row.Find(`a[href^="/staff/bookings/"]`).Attr("href")
		return bookingPage == ""
	})
	msg := admin.Get(bookingPage).Want(http.StatusOK).Doc().Find(`[data-testid="message"][data-status="held"]`)
	if msg.Length() == 0 || !strings.Contains(text(msg.First().Find(`[data-testid="message-error"]`)), "in the last 24 hours") {
		t.Errorf("the booking's page %s shows %d held-back e-mails", bookingPage, msg.Length())
	}

	// Staff's own mail to the address still goes out, past the cap.
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, starts[0].AddDate(0, 0, 7), booking.Patient{Name: "Vic Tim", Email: victim})
	srv.WaitFor(t, outbox.DefaultPerRecipient+1, mailWait)

	// A staff member may not send one anyway; an admin may, once.
	form := formOf(t, rows.First().Find(`form[data-testid="held-send"] button`), "send anyway")
	staffer := a.signIn(t, c.Staff)
	if staffer.Get("/staff/outbox").Doc().Find(`form[data-testid="held-send"]`).Length() != 0 {
		t.Error("a staff member is offered to send a held-back message")
	}
	staffer.Post(form.Action, withCSRF(staffer, form.Values)).Want(http.StatusForbidden)
	admin.Post(form.Action, form.Values).Want(http.StatusSeeOther)
	srv.WaitFor(t, outbox.DefaultPerRecipient+2, mailWait)
	admin.Post(form.Action, form.Values).Want(http.StatusNotFound)
	waitBacklogEmpty(t, a)
	if n := len(mailsTo(srv, victim)); n != outbox.DefaultPerRecipient+2 {
		t.Fatalf("%d e-mails after staff's booking and one sent anyway, want %d", n, outbox.DefaultPerRecipient+2)
	}
	if page := admin.Get("/staff/outbox"); page.Doc().Find(`[data-testid="held-row"]`).Length() != rows.Length()-1 {
		t.Error("the message sent anyway is still listed as held back")
	}
}

// A reason typed by a patient, through the manage page or the API, is in
// no e-mail; a reason staff type is in theirs.
func TestOnlyStaffReasonsReachAnEmail(t *testing.T) {
	t.Parallel()
	a, srv := smtpApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	const link = "https://evil.example/pay"

	// The API's cancel, with a reason in its query.
	apiEmail := uniqueEmail("api-reason")
	client := clientID()
	h := a.holdOf(t, typ.ID, sp.ID, c.At(3, 10, 0), client)
	b := a.bookFor(t, typ.ID, h, client, booking.Patient{Name: "Api Patient", Email: apiEmail})
	waitMailsTo(t, srv, apiEmail, 1) // a cancel would take the confirmation back
	if r := a.do(t, "DELETE", "/v1/appointments/"+b.Appointment.ID.String()+"?reason="+url.QueryEscape("Pay at "+link), nil, bearer(b.ManageToken)...); r.Status != http.StatusOK {
		t.Fatalf("API cancel: %d %s", r.Status, r.Body)
	}

	// The manage page's cancel, with a reason in its form.
	pageEmail := uniqueEmail("page-reason")
	cl := a.newClient(t)
	token := bookViaPages(t, cl, c, typ, sp.ID, c.At(3, 11, 0), "Page Patient", pageEmail)
	waitMailsTo(t, srv, pageEmail, 1)
	ask := cl.Post("/manage/"+token+"/cancel", url.Values{}).Want(http.StatusOK)
	yes := formOf(t, ask.Doc().Find(`button.danger`), "yes form")
	yes.Values.Set("reason", "Pay at "+link)
	cl.Post(yes.Action, yes.Values).Want(http.StatusSeeOther)

	// Staff's cancel, with theirs.
	staffEmail := uniqueEmail("staff-reason")
	conf := a.bookAs(t, c, typ, sp.ID, c.At(3, 12, 0), booking.Patient{Name: "Desk Patient", Email: staffEmail})
	waitMailsTo(t, srv, staffEmail, 1)
	admin := a.signIn(t, c.Admin)
	admin.Post(staffBookingPath(conf.Booking.ID)+"/cancel", url.Values{"reason": {"Dr. Weber is away"}})

	for _, email := range []string{apiEmail, pageEmail, staffEmail} {
		waitMailsTo(t, srv, email, 2)
	}
	waitBacklogEmpty(t, a)
	for _, email := range []string{apiEmail, pageEmail} {
		ms := mailsTo(srv, email)
		if len(ms) != 2 {
			t.Fatalf("%s got %d e-mails, want the confirmation and the cancellation", email, len(ms))
		}
		for _, m := range ms {
			p := testkit.ParseReceived(t, m)
			if strings.Contains(p.Text+p.HTML, "evil.example") || strings.Contains(p.Text+p.HTML, "Pay at") {
				t.Errorf("%s: the e-mail %q carries the patient's reason", email, p.Subject)
			}
		}
	}
	var staffNotice testkit.ParsedMail
	for _, m := range mailsTo(srv, staffEmail) {
		if p := testkit.ParseReceived(t, m); strings.Contains(p.Subject, "cancelled") {
			staffNotice = p
		}
	}
	if !strings.Contains(staffNotice.Text, "Dr. Weber is away") || !strings.Contains(staffNotice.HTML, "Dr. Weber is away") {
		t.Errorf("staff's cancellation without their reason:\n%s", staffNotice.Text)
	}
}
