package verify

// The tokens a correct code earns.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/clinic/booking/internal/identity"
)

// tokenMAC binds an expiry to an address's identity key.
func (s *Service) tokenMAC(email string, exp int64) []byte {
	m := hmac.New(sha256.New, s.cfg.Key)
	m.Write([]byte("verify-token\x00" + identity.EmailKey(email) + "\x00" + strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}

// Token is a token that verifies email for TokenLife: "v1.<expiry, unix
// seconds>.<HMAC>". It carries no address: only a booking with the same
// identity key can use it.
func (s *Service) Token(email string) string {
	exp := s.now().Add(TokenLife).Unix()
	return "v1." + strconv.FormatInt(exp, 10) + "." + base64.RawURLEncoding.EncodeToString(s.tokenMAC(email, exp))
}

// Verifies says whether token is one of Token's for email that has not
// expired. Anything else (malformed, expired, another address's, another
// server's) is false.
func (s *Service) Verifies(token, email string) bool {
	rest, ok := strings.CutPrefix(token, "v1.")
	if !ok || identity.EmailKey(email) == "" {
		return false
	}
	expText, macText, ok := strings.Cut(rest, ".")
	exp, err := strconv.ParseInt(expText, 10, 64)
	if !ok || err != nil || exp <= s.now().Unix() || exp > s.now().Add(TokenLife).Unix()+60 {
		return false
	}
	mac, err := base64.RawURLEncoding.DecodeString(macText)
	return err == nil && hmac.Equal(mac, s.tokenMAC(email, exp))
}
