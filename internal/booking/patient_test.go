package booking_test

import (
	"testing"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
)

func validate(name, email string) error {
	_, err := booking.ValidatePatient(booking.Patient{Name: name, Email: email})
	return err
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	e := apperr.As(err)
	if e == nil || e.Code != apperr.CodeInvalidArgument || e.Field() != field || e.Message == "" {
		t.Fatalf("want INVALID_ARGUMENT naming %s, got %v", field, err)
	}
}

// A patient's name goes into the clinic's e-mails, where a mail client
// makes a link of anything that looks like one.
func TestNamesThatCarryLinksAreRefused(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		`<a href="https://evil.example/pay">Pay here</a>`,
		"Pay at https://evil.example/pay",
		"Pay at evil.example/pay",
		"evil.com",
		"Visit evil.com now",
		"John Evil.com",
		"EVIL.COM",
		"böse.de",
		"pay.co.uk",
		"www.evil",
		"Go to www.example",
		"mail me@evil.example",
		"Call 0900 123456",
		"Call 0 9 0 0",
		"Anna 1990",
		"Tom <tom>",
		"ftp://evil",
		"Ada\u200bLovelace",
		"Ada\u200eLovelace",
		"Ada\u3164",
		"\u3164",
		"Ada\U000e0041",
		"...",
		"Ｊｏｈｎ Ｓｍｉｔｈ",
		// An address behind the punctuation of names is still an address.
		"Ann evil.com'", "Ann 'evil.com'", "Ann evil.com-", "Ann evil.com·",
		"Ann evil.comʼ", "Ann evil.com‐x", "Prize at ’evil.com’", "Mary-Jane,evil.com",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wantField(t, validate(name, "ada@example.org"), "patient.name")
		})
	}
}

func TestRealNamesAreAccepted(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"O’Brien", "O'Brien", "Zoë-Anne", "Zoe\u0308-Anne", "St.Clair", "St. Clair", "J.R.R. Tolkien", "李小龍", "José María",
		"Ødegård, Kari", "Nguyễn Văn An", "محمد", "Gal·la", "Smith Jr.", "Louis XIV", "Anne-Marie d’Arc", "Dr. med. Müller",
		"Ngũgĩ wa Thiong’o", "Mary-Kate O'Neil", "A.J. Smith", "Jean‐Luc",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := booking.ValidatePatient(booking.Patient{Name: " " + name + " ", Email: "ada@example.org"})
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if p.Name != name {
				t.Fatalf("kept as %q", p.Name)
			}
		})
	}
}

// The address is kept as typed (trimmed): only its key is compared.
func TestEmailKeptAsTyped(t *testing.T) {
	t.Parallel()
	p, err := booking.ValidatePatient(booking.Patient{Name: "Ada", Email: "  Ada.Lovelace+clinic@GMail.com "})
	if err != nil || p.Email != "Ada.Lovelace+clinic@GMail.com" {
		t.Fatalf("got %q, %v", p.Email, err)
	}
	for _, ok := range []string{"müller@bücher.de", "山田@example.jp", "ada@xn--bcher-kva.de", "иван@пример.рф"} {
		if err := validate("Ada", ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}
