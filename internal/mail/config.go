package mail

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
)

// TLSMode says how a connection to the SMTP server is encrypted.
type TLSMode string

const (
	// TLSStartTLS upgrades the plain connection with STARTTLS and refuses
	// to go on without it: smtp:// with no tls parameter.
	TLSStartTLS TLSMode = "starttls"
	// TLSImplicit speaks TLS from the first byte: smtps://.
	TLSImplicit TLSMode = "implicit"
	// TLSOpportunistic uses STARTTLS when the server offers it and sends in
	// the clear when it does not: smtp://...?tls=opportunistic.
	TLSOpportunistic TLSMode = "opportunistic"
	// TLSNone never encrypts, for a mail catcher on the same machine:
	// smtp://...?tls=none.
	TLSNone TLSMode = "none"
)

// Default ports of the two schemes.
const (
	DefaultPortSMTP  = 587
	DefaultPortSMTPS = 465
)

// Config is a parsed SMTP_URL. Print it with String (or log it: it is a
// slog.LogValuer), never field by field: String hides the password.
type Config struct {
	Host     string
	Port     int
	User     string // empty: no SMTP AUTH
	Password string
	TLS      TLSMode
	// HELO is the name the client greets the server with (?helo=); empty:
	// the machine's host name. Some servers refuse a name that is not a
	// fully qualified domain.
	HELO string
}

// ParseURL reads SMTP_URL: smtp://user:pass@host:587 (STARTTLS required),
// smtps://user:pass@host:465 (implicit TLS), with ?tls=none or
// ?tls=opportunistic on smtp:// and an optional ?helo=name. User and
// password are optional and percent-decoded. An error names what is wrong
// and never shows the password.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url.Error repeats the whole address, password included: keep
		// only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Config{}, fmt.Errorf("SMTP_URL: %v", err)
	}
	var c Config
	switch u.Scheme {
	case "smtp":
		c.Port, c.TLS = DefaultPortSMTP, TLSStartTLS
	case "smtps":
		c.Port, c.TLS = DefaultPortSMTPS, TLSImplicit
	default:
		return Config{}, errors.New("SMTP_URL: scheme must be smtp or smtps (smtp://user:password@host:587)")
	}
	if u.Opaque != "" || u.Host == "" {
		return Config{}, errors.New("SMTP_URL: missing host (smtp://user:password@host:587)")
	}
	if c.Host = u.Hostname(); c.Host == "" {
		return Config{}, errors.New("SMTP_URL: missing host (smtp://user:password@host:587)")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("SMTP_URL: port %q is not a number from 1 to 65535", p)
		}
		c.Port = n
	}
	if u.Path != "" && u.Path != "/" {
		return Config{}, errors.New("SMTP_URL: a path has no meaning here: remove it")
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Password, _ = u.User.Password()
		if c.User == "" {
			return Config{}, errors.New("SMTP_URL: a password without a user name")
		}
	}
	if err := c.query(u); err != nil {
		return Config{}, err
	}
	return c, nil
}

// query applies the URL's parameters: tls and helo, nothing else.
func (c *Config) query(u *url.URL) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("SMTP_URL: query: %v", err)
	}
	for k, v := range q {
		if len(v) > 1 {
			return fmt.Errorf("SMTP_URL: %s is given %d times", k, len(v))
		}
		switch k {
		case "tls":
			if err := c.setTLS(v[0]); err != nil {
				return err
			}
		case "helo":
			if v[0] == "" || strings.ContainsAny(v[0], " \t\r\n") {
				return fmt.Errorf("SMTP_URL: helo=%q is not a host name", v[0])
			}
			c.HELO = v[0]
		default:
			return fmt.Errorf("SMTP_URL: unknown parameter %q (known: tls, helo)", k)
		}
	}
	return nil
}

func (c *Config) setTLS(v string) error {
	if c.TLS == TLSImplicit {
		if v != string(TLSImplicit) {
			return fmt.Errorf("SMTP_URL: tls=%q does not go with smtps, which is always TLS", v)
		}
		return nil
	}
	switch mode := TLSMode(v); mode {
	case TLSNone, TLSOpportunistic, TLSStartTLS:
		c.TLS = mode
		return nil
	}
	return fmt.Errorf("SMTP_URL: unknown tls value %q (want none, opportunistic or starttls)", v)
}

// Addr is host:port, for dialing.
func (c Config) Addr() string {
	return joinHostPort(c.Host, c.Port)
}

// String is the configuration as a URL with the password hidden.
func (c Config) String() string {
	u := url.URL{Scheme: "smtp", Host: c.Addr()}
	if c.TLS == TLSImplicit {
		u.Scheme = "smtps"
	}
	if c.User != "" {
		u.User = url.User(c.User)
		if c.Password != "" {
			u.User = url.UserPassword(c.User, "xxxxx")
		}
	}
	q := url.Values{}
	if c.TLS != TLSImplicit && c.TLS != TLSStartTLS {
		q.Set("tls", string(c.TLS))
	}
	if c.HELO != "" {
		q.Set("helo", c.HELO)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// GoString keeps %#v from printing the password.
func (c Config) GoString() string { return "mail.Config(" + c.String() + ")" }

// LogValue logs the configuration as String does.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }
