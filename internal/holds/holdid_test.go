package holds

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestHoldIDEncodesItsClinic(t *testing.T) {
	t.Parallel()
	clinic := uuid.New()
	seen := map[string]bool{}
	for range 100 {
		id := newHoldID(clinic)
		if len(id) != 53 || id[0] != 'h' {
			t.Fatalf("hold id %q: want 'h' + 52 hex digits", id)
		}
		got, ok := ParseHoldID(id)
		if !ok || got != clinic {
			t.Fatalf("ParseHoldID(%q) = %s, %v; want %s", id, got, ok, clinic)
		}
		if seen[id] {
			t.Fatalf("hold id %q repeated", id)
		}
		seen[id] = true
	}
}

func TestParseHoldIDRejectsGarbage(t *testing.T) {
	t.Parallel()
	good := newHoldID(uuid.New())
	bad := []string{
		"",
		"h",
		"garbage",
		good[:52],      // too short
		good + "0",     // too long
		"x" + good[1:], // wrong prefix
		"H" + good[1:], // prefix is lowercase
		strings.ToUpper(good[:1]) + strings.ToUpper(good[1:]), // uppercase hex
		good[:10] + "g" + good[11:],                           // not hex
		good[:10] + " " + good[11:],                           // space
		good[:52] + "é"[:1],                                   // a stray byte
		"h" + strings.Repeat("0", 32) + good[33:],             // nil clinic
		"h" + uuid.New().String()[:32] + good[33:],            // dashes in the clinic part
	}
	for _, s := range bad {
		if c, ok := ParseHoldID(s); ok {
			t.Errorf("ParseHoldID(%q) = %s, true; want rejected", s, c)
		}
	}
}
