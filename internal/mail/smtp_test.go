package mail_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clinicmail "github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/testkit"
)

// senderFor is an SMTP sender to srv's URL that trusts the test
// certificate.
func senderFor(t *testing.T, rawURL string, srv *testkit.SMTPServer) *clinicmail.SMTP {
	t.Helper()
	cfg, err := clinicmail.ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := clinicmail.NewSMTP(cfg, mailFrom)
	if err != nil {
		t.Fatal(err)
	}
	return s.WithTLS(srv.TLSConfig())
}

func send(t *testing.T, s *clinicmail.SMTP, m clinicmail.Message) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Send(ctx, m)
}

func TestSMTPSendArrives(t *testing.T) {
	srv := testkit.SMTP(t)
	s := senderFor(t, srv.URL(), srv)
	const id = "7d9c1d7e-0b55-4b8e-a0a4-2f1f3c1a9e01"
	if err := send(t, s, confirmation(id)); err != nil {
		t.Fatal(err)
	}
	got := srv.WaitFor(t, 1, 5*time.Second)
	r := got[0]
	if r.From != "bookings@example.org" || len(r.To) != 1 || r.To[0] != "joerg.baecker@example.net" {
		t.Fatalf("envelope from %q to %q", r.From, r.To)
	}
	if r.TLS || r.User != "" {
		t.Fatalf("tls=none sent with TLS %v, user %q", r.TLS, r.User)
	}
	checkConfirmation(t, testkit.ParseReceived(t, r), id)

	// Sent again (a retry after a lost reply), it has the same Message-ID,
	// so the receiver can drop it.
	if err := send(t, s, confirmation(id)); err != nil {
		t.Fatal(err)
	}
	got = srv.WaitFor(t, 2, 5*time.Second)
	first, second := testkit.ParseReceived(t, got[0]), testkit.ParseReceived(t, got[1])
	if first.MessageID != second.MessageID {
		t.Fatalf("Message-IDs %q and %q differ", first.MessageID, second.MessageID)
	}

	// A message's own From replaces MAIL_FROM, Message-ID domain included.
	m := confirmation("own-from")
	m.From = "Reception <desk@clinic.example>"
	if err := send(t, s, m); err != nil {
		t.Fatal(err)
	}
	r = srv.WaitFor(t, 3, 5*time.Second)[2]
	if p := testkit.ParseReceived(t, r); r.From != "desk@clinic.example" || p.MessageID != "<own-from@clinic.example>" {
		t.Fatalf("own From: envelope %q, Message-ID %q", r.From, p.MessageID)
	}
}

func TestSMTPPreviewMatchesSent(t *testing.T) {
	srv := testkit.SMTP(t)
	s := senderFor(t, srv.URL(), srv)
	m := confirmation("preview-1")
	preview, err := s.Preview(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := send(t, s, m); err != nil {
		t.Fatal(err)
	}
	sent := testkit.ParseReceived(t, srv.WaitFor(t, 1, 5*time.Second)[0])
	shown := testkit.ParseReceived(t, testkit.Received{Data: preview})
	if shown.MessageID != sent.MessageID || shown.Subject != sent.Subject || shown.From != sent.From ||
		shown.Text != sent.Text || shown.HTML != sent.HTML || len(shown.Attachments) != len(sent.Attachments) {
		t.Fatalf("preview %+v\nsent %+v", shown, sent)
	}
}

func TestSMTPStartTLS(t *testing.T) {
	plain, secure := testkit.SMTP(t), testkit.SMTPTLS(t)
	plainRequired := "smtp://" + plain.Addr() // STARTTLS required by default

	t.Run("RequiredFailsWithoutIt", func(t *testing.T) {
		err := send(t, senderFor(t, plainRequired, plain), confirmation("no-starttls"))
		if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
			t.Fatalf("err %v, want one about STARTTLS", err)
		}
		if clinicmail.Permanent(err) {
			t.Fatalf("%v is permanent, want temporary", err)
		}
		if plain.Attempts() != 0 || len(plain.Messages()) != 0 {
			t.Fatalf("the message reached the plain server")
		}
	})
	t.Run("RequiredSucceeds", func(t *testing.T) {
		if err := send(t, senderFor(t, secure.URL(), secure), confirmation("starttls")); err != nil {
			t.Fatal(err)
		}
		if r := secure.WaitFor(t, 1, 5*time.Second)[0]; !r.TLS {
			t.Fatal("the message came in the clear")
		}
	})
	t.Run("UntrustedCertificateFails", func(t *testing.T) {
		cfg, err := clinicmail.ParseURL(secure.URL())
		if err != nil {
			t.Fatal(err)
		}
		s, err := clinicmail.NewSMTP(cfg, mailFrom)
		if err != nil {
			t.Fatal(err)
		}
		err = send(t, s, confirmation("untrusted"))
		if err == nil || !strings.Contains(err.Error(), "certificate") || clinicmail.Permanent(err) {
			t.Fatalf("err %v, want a temporary certificate error", err)
		}
	})
	t.Run("OpportunisticUsesTLSWhenOffered", func(t *testing.T) {
		before := len(secure.Messages())
		if err := send(t, senderFor(t, secure.URL()+"?tls=opportunistic", secure), confirmation("opp-tls")); err != nil {
			t.Fatal(err)
		}
		if r := secure.WaitFor(t, before+1, 5*time.Second)[before]; !r.TLS {
			t.Fatal("opportunistic sent in the clear to a server offering STARTTLS")
		}
		if err := send(t, senderFor(t, plainRequired+"?tls=opportunistic", plain), confirmation("opp-plain")); err != nil {
			t.Fatal(err)
		}
		if r := plain.WaitFor(t, 1, 5*time.Second)[0]; r.TLS {
			t.Fatal("TLS with a server that offers none")
		}
	})
}

func TestSMTPImplicitTLS(t *testing.T) {
	srv := testkit.SMTPImplicitTLS(t)
	if !strings.HasPrefix(srv.URL(), "smtps://") {
		t.Fatalf("URL %s", srv.URL())
	}
	if err := send(t, senderFor(t, srv.URL(), srv), confirmation("smtps")); err != nil {
		t.Fatal(err)
	}
	r := srv.WaitFor(t, 1, 5*time.Second)[0]
	if !r.TLS {
		t.Fatal("smtps message came in the clear")
	}
	checkConfirmation(t, testkit.ParseReceived(t, r), "smtps")

	// A plain client against the TLS port waits for a greeting that never
	// comes, until its timeout.
	plain := senderFor(t, "smtp://"+srv.Addr()+"?tls=none", srv).WithTimeout(300 * time.Millisecond)
	err := send(t, plain, confirmation("plain-to-smtps"))
	if !errors.Is(err, context.DeadlineExceeded) || clinicmail.Permanent(err) {
		t.Fatalf("plain SMTP to an smtps port: %v, want a temporary timeout", err)
	}
}

func TestSMTPAuth(t *testing.T) {
	const user, pass = "clinic@example.org", "p@ss:word/1"
	srv := testkit.SMTPTLS(t)
	srv.RequireAuth(user, pass)

	if err := send(t, senderFor(t, srv.URL(), srv), confirmation("auth")); err != nil {
		t.Fatal(err)
	}
	if r := srv.WaitFor(t, 1, 5*time.Second)[0]; r.User != user || !r.TLS {
		t.Fatalf("authenticated as %q over TLS %v", r.User, r.TLS)
	}

	wrong := strings.Replace(srv.URL(), "word", "wrong", 1)
	err := send(t, senderFor(t, wrong, srv), confirmation("auth-wrong"))
	if err == nil || clinicmail.Permanent(err) || !strings.Contains(err.Error(), "AUTH") {
		t.Fatalf("wrong password: %v, want a temporary AUTH error", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("the error shows the password: %v", err)
	}

	// No credentials: the server's 530 to MAIL FROM is a setting to fix,
	// not a refusal of the message.
	err = send(t, senderFor(t, "smtp://"+srv.Addr(), srv), confirmation("auth-none"))
	if err == nil || clinicmail.Permanent(err) || !strings.Contains(err.Error(), "530") {
		t.Fatalf("no credentials: %v, want a temporary 530", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages accepted, want the authenticated one", n)
	}

	// Credentials but a server without AUTH.
	plain := testkit.SMTP(t)
	withUser := strings.Replace(plain.URL(), "smtp://", "smtp://someone:pw@", 1)
	if err := send(t, senderFor(t, withUser, plain), confirmation("auth-missing")); err == nil || clinicmail.Permanent(err) {
		t.Fatalf("user for a server without AUTH: %v, want a temporary error", err)
	}
}
