package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"
)

// Timeout bounds one Send: connecting, TLS, AUTH and the transaction.
const Timeout = 30 * time.Second

// SMTP sends each message over a connection of its own to one SMTP server.
// It is safe for concurrent use.
type SMTP struct {
	cfg     Config
	from    *mail.Address
	tls     *tls.Config
	timeout time.Duration
}

var _ Sender = (*SMTP)(nil)

// NewSMTP is a sender to the server cfg names, with from (MAIL_FROM, e.g.
// "Clinic <bookings@example.org>") as the From of every message that does
// not name its own.
func NewSMTP(cfg Config, from string) (*SMTP, error) {
	switch cfg.TLS {
	case "":
		cfg.TLS = TLSStartTLS
	case TLSStartTLS, TLSImplicit, TLSOpportunistic, TLSNone:
	default:
		return nil, fmt.Errorf("SMTP_URL: unknown tls mode %q", cfg.TLS)
	}
	if cfg.Host == "" {
		return nil, errors.New("SMTP_URL: missing host")
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("SMTP_URL: port %d is not from 1 to 65535", cfg.Port)
	}
	a, err := parseFrom("MAIL_FROM", from)
	if err != nil {
		return nil, err
	}
	return &SMTP{cfg: cfg, from: a, timeout: Timeout}, nil
}

// WithTLS is a copy of s that verifies the server with c (e.g. one that
// trusts a test's self-signed certificate). The server name defaults to
// the configured host.
func (s *SMTP) WithTLS(c *tls.Config) *SMTP {
	cp := *s
	cp.tls = c.Clone()
	return &cp
}

// WithTimeout is a copy of s whose Sends give up after d instead of
// Timeout; d <= 0 keeps Timeout.
func (s *SMTP) WithTimeout(d time.Duration) *SMTP {
	cp := *s
	cp.timeout = Timeout
	if d > 0 {
		cp.timeout = d
	}
	return &cp
}

// Preview is Preview with the sender's MAIL_FROM when m has no From.
func (s *SMTP) Preview(m Message) ([]byte, error) {
	from, err := s.fromOf(m)
	if err != nil {
		return nil, err
	}
	return render(m, from)
}

// Send delivers m on a new connection, closed before Send returns. The
// error is Permanent when the server refused the sender, the recipient or
// the message for good; anything else is worth a retry.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	from, err := s.fromOf(m)
	if err != nil {
		return err
	}
	msg, err := build(m, from)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	conn := &connection{ctx: ctx, addr: s.cfg.Addr()}
	if s.cfg.TLS == TLSImplicit {
		conn.tls = s.tlsConfig()
	}
	defer conn.close()

	client, err := gomail.NewClient(s.cfg.Host, s.options(conn)...)
	if err != nil {
		return fmt.Errorf("mail: SMTP client for %s: %w", s.cfg.Addr(), err)
	}
	sc, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return s.fail(ctx, "connecting to", m, err)
	}
	if err := s.authenticate(sc); err != nil {
		return s.fail(ctx, "authenticating at", m, err)
	}
	// Once the server has taken the message (250 to the end of DATA), a
	// failed RSET or QUIT after it does not undo that, and reporting it
	// would have the message sent twice.
	if err := client.SendWithSMTPClient(sc, msg); err != nil && !msg.IsDelivered() {
		return s.fail(ctx, "sending through", m, err)
	}
	_ = client.CloseWithSMTPClient(sc)
	return nil
}

func (s *SMTP) fromOf(m Message) (*mail.Address, error) {
	if m.From == "" {
		return s.from, nil
	}
	from, err := parseFrom("Message.From", m.From)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	return from, nil
}

func (s *SMTP) options(conn *connection) []gomail.Option {
	policy := gomail.TLSMandatory
	switch s.cfg.TLS {
	case TLSOpportunistic:
		policy = gomail.TLSOpportunistic
	case TLSNone, TLSImplicit: // implicit: the dialer has done TLS already
		policy = gomail.NoTLS
	}
	opts := []gomail.Option{
		gomail.WithPort(s.cfg.Port),
		// The Send's context ends the connection; go-mail's own deadline
		// on each command comes later, so that the error names the
		// context's cause.
		gomail.WithTimeout(s.timeout + time.Second),
		gomail.WithDialContextFunc(conn.dial),
		gomail.WithTLSPolicy(policy),
		gomail.WithTLSConfig(s.tlsConfig()),
		// The connection is new: a NOOP before MAIL FROM would only cost a
		// round trip (and hide a failure behind a vaguer error).
		gomail.WithoutNoop(),
	}
	if s.cfg.HELO != "" {
		opts = append(opts, gomail.WithHELO(s.cfg.HELO))
	}
	return opts
}

func (s *SMTP) tlsConfig() *tls.Config {
	c := &tls.Config{}
	if s.tls != nil {
		c = s.tls.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = s.cfg.Host
	}
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS12
	}
	return c
}

// fail wraps a failed step's error: with the context's cause when the
// context ended it (the connection was closed under it), and without the
// recipient's address, which go-mail and servers repeat in their errors.
func (s *SMTP) fail(ctx context.Context, step string, m Message, err error) error {
	err = &redactedError{text: redact(err.Error(), m.To), err: err}
	if cause := context.Cause(ctx); cause != nil {
		return fmt.Errorf("mail: %s %s: %w: %w", step, s.cfg.Addr(), cause, err)
	}
	return fmt.Errorf("mail: %s %s: %w", step, s.cfg.Addr(), err)
}

// connection dials for go-mail and ties the connection to the Send's
// context: go-mail bounds only the dial by a context, so a server that
// stalls later (in the greeting, in DATA) is stopped by closing the
// connection when the context ends.
type connection struct {
	ctx  context.Context
	addr string
	tls  *tls.Config // implicit TLS; nil: plain TCP, perhaps upgraded later
	raw  net.Conn
	stop func() bool
}

func (c *connection) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, network, c.addr)
	if err != nil {
		return nil, err
	}
	c.raw = raw
	c.stop = context.AfterFunc(c.ctx, func() { _ = raw.Close() })
	if c.tls == nil {
		return raw, nil
	}
	tc := tls.Client(raw, c.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

func (c *connection) close() {
	if c.raw != nil {
		c.stop()
		_ = c.raw.Close()
	}
}

// authenticate logs in when the URL has a user, with the best mechanism the
// server offers: over TLS PLAIN or LOGIN first, in the clear only those
// that do not show the password (go-mail itself refuses PLAIN and LOGIN
// without TLS except to localhost).
func (s *SMTP) authenticate(sc *smtp.Client) error {
	if s.cfg.User == "" {
		return nil
	}
	ok, offered := sc.Extension("AUTH")
	if !ok {
		return errors.New("SMTP_URL has a user, but the server offers no SMTP AUTH")
	}
	_, encrypted := sc.TLSConnectionState()
	order := []string{"SCRAM-SHA-256", "SCRAM-SHA-1", "CRAM-MD5", "PLAIN", "LOGIN"}
	if encrypted {
		order = []string{"PLAIN", "LOGIN", "SCRAM-SHA-256", "SCRAM-SHA-1", "CRAM-MD5"}
	}
	mechs := strings.Fields(strings.ToUpper(offered))
	for _, mech := range order {
		if !slices.Contains(mechs, mech) {
			continue
		}
		if err := sc.Auth(s.auth(mech)); err != nil {
			return fmt.Errorf("AUTH %s: %w", mech, err)
		}
		return nil
	}
	return fmt.Errorf("no AUTH mechanism in common with the server (it offers %s)", offered)
}

func (s *SMTP) auth(mech string) smtp.Auth {
	user, pass, host := s.cfg.User, s.cfg.Password, s.cfg.Host
	switch mech {
	case "SCRAM-SHA-256":
		return smtp.ScramSHA256Auth(user, pass)
	case "SCRAM-SHA-1":
		return smtp.ScramSHA1Auth(user, pass)
	case "CRAM-MD5":
		return smtp.CRAMMD5Auth(user, pass)
	case "LOGIN":
		return smtp.LoginAuth(user, pass, host, false)
	default:
		return smtp.PlainAuth("", user, pass, host, false)
	}
}

func joinHostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
