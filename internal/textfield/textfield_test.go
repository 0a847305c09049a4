package textfield_test

import (
	"strings"
	"testing"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/textfield"
)

var fields = []textfield.Field{
	textfield.PatientName, textfield.PatientEmail, textfield.PatientPhone, textfield.Reason, textfield.Note,
	textfield.SpecialistName, textfield.TypeName, textfield.Description, textfield.KioskName,
	textfield.StaffName, textfield.StaffEmail, textfield.RoomName,
}

func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	ae := apperr.As(err)
	if ae == nil || ae.Code != "INVALID_ARGUMENT" || ae.Field() != field || ae.Message == "" {
		t.Fatalf("got %v, want INVALID_ARGUMENT naming %q", err, field)
	}
}

func TestCheckRefusesWhatNoFieldTakes(t *testing.T) {
	t.Parallel()
	refused := map[string]string{
		"NUL": "\x00", "Tab": "\t", "LineFeed": "\n", "CarriageReturn": "\r", "Escape": "\x1b", "Delete": "\x7f",
		"NextLine": "\u0085", "C1": "\u009b", "LineSeparator": "\u2028", "ParagraphSeparator": "\u2029",
		"LeftToRightEmbedding": "\u202a", "RightToLeftOverride": "\u202e",
		"LeftToRightIsolate": "\u2066", "PopDirectionalIsolate": "\u2069", "NotUTF8": "\xff",
	}
	for _, f := range fields {
		for name, bad := range refused {
			t.Run(f.Name+"/"+name, func(t *testing.T) {
				_, err := f.Check("a" + bad + "b")
				wantInvalid(t, err, f.Name)
			})
		}
	}
}

func TestCheckKeepsOrdinaryText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"Zoë Ødegård-O'Brien", "山田 太郎", "محمد", "+49 (30) 123-4567", "a@example.org", "☃ 🙂", "Dr. med. Müller\u200d"} {
		for _, f := range fields {
			got, err := f.Check("  " + s + " ")
			if err != nil && f.Max >= len([]rune(s)) {
				t.Errorf("%s: %q refused: %v", f.Name, s, err)
			}
			if err == nil && got != s {
				t.Errorf("%s: %q, want it trimmed to %q", f.Name, got, s)
			}
		}
	}
}

// Limits count characters, not bytes: a name in a script of two- or
// three-byte letters gets as many as one in ASCII.
func TestCheckCountsCharacters(t *testing.T) {
	t.Parallel()
	for _, f := range fields {
		for _, letter := range []string{"a", "é", "日", "🙂"} {
			if _, err := f.Check(strings.Repeat(letter, f.Max)); err != nil {
				t.Errorf("%s: %d × %q refused: %v", f.Name, f.Max, letter, err)
			}
			_, err := f.Check(strings.Repeat(letter, f.Max+1))
			wantInvalid(t, err, f.Name)
		}
	}
}

func TestCheckPasswordCountsBytes(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{strings.Repeat("p", 10), strings.Repeat("p", 72), strings.Repeat("é", 36), "pass\x00word\r\n"} {
		if err := textfield.CheckPassword(ok); err != nil {
			t.Errorf("%d bytes refused: %v", len(ok), err)
		}
	}
	for _, bad := range []string{"", "short", strings.Repeat("p", 73), strings.Repeat("é", 37), strings.Repeat("p", 100<<10)} {
		wantInvalid(t, textfield.CheckPassword(bad), "password")
	}
}
