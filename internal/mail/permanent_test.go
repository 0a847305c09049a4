package mail_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	clinicmail "github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/testkit"
)

func TestMailPermanentFromServerReplies(t *testing.T) {
	cases := []struct {
		name      string
		refuse    func(srv *testkit.SMTPServer)
		permanent bool
		code      string
	}{
		{"DATA 450", func(s *testkit.SMTPServer) { s.RefuseNext(1, 450, "mailbox busy") }, false, "450"},
		{"DATA 451", func(s *testkit.SMTPServer) { s.RefuseNext(1, 451, "try again later") }, false, "451"},
		{"DATA 421", func(s *testkit.SMTPServer) { s.RefuseNext(1, 421, "shutting down") }, false, "421"},
		{"DATA 550", func(s *testkit.SMTPServer) { s.RefuseNext(1, 550, "message refused") }, true, "550"},
		{"DATA 554", func(s *testkit.SMTPServer) { s.RefuseNext(1, 554, "spam") }, true, "554"},
		{"RCPT 550", func(s *testkit.SMTPServer) {
			s.RefuseNextRcpt(1, 550, "<Joerg.Baecker@example.net>: user unknown")
		}, true, "550"},
		{"RCPT 450", func(s *testkit.SMTPServer) { s.RefuseNextRcpt(1, 450, "greylisted") }, false, "450"},
		{"MAIL 553", func(s *testkit.SMTPServer) { s.RefuseNextMail(1, 553, "sender not allowed") }, true, "553"},
		{"MAIL 451", func(s *testkit.SMTPServer) { s.RefuseNextMail(1, 451, "local error") }, false, "451"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", ""), func(t *testing.T) {
			srv := testkit.SMTP(t)
			s := senderFor(t, srv.URL(), srv)
			c.refuse(srv)
			err := send(t, s, confirmation("refused"))
			if err == nil {
				t.Fatal("no error")
			}
			if got := clinicmail.Permanent(err); got != c.permanent {
				t.Fatalf("Permanent(%v) = %v, want %v", err, got, c.permanent)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.code) {
				t.Fatalf("error %q does not show the reply %s", msg, c.code)
			}
			if strings.Contains(strings.ToLower(msg), "joerg.baecker") || strings.Contains(msg, "Bäcker") {
				t.Fatalf("the error shows the patient: %s", msg)
			}
			if len(srv.Messages()) != 0 {
				t.Fatal("the refused message was recorded as accepted")
			}
			// The refusal was for one message: the retry goes through.
			if err := send(t, s, confirmation("refused")); err != nil {
				t.Fatalf("retry: %v", err)
			}
			srv.WaitFor(t, 1, 5*time.Second)
		})
	}
}

// A connection lost after the server took the message is no failure: a
// retry would deliver the message twice.
func TestSMTPDisconnectAfterAcceptance(t *testing.T) {
	srv := testkit.SMTP(t)
	srv.DisconnectAfterNext(1)
	if err := send(t, senderFor(t, srv.URL(), srv), confirmation("dropped")); err != nil {
		t.Fatalf("the server accepted the message, yet: %v", err)
	}
	if n := len(srv.WaitFor(t, 1, 5*time.Second)); n != 1 || srv.Attempts() != 1 {
		t.Fatalf("%d accepted, %d attempts", n, srv.Attempts())
	}
}

func TestMailPermanentOtherErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	srv := testkit.SMTP(t)
	err = send(t, senderFor(t, "smtp://"+closed+"?tls=none", srv), confirmation("closed"))
	if err == nil || clinicmail.Permanent(err) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("closed port: %v, want a temporary connection refused", err)
	}

	for _, e := range []error{
		nil, context.Canceled, context.DeadlineExceeded,
		errors.New("550 looks like a reply but is not one"),
		fmt.Errorf("wrapped: %w", clinicmail.ErrInvalidMessage),
	} {
		want := e != nil && errors.Is(e, clinicmail.ErrInvalidMessage)
		if got := clinicmail.Permanent(e); got != want {
			t.Errorf("Permanent(%v) = %v, want %v", e, got, want)
		}
	}
}

func TestSMTPContextStopsStalledSend(t *testing.T) {
	srv := testkit.SMTP(t)
	s := senderFor(t, srv.URL(), srv)

	t.Run("Deadline", func(t *testing.T) {
		srv.StallNext(1)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		checkStopped(t, sendWithin(t, ctx, s, "stalled"), context.DeadlineExceeded)
		if srv.Attempts() != 1 {
			t.Fatalf("%d DATA attempts, want the stalled one", srv.Attempts())
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		srv.StallNext(1)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for srv.Attempts() < 2 {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
		}()
		checkStopped(t, sendWithin(t, ctx, s, "cancelled"), context.Canceled)
	})
	t.Run("OwnTimeout", func(t *testing.T) {
		srv.StallNext(1)
		err := sendWithin(t, context.Background(), s.WithTimeout(300*time.Millisecond), "own-timeout")
		checkStopped(t, err, context.DeadlineExceeded)
	})
	t.Run("SilentServer", func(t *testing.T) {
		// A server that accepts the connection and never greets.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			c, err := l.Accept()
			if err == nil {
				defer c.Close()
				_, _ = c.Read(make([]byte, 1))
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		silent := senderFor(t, "smtp://"+l.Addr().String()+"?tls=none", srv)
		checkStopped(t, sendWithin(t, ctx, silent, "silent"), context.DeadlineExceeded)
	})
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d stalled messages recorded as accepted", n)
	}
}

// sendWithin sends and fails the test unless Send returns within 5 s.
func sendWithin(t *testing.T, ctx context.Context, s *clinicmail.SMTP, id string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Send(ctx, confirmation(id)) }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Send still running 5 s after its context ended")
		return nil
	}
}

func checkStopped(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err %v, want %v", err, want)
	}
	if clinicmail.Permanent(err) {
		t.Fatalf("%v is permanent", err)
	}
}
