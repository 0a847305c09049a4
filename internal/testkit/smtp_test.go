package testkit

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

func rawMail(subject string) string {
	return "From: a@example.org\r\nTo: b@example.net\r\nSubject: " + subject + "\r\n\r\nbody " + subject + "\r\n"
}

// submit sends one message to srv with go-smtp's client: plain, with
// STARTTLS when tlsCfg is set, or with implicit TLS when implicit.
func submit(t *testing.T, srv *SMTPServer, tlsCfg *tls.Config, implicit bool, auth sasl.Client, subject string) error {
	t.Helper()
	var c *smtp.Client
	var err error
	switch {
	case implicit:
		c, err = smtp.DialTLS(srv.Addr(), tlsCfg)
	case tlsCfg != nil:
		c, err = smtp.DialStartTLS(srv.Addr(), tlsCfg)
	default:
		c, err = smtp.Dial(srv.Addr())
	}
	if err != nil {
		return err
	}
	defer c.Close()
	c.SubmissionTimeout = 300 * time.Millisecond
	if auth != nil {
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	if err := c.SendMail("a@example.org", []string{"b@example.net"}, strings.NewReader(rawMail(subject))); err != nil {
		return err
	}
	return c.Quit()
}

func smtpCode(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestSMTPServerRecordsAndRefuses(t *testing.T) {
	srv := SMTP(t)
	if want := "smtp://" + srv.Addr() + "?tls=none"; srv.URL() != want || !strings.HasPrefix(srv.Addr(), "127.0.0.1:") {
		t.Fatalf("URL %q, want %q", srv.URL(), want)
	}
	if err := submit(t, srv, nil, false, nil, "one"); err != nil {
		t.Fatal(err)
	}
	srv.RefuseNext(2, 451, "busy")
	for i := 0; i < 2; i++ {
		if err := submit(t, srv, nil, false, nil, "refused"); smtpCode(err) != 451 {
			t.Fatalf("refusal %d: %v, want 451", i, err)
		}
	}
	srv.RefuseNext(1, 550, "no")
	if err := submit(t, srv, nil, false, nil, "refused"); smtpCode(err) != 550 {
		t.Fatalf("%v, want 550", err)
	}
	srv.RefuseNextRcpt(1, 550, "user unknown")
	if err := submit(t, srv, nil, false, nil, "no rcpt"); smtpCode(err) != 550 {
		t.Fatalf("RCPT: %v, want 550", err)
	}
	srv.RefuseNextMail(1, 421, "closing")
	if err := submit(t, srv, nil, false, nil, "no mail"); smtpCode(err) != 421 {
		t.Fatalf("MAIL: %v, want 421", err)
	}
	if err := submit(t, srv, nil, false, nil, "two"); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages()
	if len(got) != 2 || srv.Attempts() != 5 {
		t.Fatalf("%d accepted, %d attempts; want 2 and 5 (the refused RCPT and MAIL never reach DATA)", len(got), srv.Attempts())
	}
	for i, subject := range []string{"one", "two"} {
		r := got[i]
		if r.From != "a@example.org" || len(r.To) != 1 || r.To[0] != "b@example.net" || r.TLS || r.User != "" {
			t.Fatalf("message %d: %+v", i, r)
		}
		if !bytes.Equal(r.Data, []byte(rawMail(subject))) {
			t.Fatalf("message %d data %q, want %q", i, r.Data, rawMail(subject))
		}
	}
}

// fatalRecorder stands in for a test, to see WaitFor fail one.
type fatalRecorder struct {
	testing.TB
	failed string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestSMTPServerWaitFor(t *testing.T) {
	srv := SMTP(t)
	done := make(chan error, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		done <- submit(t, srv, nil, false, nil, "late")
	}()
	got := srv.WaitFor(t, 1, 5*time.Second)
	if len(got) != 1 || !bytes.Contains(got[0].Data, []byte("late")) {
		t.Fatalf("WaitFor returned %+v", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	rec := &fatalRecorder{TB: t}
	start := time.Now()
	if got := srv.WaitFor(rec, 2, 100*time.Millisecond); got != nil || !strings.Contains(rec.failed, "1 messages accepted") {
		t.Fatalf("WaitFor for a message that never comes: %v, failure %q", got, rec.failed)
	}
	if took := time.Since(start); took < 100*time.Millisecond || took > 5*time.Second {
		t.Fatalf("WaitFor gave up after %v", took)
	}
}

func TestSMTPServerStall(t *testing.T) {
	srv := SMTP(t)
	srv.StallNext(1)
	start := time.Now()
	if err := submit(t, srv, nil, false, nil, "stalled"); err == nil {
		t.Fatal("a stalled DATA was answered")
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("the client gave up after %v, before its timeout", took)
	}
	if srv.Attempts() != 1 || len(srv.Messages()) != 0 {
		t.Fatalf("%d attempts, %d accepted", srv.Attempts(), len(srv.Messages()))
	}
	if err := submit(t, srv, nil, false, nil, "after"); err != nil {
		t.Fatalf("the stall was for one message: %v", err)
	}
}

func TestSMTPServerDisconnectAfterNext(t *testing.T) {
	srv := SMTP(t)
	srv.DisconnectAfterNext(1)
	c, err := smtp.Dial(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMail("a@example.org", []string{"b@example.net"}, strings.NewReader(rawMail("kept"))); err != nil {
		t.Fatalf("the message is answered 250 before the drop: %v", err)
	}
	if err := c.Noop(); err == nil {
		t.Fatal("the connection is still up after the accepted message")
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d accepted, want the one before the drop", n)
	}
	if err := submit(t, srv, nil, false, nil, "next"); err != nil {
		t.Fatalf("the drop was for one message: %v", err)
	}
}

func TestSMTPServerTLS(t *testing.T) {
	plain, starttls, implicit := SMTP(t), SMTPTLS(t), SMTPImplicitTLS(t)
	if want := "smtp://" + starttls.Addr(); starttls.URL() != want {
		t.Fatalf("STARTTLS URL %q, want %q", starttls.URL(), want)
	}
	if want := "smtps://" + implicit.Addr(); implicit.URL() != want {
		t.Fatalf("implicit URL %q, want %q", implicit.URL(), want)
	}
	if err := submit(t, plain, plain.TLSConfig(), false, nil, "x"); err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("STARTTLS to the plain server: %v", err)
	}
	if err := submit(t, starttls, starttls.TLSConfig(), false, nil, "starttls"); err != nil {
		t.Fatal(err)
	}
	if err := submit(t, implicit, implicit.TLSConfig(), true, nil, "implicit"); err != nil {
		t.Fatal(err)
	}
	for _, srv := range []*SMTPServer{starttls, implicit} {
		if r := srv.WaitFor(t, 1, 5*time.Second)[0]; !r.TLS {
			t.Fatalf("%s: the message is not marked TLS", srv.URL())
		}
	}
	// Without the test certificate in the pool, the handshake fails.
	if err := submit(t, starttls, &tls.Config{ServerName: "127.0.0.1"}, false, nil, "x"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	// A plain client to the STARTTLS server is still served.
	if err := submit(t, starttls, nil, false, nil, "clear"); err != nil {
		t.Fatal(err)
	}
	if r := starttls.WaitFor(t, 2, 5*time.Second)[1]; r.TLS {
		t.Fatal("a message sent in the clear is marked TLS")
	}
}

func TestSMTPServerAuth(t *testing.T) {
	srv := SMTPTLS(t)
	srv.RequireAuth("clinic@example.org", "p@ss word")
	if want := "smtp://clinic%40example.org:p%40ss%20word@" + srv.Addr(); srv.URL() != want {
		t.Fatalf("URL %q, want %q", srv.URL(), want)
	}
	if err := submit(t, srv, srv.TLSConfig(), false, nil, "anonymous"); smtpCode(err) != 530 {
		t.Fatalf("without AUTH: %v, want 530", err)
	}
	bad := sasl.NewPlainClient("", "clinic@example.org", "wrong")
	if err := submit(t, srv, srv.TLSConfig(), false, bad, "bad"); smtpCode(err) != 535 {
		t.Fatalf("wrong password: %v, want 535", err)
	}
	good := sasl.NewPlainClient("", "clinic@example.org", "p@ss word")
	if err := submit(t, srv, srv.TLSConfig(), false, good, "good"); err != nil {
		t.Fatal(err)
	}
	if r := srv.WaitFor(t, 1, 5*time.Second); len(r) != 1 || r[0].User != "clinic@example.org" {
		t.Fatalf("accepted %+v", r)
	}
}

func TestParseReceivedMail(t *testing.T) {
	raw := strings.Join([]string{
		"From: =?utf-8?q?Praxis_M=C3=BCller?= <bookings@example.org>",
		"To: \"Ana\" <ana@example.net>",
		"Subject: =?UTF-8?q?Terminbest=C3=A4tigung?= =?UTF-8?b?IGbDvHIgQW5h?=",
		"Message-ID: <abc@example.org>",
		"Content-Language: de",
		"MIME-Version: 1.0",
		"Content-Type: multipart/mixed; boundary=OUT",
		"",
		"--OUT",
		"Content-Type: multipart/alternative; boundary=IN",
		"",
		"--IN",
		"Content-Type: text/plain; charset=UTF-8",
		"Content-Transfer-Encoding: quoted-printable",
		"",
		"Gr=C3=BC=C3=9Fe, ein langer Satz mit weichem=",
		" Umbruch",
		"--IN",
		"Content-Type: text/html; charset=utf-8",
		"Content-Transfer-Encoding: base64",
		"",
		"PHA+R3LDvMOfZTwvcD4=",
		"--IN--",
		"--OUT",
		"Content-Type: text/calendar; method=PUBLISH; charset=utf-8; name=\"appointment.ics\"",
		"Content-Disposition: attachment; filename=\"appointment.ics\"",
		"Content-Transfer-Encoding: base64",
		"",
		"QkVHSU46VkNBTEVOREFS",
		"DQpFTkQ6VkNBTEVOREFS",
		"--OUT",
		"Content-Type: application/pdf",
		"Content-Disposition: attachment; filename=\"=?UTF-8?q?Befund_=C3=BC.pdf?=\"",
		"Content-Transfer-Encoding: base64",
		"",
		"JVBERg==",
		"--OUT--",
		"",
	}, "\r\n")
	p := ParseReceived(t, Received{Data: []byte(raw)})
	checks := map[string][2]string{
		"Subject":   {p.Subject, "Terminbestätigung für Ana"},
		"From":      {p.From, "bookings@example.org"},
		"To":        {p.To, "ana@example.net"},
		"MessageID": {p.MessageID, "<abc@example.org>"},
		"Language":  {p.Language, "de"},
		"Text":      {p.Text, "Grüße, ein langer Satz mit weichem Umbruch"},
		"HTML":      {p.HTML, "<p>Grüße</p>"},
		"ics":       {string(p.Attachments["appointment.ics"]), "BEGIN:VCALENDAR\r\nEND:VCALENDAR"},
		"ics type":  {p.AttachmentTypes["appointment.ics"], `text/calendar; method=PUBLISH; charset=utf-8; name="appointment.ics"`},
		"pdf":       {string(p.Attachments["Befund ü.pdf"]), "%PDF"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s: %q, want %q", name, c[0], c[1])
		}
	}
	if len(p.Attachments) != 2 {
		t.Errorf("attachments %v", p.Attachments)
	}

	single := ParseReceived(t, Received{Data: []byte(rawMail("plain"))})
	if single.Text != "body plain\r\n" || single.HTML != "" || single.Subject != "plain" || len(single.Attachments) != 0 {
		t.Fatalf("single part: %+v", single)
	}
}
