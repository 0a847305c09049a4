package config

import (
	"strings"
	"testing"
)

func TestPublicURL(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "http://localhost:8080"},
		{map[string]string{"ADDR": ":9090"}, "http://localhost:9090"},
		{map[string]string{"PUBLIC_URL": "https://booking.example.org/"}, "https://booking.example.org"},
		{map[string]string{"PUBLIC_URL": "http://10.0.0.5:8080/clinic"}, "http://10.0.0.5:8080/clinic"},
	} {
		c, err := Load(env(tc.env))
		if err != nil || c.PublicURL != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.env, c.PublicURL, err, tc.want)
		}
	}
	for _, bad := range []string{"booking.example.org", "ftp://x", "https://", "https://x/?a=1", "https://u:p@x"} {
		_, err := Load(env(map[string]string{"PUBLIC_URL": bad}))
		if err == nil || !strings.Contains(err.Error(), "PUBLIC_URL") {
			t.Errorf("PUBLIC_URL=%q: %v, want an error naming PUBLIC_URL", bad, err)
		}
	}
}

// The sender's default: bookings@ the public address's domain; no
// domain (an IP address, localhost) makes a placeholder without a mail
// server and a required MAIL_FROM with one.
func TestMailFromDefault(t *testing.T) {
	for _, tc := range []struct {
		public string
		smtp   bool
		want   string
		fails  bool
	}{
		{"https://praxis.example.de", true, "Clinic bookings <bookings@praxis.example.de>", false},
		{"http://127.0.0.1:8080", false, "Clinic bookings <bookings@mail-from.invalid>", false},
		{"http://localhost:8080", false, "Clinic bookings <bookings@mail-from.invalid>", false},
		{"http://127.0.0.1:8080", true, "", true},
	} {
		got, err := mailFrom("", tc.public, tc.smtp)
		if got != tc.want || (err != nil) != tc.fails {
			t.Errorf("mailFrom(%q, smtp %v) = %q, %v; want %q (fails: %v)", tc.public, tc.smtp, got, err, tc.want, tc.fails)
		}
	}
	if got, _ := mailFrom("Praxis <termine@praxis.de>", "http://127.0.0.1", true); got != "Praxis <termine@praxis.de>" {
		t.Errorf("MAIL_FROM set gives %q", got)
	}
}
