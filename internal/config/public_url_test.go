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
