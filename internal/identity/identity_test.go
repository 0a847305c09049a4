package identity_test

import (
	"testing"

	"github.com/clinic/booking/internal/identity"
)

func TestEmailKeySpellingsOfOneMailbox(t *testing.T) {
	t.Parallel()
	for key, spellings := range map[string][]string{
		"victim@example.com": {
			"victim@example.com", " Victim@Example.COM ", "victim+1@example.com", "victim+any+thing@example.com",
			"victim@example.com.", "victim@ｅxample.com", "ｖｉｃｔｉｍ@ｅｘａｍｐｌｅ.ｃｏｍ",
		},
		"janedoe@gmail.com": {
			"jane.doe@gmail.com", "j.a.n.e.d.o.e@gmail.com", "Jane.Doe+x@GMail.com", "jane.doe@googlemail.com", "janedoe@googlemail.com",
		},
		"+news@example.com":       {"+news@example.com"},
		"müller@xn--bcher-kva.de": {"Müller@bücher.de", "müller@xn--bcher-kva.de"},
	} {
		for _, s := range spellings {
			if got := identity.EmailKey(s); got != key {
				t.Errorf("EmailKey(%q) = %q, want %q", s, got, key)
			}
		}
	}
	// Dots count elsewhere: another provider may give them to two people.
	if identity.EmailKey("jane.doe@example.com") == identity.EmailKey("janedoe@example.com") {
		t.Error("dots ignored outside Gmail")
	}
}

func TestPhoneKeySpellingsOfOneNumber(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"+49 30 1234567", "0049 30 1234567", "030 1234567", "030/123 45 67", "(030) 123-4567", "+49 (0)30 1234567", "+４９ ３０ １２３４５６７"} {
		if got := identity.PhoneKey(s, "DE"); got != "+49301234567" {
			t.Errorf("PhoneKey(%q, DE) = %q, want +49301234567", s, got)
		}
	}
	// The clinic's country reads a number without a country code.
	if got := identity.PhoneKey("030 1234567", "AT"); got != "+43301234567" {
		t.Errorf("PhoneKey(030 1234567, AT) = %q", got)
	}
	if got := identity.PhoneKey("+49 30 1234567", "US"); got != "+49301234567" {
		t.Errorf("a number with its country code depends on the region: %q", got)
	}
	if got := identity.PhoneKey("", "DE"); got != "" {
		t.Errorf("PhoneKey of no number = %q", got)
	}
}

func TestValidRegion(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"DE", "AT", "CH", "US", "GB"} {
		if !identity.ValidRegion(ok) {
			t.Errorf("%s refused", ok)
		}
	}
	for _, bad := range []string{"", "de", "XX", "DEU", "ZZ"} {
		if identity.ValidRegion(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNeedsRegion(t *testing.T) {
	t.Parallel()
	for phone, want := range map[string]bool{"": false, "+49 30 1": false, "030 1": true, "0049 30 1": true} {
		if got := identity.NeedsRegion(phone); got != want {
			t.Errorf("NeedsRegion(%q) = %v", phone, got)
		}
	}
}
