package verify

import (
	"strings"
	"testing"
	"time"
)

// A token verifies the address it was made for, in any spelling that
// shares its identity key, until it expires; nothing else.
func TestTokenVerifiesItsAddressOnly(t *testing.T) {
	s := New(nil, Config{Key: []byte("0123456789abcdef0123456789abcdef")})
	now := time.Now()
	s.now = func() time.Time { return now }
	tok := s.Token("Ada@Example.org")
	if !s.Verifies(tok, " ada@example.org") {
		t.Fatal("the token does not verify its own address")
	}
	if s.Verifies(tok, "eve@example.org") {
		t.Fatal("the token verifies another address")
	}
	other := New(nil, Config{Key: []byte("another key of thirty-two bytes!")})
	if other.Verifies(tok, "ada@example.org") {
		t.Fatal("another server's key accepts the token")
	}
	for _, bad := range []string{"", "v1.", "v1.x.y", strings.Replace(tok, "v1.", "v2.", 1), tok + "A"} {
		if s.Verifies(bad, "ada@example.org") {
			t.Errorf("%q verifies", bad)
		}
	}
	now = now.Add(TokenLife + time.Second)
	if s.Verifies(tok, "ada@example.org") {
		t.Fatal("an expired token verifies")
	}
}

// A mail server's refusal reaches the logs without the address it names.
func TestSendFailureKeepsNoAddress(t *testing.T) {
	got := addresses.ReplaceAllString(`550 5.1.1 <Victim.Name+x@example.org>: Recipient address rejected`, "<address>")
	if strings.Contains(got, "example.org") || !strings.Contains(got, "Recipient address rejected") {
		t.Fatalf("redacted %q", got)
	}
}
