// Package identity says when two ways of writing a patient's contact are
// the same person: the keys the cooldown, the allowances and the e-mail
// caps compare. A stored address stays as the patient typed it; only its
// key is compared.
//
// An e-mail address's key is its compatibility form (Unicode NFKC: a
// full-width "ｅ" is an "e"), in lower case, without a "+tag" in the local
// part, with the domain in its ASCII (IDNA) form; for Gmail, whose
// mailboxes ignore dots in the local part and answer under both
// gmail.com and googlemail.com, without the dots and under gmail.com.
// Characters that cannot appear in a real address (invisible ones, mixed
// scripts) are refused by the booking's validation before a key is made,
// so the key need not erase them.
//
// A phone number's key is its E.164 form (+4930123456), read with the
// clinic's country as the region of a number written without one
// (030 123456 in Germany); a number the library cannot read keeps its
// digits, which no E.164 key equals.
package identity

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// EmailKey is the form of an e-mail address that every spelling of one
// mailbox shares.
func EmailKey(email string) string {
	s := strings.ToLower(norm.NFKC.String(strings.TrimSpace(email)))
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return s
	}
	local, domain := s[:at], strings.TrimSuffix(s[at+1:], ".")
	if a, err := idna.Lookup.ToASCII(domain); err == nil {
		domain = a
	}
	// A local part that is all tag ("+news@") keeps it: nothing else
	// would be left to tell mailboxes apart.
	if i := strings.IndexByte(local, '+'); i > 0 {
		local = local[:i]
	}
	if domain == "googlemail.com" {
		domain = "gmail.com"
	}
	if domain == "gmail.com" {
		local = strings.ReplaceAll(local, ".", "")
	}
	return local + "@" + domain
}

// DefaultRegion is the country a clinic's phone numbers are read in until
// it says otherwise.
const DefaultRegion = "DE"

// ValidRegion reports whether region is an ISO 3166 region code (upper
// case) whose phone numbers the library knows.
func ValidRegion(region string) bool {
	return phonenumbers.GetSupportedRegions()[region]
}

// PhoneKey is the form of a phone number that every spelling of it
// shares: E.164, a number without a country code read as one of region's
// ("0049 30 1234", "+49 30 1234" and, in Germany, "030 1234" are one).
// An empty number has the empty key.
func PhoneKey(phone, region string) string {
	phone = strings.TrimSpace(norm.NFKC.String(phone))
	if phone == "" {
		return ""
	}
	if n, err := phonenumbers.Parse(phone, region); err == nil {
		return phonenumbers.Format(n, phonenumbers.E164)
	}
	return digits(phone)
}

// NeedsRegion reports whether phone is written without its country code,
// so that its key depends on the region it is read in.
func NeedsRegion(phone string) bool {
	phone = strings.TrimSpace(norm.NFKC.String(phone))
	if phone == "" || strings.HasPrefix(phone, "+") {
		return false
	}
	// Any other number may start with the region's own prefix for
	// dialling abroad (00 in most of the world, 011 in North America),
	// which only the region tells.
	return true
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
