package signin

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clinic/booking/web/httpx"
)

// The sign-in form needs no session: its CSRF token is a double submit.
// The browser gets a random value in a cookie, and the form carries the
// HMAC of that value under the server's secret; POST /staff/login wants
// both to match. A site that cannot read the cookie cannot make the
// field, and nothing is stored, so anonymous visits to the form write no
// session rows.
//
// A browser that signs in gets a device cookie naming the account (an
// HMAC over the e-mail address, with a random device id and an expiry).
// Sign-in attempts from such a known device are limited per device; only
// unknown devices count against the account, so strangers guessing an
// account's password cannot lock its owner out.

const (
	loginCSRFCookie = "clinic_login"
	deviceCookie    = "clinic_device"
	deviceLifetime  = 365 * 24 * time.Hour
)

// loginCSRF is the sign-in form's token for this browser; the cookie it
// depends on is set when the browser has none.
func (s *SignIn) loginCSRF(c echo.Context) string {
	nonce := ""
	if ck, err := c.Cookie(loginCSRFCookie); err == nil && len(ck.Value) == 32 {
		if _, err := hex.DecodeString(ck.Value); err == nil {
			nonce = ck.Value
		}
	}
	if nonce == "" {
		nonce = httpx.RandomHex(16)
		// A browser-session cookie, sent only to the sign-in form.
		c.SetCookie(s.kit.Cookie(loginCSRFCookie, nonce, "/staff/login", 0))
	}
	return hex.EncodeToString(s.kit.Signer.Sign("login-csrf", nonce))
}

// loginCSRFValid checks the double submit of POST /staff/login.
func (s *SignIn) loginCSRFValid(c echo.Context) bool {
	ck, err := c.Cookie(loginCSRFCookie)
	if err != nil || ck.Value == "" {
		return false
	}
	got, err := hex.DecodeString(c.FormValue("_csrf"))
	if err != nil {
		return false
	}
	return hmac.Equal(got, s.kit.Signer.Sign("login-csrf", ck.Value))
}

// knownDevice returns the device id of this browser's device cookie when
// the cookie is genuine, unexpired and names the account of email.
func (s *SignIn) knownDevice(c echo.Context, email string) (string, bool) {
	ck, err := c.Cookie(deviceCookie)
	if err != nil {
		return "", false
	}
	// id.expiry.mac
	id, rest, ok1 := strings.Cut(ck.Value, ".")
	exp, mac, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 {
		return "", false
	}
	until, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || time.Now().Unix() > until {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil {
		return "", false
	}
	if !hmac.Equal(got, s.kit.Signer.Sign("device", id, exp, email)) {
		return "", false
	}
	return id, true
}

// rememberDevice gives the browser that just signed in as email a device
// cookie for the account (a new one each time, valid for a year).
func (s *SignIn) rememberDevice(c echo.Context, email string) {
	id := httpx.RandomHex(16)
	exp := strconv.FormatInt(time.Now().Add(deviceLifetime).Unix(), 10)
	mac := base64.RawURLEncoding.EncodeToString(s.kit.Signer.Sign("device", id, exp, email))
	c.SetCookie(s.kit.Cookie(deviceCookie, id+"."+exp+"."+mac, "/staff/login", int(deviceLifetime/time.Second)))
}
