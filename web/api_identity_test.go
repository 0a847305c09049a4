package web_test

// The attacker's table through the JSON API: every spelling of one
// patient's address or number that booked as another patient before is
// refused (400) or meets the cooldown (429), and names that carry links
// are 400.

import (
	"testing"
	"time"

	"github.com/clinic/booking/internal/testkit"
)

func TestOnePatientOneIdentityAPI(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	typeID := c.Types[0].ID
	n := 0
	// next is a time of its own for each attempt: 16 half hours a day,
	// a week apart once a day is used up.
	next := func() time.Time {
		at := c.Monday(9, 0).AddDate(0, 0, 7*(n/16)).Add(time.Duration(n%16) * 30 * time.Minute)
		n++
		return at
	}
	// attempt holds a time and books it for patient: the answer to the book.
	attempt := func(t *testing.T, patient map[string]string) *response {
		t.Helper()
		client := clientID()
		h := a.hold(t, typeID, next(), client)
		r := a.do(t, "POST", bookPath(typeID), bookBody{HoldID: h.HoldID, ClientID: client, Patient: patient})
		if r.Status != 201 {
			a.release(t, h, client)
		}
		return r
	}
	victim := map[string]string{"name": "Vera Victim", "email": "victim.name@gmail.com", "phone": "+49 30 1234567"}
	if r := attempt(t, victim); r.Status != 201 {
		t.Fatalf("the victim's own booking: %d %s", r.Status, r.Body)
	}

	for name, email := range map[string]string{
		"PlusTag": "victim.name+1@gmail.com", "Dots": "v.i.c.t.i.m.name@gmail.com", "Googlemail": "victimname@googlemail.com",
		"CyrillicO": "victim.name@gmail.c\u043em", "FullWidthE": "victim.name@gmail.com\uff45",
		"FullWidthInDomain": "victim.name@gm\uff41il.com", "ZeroWidthSpace": "victim\u200b.name@gmail.com",
		"LRM": "victim.name\u200e@gmail.com", "RLM": "\u200fvictim.name@gmail.com", "ALM": "victim.name@gmail\u061c.com",
		"BOM": "victim.name\ufeff@gmail.com", "HangulFiller": "victim\u3164.name@gmail.com",
		"TagCharacters": "victim.name\U000e0074\U000e0061\U000e0067@gmail.com",
	} {
		t.Run(name, func(t *testing.T) {
			r := attempt(t, map[string]string{"name": "Vera Victim", "email": email})
			if r.Status == 429 {
				wantError(t, r, 429, "COOLDOWN", "")
				return
			}
			wantError(t, r, 400, "INVALID_ARGUMENT", "patient.email")
		})
	}
	for name, phone := range map[string]string{"InternationalPrefix": "0049 30 1234567", "National": "030 1234567"} {
		t.Run(name, func(t *testing.T) {
			wantError(t, attempt(t, map[string]string{"name": "Vera Victim", "email": "someone." + name + "@example.org", "phone": phone}),
				429, "COOLDOWN", "")
		})
	}

	for _, name := range []string{
		`<a href="https://evil.example/pay">Pay</a>`, "https://evil.example/pay", "evil.com", "Visit www.evil.example",
		"Call 0900 123456", "pay@evil.example", "Vera\u200bVictim",
	} {
		t.Run("Name/"+name, func(t *testing.T) {
			wantError(t, attempt(t, map[string]string{"name": name, "email": "link." + clientID() + "@example.org"}),
				400, "INVALID_ARGUMENT", "patient.name")
		})
	}
	for _, name := range []string{"O’Brien", "Zoë-Anne", "St.Clair", "J.R.R. Tolkien", "李小龍", "José María"} {
		t.Run("Name/"+name, func(t *testing.T) {
			if r := attempt(t, map[string]string{"name": name, "email": "real." + clientID() + "@example.org"}); r.Status != 201 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		})
	}
}
