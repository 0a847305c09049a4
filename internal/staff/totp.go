// The second factor's cryptography: TOTP codes (RFC 6238, through
// github.com/pquerna/otp), the sealed secret and the recovery codes.

package staff

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// TOTP's parameters: what every authenticator app assumes (30 s, six
// digits, SHA-1). A code is taken from the step before and after the
// current one too, for a phone's clock that is a little off.
const (
	totpPeriod = 30
	totpSkew   = 1
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// RecoveryCodeCount is how many recovery codes an account gets at once.
const RecoveryCodeCount = 10

// recoveryCodeBytes of randomness make a code: 80 bits, 16 base32 letters.
const recoveryCodeBytes = 10

var recoveryEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// keys are what the service derives from the server's key: one to seal
// TOTP secrets, one to hash recovery codes. Each purpose has its own, so
// neither can stand in for the other or for the server's signatures.
type keys struct {
	seal, recovery []byte
}

func deriveKeys(serverKey []byte) keys {
	if len(serverKey) == 0 {
		return keys{}
	}
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, serverKey)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	return keys{seal: derive("staff second factor: seal v1"), recovery: derive("staff second factor: recovery codes v1")}
}

var errNoKey = errors.New("staff: the service has no key for second factors (WithKey)")

// sealSecret encrypts a TOTP secret with AES-256-GCM, bound to its
// account (a sealed secret copied to another account's row does not open).
func (k keys) sealSecret(account uuid.UUID, secret string) ([]byte, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, []byte(secret), account[:]), nil
}

func (k keys) openSecret(account uuid.UUID, sealed []byte) (string, error) {
	aead, err := k.aead()
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("staff: sealed secret too short")
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, sealed[:n], sealed[n:], account[:])
	if err != nil {
		// Another server key (SECRET_KEY changed) or a damaged row: the
		// account signs in after an admin resets its second factor.
		return "", fmt.Errorf("open second-factor secret: %w", err)
	}
	return string(plain), nil
}

func (k keys) aead() (cipher.AEAD, error) {
	if k.seal == nil {
		return nil, errNoKey
	}
	block, err := aes.NewCipher(k.seal)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// recoveryHash is what is stored of a recovery code: an HMAC under the
// derived key, bound to the account. A fast hash is enough: the codes
// are 80 random bits, too many to try even at a hash's speed, so bcrypt's
// cost would buy nothing; the key keeps a dump alone from being checked
// against guesses at all.
func (k keys) recoveryHash(account uuid.UUID, code string) []byte {
	m := hmac.New(sha256.New, k.recovery)
	m.Write(account[:])
	m.Write([]byte(code))
	return m.Sum(nil)
}

// newRecoveryCode is a fresh code as it is shown: four groups of four.
func newRecoveryCode() (string, error) {
	b := make([]byte, recoveryCodeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	s := strings.ToLower(recoveryEncoding.EncodeToString(b))
	return s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16], nil
}

// normalRecoveryCode is a typed recovery code without spaces and dashes,
// in upper case; ok is false for anything that cannot be one.
func normalRecoveryCode(typed string) (string, bool) {
	s := strings.ToUpper(strings.NewReplacer("-", "", " ", "", "\t", "").Replace(typed))
	if len(s) != 16 {
		return "", false
	}
	if _, err := recoveryEncoding.DecodeString(s); err != nil {
		return "", false
	}
	return s, true
}

// totpCode is a typed six-digit code without spaces; ok is false for
// anything else.
func totpCode(typed string) (string, bool) {
	s := strings.ReplaceAll(strings.TrimSpace(typed), " ", "")
	if len(s) != 6 {
		return "", false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return "", false
		}
	}
	return s, true
}

// matchStep is the time step (Unix seconds / 30) whose code is code, among
// the steps around now; ok is false when none is.
func matchStep(secret, code string, now time.Time) (step int64, ok bool) {
	for d := -totpSkew; d <= totpSkew; d++ {
		t := now.Add(time.Duration(d*totpPeriod) * time.Second)
		want, err := totp.GenerateCodeCustom(secret, t, totpOpts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return t.Unix() / totpPeriod, true
		}
	}
	return 0, false
}

// newTOTPKey is a new secret for the account email of the clinic issuer,
// with the otpauth:// address an authenticator app reads from the QR code.
func newTOTPKey(issuer, email string) (secret, uri string, err error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: email, Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return "", "", fmt.Errorf("new TOTP key: %w", err)
	}
	return key.Secret(), key.URL(), nil
}

// totpURI is the otpauth:// address of a secret kept from before.
func totpURI(issuer, email, secret string) (string, error) {
	raw, err := recoveryEncoding.DecodeString(strings.ToUpper(secret))
	if err != nil {
		return "", fmt.Errorf("TOTP secret: %w", err)
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: email, Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, Secret: raw})
	if err != nil {
		return "", err
	}
	return key.URL(), nil
}
