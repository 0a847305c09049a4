package mail_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/mail"
)

func TestParseURLGood(t *testing.T) {
	cases := []struct {
		raw  string
		want mail.Config
	}{
		{"smtp://user:pass@mail.example.org:587", mail.Config{Host: "mail.example.org", Port: 587, User: "user", Password: "pass", TLS: mail.TLSStartTLS}},
		{"smtp://mail.example.org", mail.Config{Host: "mail.example.org", Port: 587, TLS: mail.TLSStartTLS}},
		{"smtps://user:pass@mail.example.org", mail.Config{Host: "mail.example.org", Port: 465, User: "user", Password: "pass", TLS: mail.TLSImplicit}},
		{"smtps://mail.example.org:2465/", mail.Config{Host: "mail.example.org", Port: 2465, TLS: mail.TLSImplicit}},
		{"smtp://127.0.0.1:1025?tls=none", mail.Config{Host: "127.0.0.1", Port: 1025, TLS: mail.TLSNone}},
		{"smtp://mail.example.org:25?tls=opportunistic", mail.Config{Host: "mail.example.org", Port: 25, TLS: mail.TLSOpportunistic}},
		{"smtp://mail.example.org?tls=starttls&helo=app.example.org", mail.Config{Host: "mail.example.org", Port: 587, TLS: mail.TLSStartTLS, HELO: "app.example.org"}},
		{"smtp://only-user@mail.example.org", mail.Config{Host: "mail.example.org", Port: 587, User: "only-user", TLS: mail.TLSStartTLS}},
		// User and password are percent-decoded.
		{"smtp://apikey%40example.org:p%40ss%3Aw%2Ford%25@mail.example.org", mail.Config{Host: "mail.example.org", Port: 587, User: "apikey@example.org", Password: "p@ss:w/ord%", TLS: mail.TLSStartTLS}},
		{"smtp://[::1]:2525?tls=none", mail.Config{Host: "::1", Port: 2525, TLS: mail.TLSNone}},
		{"  smtp://mail.example.org  ", mail.Config{Host: "mail.example.org", Port: 587, TLS: mail.TLSStartTLS}},
	}
	for _, c := range cases {
		got, err := mail.ParseURL(c.raw)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", c.raw, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseURL(%q) = %#v, want %#v", c.raw, got, c.want)
		}
		if got.Password != "" && strings.Contains(got.String(), got.Password) {
			t.Errorf("String() of %q shows the password: %s", c.raw, got)
		}
	}
}

func TestParseURLBad(t *testing.T) {
	const secret = "s3cretPW"
	cases := []struct{ raw, wantInErr string }{
		{"", "scheme must be smtp or smtps"},
		{"http://u:" + secret + "@mail.example.org", "scheme must be smtp or smtps"},
		{"mail.example.org:587", "scheme must be smtp or smtps"},
		{"smtp://u:" + secret + "@", "missing host"},
		{"smtp:mail.example.org", "missing host"},
		{"smtp://u:" + secret + "@:587", "missing host"},
		{"smtp://u:" + secret + "@mail.example.org:0", "port"},
		{"smtp://u:" + secret + "@mail.example.org:70000", "port"},
		{"smtp://u:" + secret + "@mail.example.org:abc", "port"},
		{"smtp://u:" + secret + "@mail.example.org?tls=maybe", `unknown tls value "maybe"`},
		{"smtp://u:" + secret + "@mail.example.org?tls=", `unknown tls value ""`},
		{"smtps://u:" + secret + "@mail.example.org?tls=none", "does not go with smtps"},
		{"smtp://u:" + secret + "@mail.example.org?tls=none&tls=opportunistic", "tls is given 2 times"},
		{"smtp://u:" + secret + "@mail.example.org?tsl=none", `unknown parameter "tsl"`},
		{"smtp://u:" + secret + "@mail.example.org?helo=", "helo"},
		{"smtp://u:" + secret + "@mail.example.org/inbox", "path"},
		{"smtp://:" + secret + "@mail.example.org", "password without a user"},
		{"smtp://u:" + secret + "@mail example.org", "SMTP_URL"},
	}
	for _, c := range cases {
		_, err := mail.ParseURL(c.raw)
		if err == nil {
			t.Errorf("ParseURL(%q) = nil error, want one about %s", c.raw, c.wantInErr)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.wantInErr) || !strings.HasPrefix(msg, "SMTP_URL: ") {
			t.Errorf("ParseURL(%q) = %q, want SMTP_URL: ...%s...", c.raw, msg, c.wantInErr)
		}
		if strings.Contains(msg, secret) {
			t.Errorf("ParseURL(%q): the error shows the password: %s", c.raw, msg)
		}
	}
}

func TestParseURLStringHidesPassword(t *testing.T) {
	c, err := mail.ParseURL("smtps://apikey:Zm9vYmFy%2Fsecret@mail.example.org:465")
	if err != nil {
		t.Fatal(err)
	}
	if c.Password != "Zm9vYmFy/secret" {
		t.Fatalf("password %q", c.Password)
	}
	if got, want := c.String(), "smtps://apikey:xxxxx@mail.example.org:465"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	printed := []string{
		fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c),
		slog.AnyValue(c).Resolve().String(),
	}
	for _, p := range printed {
		if strings.Contains(p, "secret") {
			t.Fatalf("printed config shows the password: %s", p)
		}
	}
	// The printed form parses back to the same settings but the password.
	back, err := mail.ParseURL(c.String())
	if err != nil {
		t.Fatal(err)
	}
	back.Password = c.Password
	if back != c {
		t.Fatalf("String() %q parses to %#v, want %#v", c.String(), back, c)
	}
	none, _ := mail.ParseURL("smtp://127.0.0.1:1025?tls=none")
	if got := none.String(); got != "smtp://127.0.0.1:1025?tls=none" {
		t.Fatalf("String() = %q", got)
	}
}

func TestMailNewSMTPChecksFrom(t *testing.T) {
	cfg, err := mail.ParseURL("smtp://127.0.0.1:1025?tls=none")
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"", "not an address", "Clinic <bookings>", "bookings@"} {
		if _, err := mail.NewSMTP(cfg, from); err == nil || !strings.Contains(err.Error(), "MAIL_FROM") {
			t.Errorf("NewSMTP(from %q): err %v, want one naming MAIL_FROM", from, err)
		}
	}
	for _, from := range []string{"bookings@example.org", "Clinic <bookings@example.org>", "=?utf-8?q?Praxis_M=C3=BCller?= <a@b.example>"} {
		if _, err := mail.NewSMTP(cfg, from); err != nil {
			t.Errorf("NewSMTP(from %q): %v", from, err)
		}
	}
	if _, err := mail.NewSMTP(mail.Config{Port: 25}, "a@example.org"); err == nil || !strings.Contains(err.Error(), "host") {
		t.Errorf("NewSMTP without a host: %v", err)
	}
}
