package httpx

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// Signer makes and checks the HMACs; each purpose has its own label, so a
// value signed for one is worth nothing for another.
type Signer struct{ Key []byte }

// Sign is the HMAC of parts for purpose.
func (g Signer) Sign(purpose string, parts ...string) []byte {
	m := hmac.New(sha256.New, g.Key)
	m.Write([]byte(purpose))
	for _, p := range parts {
		m.Write([]byte{0})
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// RandomHex is n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Cookie is an HTTP-only, same-site cookie, secure when sessions are.
func (s *Kit) Cookie(name, value, path string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.deps.Sessions.Cookie.Secure,
	}
}
