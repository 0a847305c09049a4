package web_test

// Tests of the development outbox: without a mail server the workers keep
// the messages, and staff read them (the list, the text with its working
// manage link, the HTML part under its own policy, the raw message, the
// calendar file at the booked instant); another clinic's are not found;
// with a mail server the page keeps nothing and the header has no link.

import (
	"bytes"
	"context"
	"net/http"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/ics/icstest"
	imail "github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// keepingApp is an app whose workers keep the messages for the outbox page.
func keepingApp(t *testing.T) *app {
	t.Helper()
	return newApp(t, withOptions(program.Options{Mail: program.MailOptions{Workers: 2, Retry: fastRetry, Queue: ownQueue()}}))
}

// keptMessage waits until the outbox page lists a message to email and
// returns the path of its page.
func keptMessage(t *testing.T, cl *client, email string) string {
	t.Helper()
	var path string
	testkit.WaitFor(t, mailWait, "the message on the outbox page", func() bool {
		r := cl.Get("/staff/outbox").Want(http.StatusOK)
		row := r.Doc().Find(`[data-testid="outbox-row"]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.Contains(text(s), email)
		})
		path, _ = row.Find("a").Attr("href")
		return path != ""
	})
	return path
}

func TestOutboxKeepsAndShowsTheConfirmation(t *testing.T) {
	t.Parallel()
	a := keepingApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	start := c.Next(time.Wednesday, 11, 0)
	email := uniqueEmail("outbox")
	conf := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, start, booking.Patient{Name: "Outbox Patient", Email: email})
	admin := a.signIn(t, c.Admin)
	if admin.Get("/staff").Doc().Find(`nav[aria-label="Staff"] a[href="/staff/outbox"]`).Length() != 1 {
		t.Error("the header has no Outbox link")
	}
	path := keptMessage(t, admin, email)
	list := admin.Get("/staff/outbox")
	if row := list.Text(`[data-testid="outbox-row"]`); !strings.Contains(row, "is booked") {
		t.Errorf("the list shows %q, want the confirmation's subject", row)
	}
	if n := list.Doc().Find(`table[data-testid="outbox"] th[scope="col"]`).Length(); n != 3 {
		t.Errorf("the list has %d column headers", n)
	}

	page := admin.Get(path).Want(http.StatusOK)
	if to := page.Text(`[data-testid="to"]`); !strings.Contains(to, email) {
		t.Errorf("the message is to %q", to)
	}
	if s := page.Text(`[data-testid="subject"]`); !strings.Contains(s, "is booked") {
		t.Errorf("subject %q", s)
	}
	link, _ := page.Doc().Find(`[data-testid="text"] a[href*="/manage/"]`).Attr("href")
	if !strings.HasPrefix(link, "http://localhost:8080/manage/") || !strings.Contains(page.Text(`[data-testid="text"]`), "Outbox Patient") {
		t.Fatalf("the text part's manage link %q; text:\n%s", link, page.Text(`[data-testid="text"]`))
	}
	if s := summaryOf(t, a.newClient(t).Get(pathOf(t, link)).Want(http.StatusOK)); s["For"] != "Outbox Patient" {
		t.Errorf("the manage link opens %v", s)
	}
	wantHTMLPart(t, admin, page)
	wantRawMessage(t, admin, path, page.Text(`[data-testid="subject"]`))

	icsLink, _ := page.Doc().Find(`[data-testid="ics-link"]`).Attr("href")
	cal := admin.Get(icsLink).Want(http.StatusOK)
	if ct := cal.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/calendar") {
		t.Errorf("calendar Content-Type %q", ct)
	}
	if got := icstest.Time(t, icstest.Event(t, cal.Body), "DTSTART"); !got.Equal(conf.Booking.Start) {
		t.Errorf("DTSTART %s, want the booked %s", got, conf.Booking.Start.UTC())
	}
	// The booking's page links to the kept copy of its confirmation.
	bp := admin.Get(staffBookingPath(conf.Booking.ID)).Want(http.StatusOK)
	if bp.Doc().Find(`[data-testid="message"][data-kind="confirmation"] a[href="`+path+`"]`).Length() != 1 {
		t.Error("the booking's page does not link to the kept confirmation")
	}
}

// wantHTMLPart follows the message page's iframe: the HTML part alone,
// under a policy of its own that runs nothing and may be framed only here.
func wantHTMLPart(t *testing.T, cl *client, page *response) {
	t.Helper()
	frame := page.Doc().Find(`iframe[data-testid="html"]`)
	src, _ := frame.Attr("src")
	if _, sandboxed := frame.Attr("sandbox"); !sandboxed || src == "" {
		t.Fatalf("the HTML part's iframe: sandbox %v, src %q", sandboxed, src)
	}
	if title, _ := frame.Attr("title"); title == "" {
		t.Error("the iframe has no title")
	}
	r := cl.Get(src).Want(http.StatusOK)
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "sandbox", "frame-ancestors 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the HTML part's policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") || r.Header.Get("X-Frame-Options") != "SAMEORIGIN" {
		t.Errorf("the HTML part: policy %q, X-Frame-Options %q", csp, r.Header.Get("X-Frame-Options"))
	}
	if !strings.Contains(r.Body, "<html") || !strings.Contains(r.Body, "/manage/") {
		t.Errorf("the HTML part: %s", clip(r.Body, 500))
	}
}

// wantRawMessage downloads the .eml and reads it back.
func wantRawMessage(t *testing.T, cl *client, path, subject string) {
	t.Helper()
	r := cl.Get(path + "/message.eml").Want(http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "message/rfc822" {
		t.Errorf("the .eml's Content-Type %q", ct)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("the .eml's Content-Disposition %q", r.Header.Get("Content-Disposition"))
	}
	pm := testkit.ParseReceived(t, testkit.Received{Data: []byte(r.Body)})
	if pm.Subject != subject || !strings.Contains(pm.Text, "/manage/") || len(pm.Attachments) != 1 {
		t.Errorf("the .eml: subject %q (want %q), %d attachments", pm.Subject, subject, len(pm.Attachments))
	}
	if _, err := mail.ReadMessage(bytes.NewReader([]byte(r.Body))); err != nil {
		t.Errorf("the .eml does not parse: %v", err)
	}
}

// Another clinic's messages are not listed and not found; every role of
// the clinic reads its own.
func TestOutboxOtherClinicAndRoles(t *testing.T) {
	t.Parallel()
	a := keepingApp(t)
	mine := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	theirEmail, myEmail := uniqueEmail("theirs"), uniqueEmail("mine")
	a.bookAs(t, other, other.Type0(), other.Specialists[0].ID, other.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Their Patient", Email: theirEmail})
	a.bookAs(t, mine, mine.Type0(), mine.Specialists[0].ID, mine.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Mine Patient", Email: myEmail})
	theirPath := keptMessage(t, a.signIn(t, other.Admin), theirEmail)
	myPath := keptMessage(t, a.signIn(t, mine.Admin), myEmail)

	accounts := map[string]account{staff.RoleAdmin: mine.Admin, staff.RoleStaff: mine.Staff, staff.RoleReception: a.newAccount(t, mine.ID, staff.RoleReception)}
	for _, role := range staff.Roles {
		cl := a.signIn(t, accounts[role])
		list := cl.Get("/staff/outbox").Want(http.StatusOK)
		if strings.Contains(list.Body, theirEmail) || !strings.Contains(list.Body, myEmail) {
			t.Errorf("%s: the list shows theirs or lacks mine", role)
		}
		cl.Get(myPath).Want(http.StatusOK)
		for _, p := range []string{theirPath, theirPath + "/message.eml", theirPath + "/calendar.ics", theirPath + "/message.html", "/staff/outbox/" + uuid.NewString(), "/staff/outbox/not-an-id"} {
			if r := cl.Get(p); r.Status != http.StatusNotFound || strings.Contains(r.Body, "Their Patient") {
				t.Errorf("%s %s: %d, want 404", role, p, r.Status)
			}
		}
	}
	a.newClient(t).Get(myPath).WantRedirect("/staff/login")
}

// With a mail server nothing is kept: the page says where e-mail goes,
// and the header has no Outbox link.
func TestOutboxWithAMailServer(t *testing.T) {
	t.Parallel()
	cfg, err := imail.ParseURL("smtp://127.0.0.1:1?tls=none")
	if err != nil {
		t.Fatal(err)
	}
	sender, err := imail.NewSMTP(cfg, "Clinic bookings <bookings@example.org>")
	if err != nil {
		t.Fatal(err)
	}
	a := newApp(t, withOptions(program.Options{Mail: program.MailOptions{Sender: sender, Queue: ownQueue()}}))
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	conf := a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Tuesday, 9, 0), booking.Patient{Name: "Sent Patient", Email: uniqueEmail("sent")})
	admin := a.signIn(t, c.Admin)
	r := admin.Get("/staff/outbox").Want(http.StatusOK)
	if !strings.Contains(r.Text(`[data-testid="outbox-off"]`), "configured mail server") || r.Doc().Find(`[data-testid="outbox-row"]`).Length() != 0 {
		t.Errorf("the page with a mail server: %s", clip(r.Text("main"), 500))
	}
	if r.Doc().Find(`a[href="/staff/outbox"]`).Length() != 0 {
		t.Error("the header links to the outbox although a mail server sends")
	}
	copies, err := a.Deps.Outbox.Copies(context.Background(), c.Admin.User(c.ID))
	if err != nil || len(copies) != 0 {
		t.Errorf("copies kept: %d (%v)", len(copies), err)
	}
	if s := messageStates(admin.Get(staffBookingPath(conf.Booking.ID))); s["confirmation"] != "queued" {
		t.Errorf("the confirmation is %v", s)
	}
}

// A German message reads as written: the subject's encoded words and the
// parts' transfer encodings are undone.
func TestOutboxGermanMessageIsDecoded(t *testing.T) {
	t.Parallel()
	a := keepingApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	name := "Praxis Müller-Lüdenscheidt " + c.Slug
	if _, err := db.New(a.Pool).ClinicUpsert(context.Background(), db.ClinicUpsertParams{Slug: c.Slug, Name: name, Timezone: c.Timezone}); err != nil {
		t.Fatal(err)
	}
	email := uniqueEmail("deutsch")
	req := deskBooking(c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 9, 0), booking.Patient{Name: "Jürgen Weiß", Email: email})
	req.Language = "de"
	if _, err := a.Deps.Bookings.Book(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	admin := a.signIn(t, c.Admin)
	page := admin.Get(keptMessage(t, admin, email)).Want(http.StatusOK)
	if s := page.Text(`[data-testid="subject"]`); !strings.HasPrefix(s, "Ihr Termin am ") {
		t.Errorf("subject %q", s)
	}
	if txt := page.Text(`[data-testid="text"]`); !strings.Contains(txt, "Guten Tag Jürgen Weiß,") || !strings.Contains(txt, "für Ihre Buchung bei "+name) {
		t.Errorf("the text part reads:\n%s", txt)
	}

	if err := a.Deps.Outbox.RequestLookup(context.Background(), c.ID, email, "de"); err != nil {
		t.Fatal(err)
	}
	var list string
	testkit.WaitFor(t, mailWait, "the list kept", func() bool {
		copies, err := a.Deps.Outbox.Copies(context.Background(), c.Admin.User(c.ID))
		for _, cp := range copies {
			if strings.HasPrefix(cp.Subject, "Ihre Termine") {
				list = "/staff/outbox/" + cp.MessageID.String()
			}
		}
		return err == nil && list != ""
	})
	if s := admin.Get(list).Want(http.StatusOK).Text(`[data-testid="subject"]`); s != "Ihre Termine bei "+name {
		t.Errorf("the list's subject %q", s)
	}
	raw := admin.Get(list + "/message.eml").Want(http.StatusOK).Body
	if strings.Contains(strings.SplitN(raw, "\r\n\r\n", 2)[0], "Müller") {
		t.Error("the raw header is not encoded: the test does not test decoding")
	}
}
