package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Received is one message an SMTPServer accepted.
type Received struct {
	From string   // the envelope sender (MAIL FROM)
	To   []string // the envelope recipients (RCPT TO)
	Data []byte   // the raw message, headers and body
	TLS  bool     // it came over TLS (STARTTLS or implicit)
	User string   // who authenticated; empty: nobody
}

// SMTPServer is a real SMTP server (go-smtp) on 127.0.0.1 that records the
// messages it accepts and can be told to refuse or stall the next ones.
type SMTPServer struct {
	srv     *smtp.Server
	addr    string
	scheme  string // smtp or smtps
	tlsMode string // the URL's tls parameter; empty: STARTTLS required
	closing chan struct{}

	mu         sync.Mutex
	accepted   []Received
	attempts   int
	refusals   map[string]*refusal // by command: MAIL, RCPT, DATA
	stalls     int
	drops      int
	user, pass string
	changed    chan struct{} // closed and replaced on every change
}

type refusal struct {
	n    int
	code int
	msg  string
}

// SMTP starts a plain SMTP server, without STARTTLS, closed by t.Cleanup.
func SMTP(t testing.TB) *SMTPServer { return startSMTP(t, "plain") }

// SMTPTLS starts a server that offers STARTTLS with a self-signed
// certificate; TLSConfig trusts it.
func SMTPTLS(t testing.TB) *SMTPServer { return startSMTP(t, "starttls") }

// SMTPImplicitTLS starts a server that speaks TLS from the first byte
// (smtps), with the certificate TLSConfig trusts.
func SMTPImplicitTLS(t testing.TB) *SMTPServer { return startSMTP(t, "implicit") }

func startSMTP(t testing.TB, kind string) *SMTPServer {
	t.Helper()
	s := &SMTPServer{
		scheme:   "smtp",
		closing:  make(chan struct{}),
		refusals: map[string]*refusal{},
		changed:  make(chan struct{}),
	}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{s: s, conn: c}, nil
	}))
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = true // loopback only
	s.srv.ReadTimeout = time.Minute
	s.srv.WriteTimeout = time.Minute
	// Clients that give up (a test's refused certificate, a cancelled
	// send) are expected here: nothing to report.
	s.srv.ErrorLog = log.New(io.Discard, "", 0)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	switch kind {
	case "plain":
		s.tlsMode = "none"
	case "starttls":
		s.srv.TLSConfig = serverTLS(t)
	case "implicit":
		s.scheme = "smtps"
		l = tls.NewListener(l, serverTLS(t))
	}
	s.addr = l.Addr().String()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = s.srv.Serve(l)
	}()
	t.Cleanup(func() {
		close(s.closing)
		_ = s.srv.Close()
		// go-smtp closes only the listeners Serve has registered; a test
		// that ends before the goroutine above got that far would leave
		// Serve accepting forever.
		_ = l.Close()
		<-served
	})
	return s
}

// Addr is the server's host:port.
func (s *SMTPServer) Addr() string { return s.addr }

// URL is an SMTP_URL for the server: smtp://127.0.0.1:PORT?tls=none for
// SMTP, smtp://127.0.0.1:PORT (STARTTLS required) for SMTPTLS,
// smtps://127.0.0.1:PORT for SMTPImplicitTLS; with the user and password
// RequireAuth set.
func (s *SMTPServer) URL() string {
	u := url.URL{Scheme: s.scheme, Host: s.addr}
	if s.tlsMode != "" {
		u.RawQuery = "tls=" + s.tlsMode
	}
	s.mu.Lock()
	if s.user != "" {
		u.User = url.UserPassword(s.user, s.pass)
	}
	s.mu.Unlock()
	return u.String()
}

// TLSConfig is a client configuration that trusts the test servers'
// certificate (made for 127.0.0.1, ::1 and localhost).
func (s *SMTPServer) TLSConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(testCert().Leaf)
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// RequireAuth makes the server offer AUTH PLAIN and answer MAIL FROM with
// 530 until a session logs in as user with pass.
func (s *SMTPServer) RequireAuth(user, pass string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user, s.pass = user, pass
}

// Messages are the accepted messages, in order.
func (s *SMTPServer) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.accepted...)
}

// Attempts counts the ends of DATA the server saw: accepted, refused or
// stalled.
func (s *SMTPServer) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// RefuseNext answers the next n ends of DATA with code (e.g. 451, 550)
// and msg instead of accepting the message; those are not recorded.
func (s *SMTPServer) RefuseNext(n int, code int, msg string) { s.refuse("DATA", n, code, msg) }

// RefuseNextRcpt answers the next n RCPT TO commands with code and msg.
func (s *SMTPServer) RefuseNextRcpt(n int, code int, msg string) { s.refuse("RCPT", n, code, msg) }

// RefuseNextMail answers the next n MAIL FROM commands with code and msg.
func (s *SMTPServer) RefuseNextMail(n int, code int, msg string) { s.refuse("MAIL", n, code, msg) }

func (s *SMTPServer) refuse(cmd string, n, code int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusals[cmd] = &refusal{n: n, code: code, msg: msg}
}

// StallNext leaves the next n ends of DATA unanswered until the server
// closes: a server that hangs, for a client's timeout to end.
func (s *SMTPServer) StallNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalls = n
}

// DisconnectAfterNext accepts the next n messages (250 to the end of
// DATA) and then drops their connections, as a server or network failing
// between the reply and the client's next command would.
func (s *SMTPServer) DisconnectAfterNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops = n
}

// WaitFor waits until at least n messages were accepted and returns them;
// it fails the test after timeout. Call it from the test's goroutine.
func (s *SMTPServer) WaitFor(t testing.TB, n int, timeout time.Duration) []Received {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, changed := len(s.accepted), s.changed
		if got >= n {
			out := append([]Received(nil), s.accepted...)
			s.mu.Unlock()
			return out
		}
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("SMTP server: %d messages accepted after %v, want %d (%d DATA attempts)", got, timeout, n, s.Attempts())
			return nil
		}
	}
}

// refusal for cmd, counted down; nil: go on. The caller holds s.mu.
func (s *SMTPServer) takeRefusal(cmd string) error {
	r := s.refusals[cmd]
	if r == nil || r.n <= 0 {
		return nil
	}
	r.n--
	return &smtp.SMTPError{Code: r.code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: r.msg}
}

// deliver ends a DATA: refuse, stall or accept; drop says to close the
// connection once the acceptance is answered.
func (s *SMTPServer) deliver(r Received) (drop bool, err error) {
	s.mu.Lock()
	s.attempts++
	err = s.takeRefusal("DATA")
	stall := err == nil && s.stalls > 0
	switch {
	case err != nil:
	case stall:
		s.stalls--
	default:
		s.accepted = append(s.accepted, r)
		if drop = s.drops > 0; drop {
			s.drops--
		}
	}
	s.mu.Unlock()
	s.signal()
	if stall {
		<-s.closing
		return false, &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCodeNotSet, Message: "closing"}
	}
	return drop, err
}

// signal wakes WaitFor.
func (s *SMTPServer) signal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
}

// smtpSession is one client's session; go-smtp makes a new one after
// STARTTLS.
type smtpSession struct {
	s    *SMTPServer
	conn *smtp.Conn
	user string
	from string
	to   []string
	drop bool // close the connection at the reset after the 250 to DATA
}

func (x *smtpSession) Reset() {
	x.from, x.to = "", nil
	if x.drop {
		// The network connection itself: smtp.Conn.Close would wait for
		// the lock go-smtp holds while it calls Reset.
		_ = x.conn.Conn().Close()
	}
}
func (x *smtpSession) Logout() error { return nil }

func (x *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if x.s.user != "" && x.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	if err := x.s.takeRefusal("MAIL"); err != nil {
		return err
	}
	x.from = from
	return nil
}

func (x *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if err := x.s.takeRefusal("RCPT"); err != nil {
		return err
	}
	x.to = append(x.to, to)
	return nil
}

func (x *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := x.conn.TLSConnectionState()
	x.drop, err = x.s.deliver(Received{From: x.from, To: append([]string(nil), x.to...), Data: data, TLS: isTLS, User: x.user})
	return err
}

func (x *smtpSession) AuthMechanisms() []string {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if x.s.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *smtpSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(_, user, pass string) error {
		x.s.mu.Lock()
		defer x.s.mu.Unlock()
		if x.s.user == "" || user != x.s.user || pass != x.s.pass {
			return smtp.ErrAuthFailed
		}
		x.user = user
		return nil
	}), nil
}

var (
	testCertOnce sync.Once
	testCertVal  tls.Certificate
)

// testCert is a self-signed certificate for the loopback names, made once
// per test binary.
func testCert() tls.Certificate {
	testCertOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: "testkit SMTP"},
			NotBefore:             time.Now().Add(-time.Hour),
			NotAfter:              time.Now().Add(24 * time.Hour),
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			BasicConstraintsValid: true,
			IsCA:                  true,
			DNSNames:              []string{"localhost"},
			IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		leaf, err := x509.ParseCertificate(der)
		if err != nil {
			panic(err)
		}
		testCertVal = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	})
	return testCertVal
}

func serverTLS(t testing.TB) *tls.Config {
	t.Helper()
	return &tls.Config{Certificates: []tls.Certificate{testCert()}, MinVersion: tls.VersionTLS12}
}
