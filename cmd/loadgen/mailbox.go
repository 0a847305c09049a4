package main

import (
	"bytes"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// mailbox is a plain SMTP server on 127.0.0.1 that keeps every message the
// served build sends, so the abuse scenario can count what reached whom.
type mailbox struct {
	srv  *smtp.Server
	l    net.Listener
	addr string

	mu   sync.Mutex
	mail []delivered
}

type delivered struct {
	to   []string
	data []byte
}

func startMailbox() (*mailbox, error) {
	mb := &mailbox{}
	mb.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &mailboxSession{mb: mb}, nil
	}))
	mb.srv.Domain = "localhost"
	mb.srv.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mb.l, mb.addr = l, l.Addr().String()
	go func() { _ = mb.srv.Serve(l) }()
	return mb, nil
}

func (mb *mailbox) url() string { return "smtp://" + mb.addr + "?tls=none" }

// close stops the server; the listener is closed here too, since go-smtp
// closes only those Serve has already registered.
func (mb *mailbox) close() {
	_ = mb.srv.Close()
	_ = mb.l.Close()
}

// to counts the messages addressed to rcpt.
func (mb *mailbox) to(rcpt string) int {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	n := 0
	for _, m := range mb.mail {
		for _, t := range m.to {
			if strings.EqualFold(t, rcpt) {
				n++
			}
		}
	}
	return n
}

// containing counts the messages whose raw text holds s.
func (mb *mailbox) containing(s string) int {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	n := 0
	for _, m := range mb.mail {
		if bytes.Contains(m.data, []byte(s)) {
			n++
		}
	}
	return n
}

// settle waits until no message to rcpt has arrived for three seconds (or
// until max) and returns how many did.
func (mb *mailbox) settle(rcpt string, max time.Duration) int {
	deadline := time.Now().Add(max)
	last, since := mb.to(rcpt), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < 3*time.Second {
		time.Sleep(200 * time.Millisecond)
		if n := mb.to(rcpt); n != last {
			last, since = n, time.Now()
		}
	}
	return last
}

type mailboxSession struct {
	mb *mailbox
	to []string
}

func (s *mailboxSession) Reset()        { s.to = nil }
func (s *mailboxSession) Logout() error { return nil }

func (s *mailboxSession) Mail(string, *smtp.MailOptions) error { return nil }

func (s *mailboxSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *mailboxSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mb.mu.Lock()
	s.mb.mail = append(s.mb.mail, delivered{to: s.to, data: b})
	s.mb.mu.Unlock()
	return nil
}
