package ics

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fold keeps a line of exactly 75 octets whole, cuts a longer one at 75
// and its continuations at 74 (plus the space), and moves a cut that
// would land inside a UTF-8 sequence back to the character's start.
func TestFold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"short", "SUMMARY:x", []string{"SUMMARY:x"}},
		{"exactly 75", strings.Repeat("a", 75), []string{strings.Repeat("a", 75)}},
		{"76", strings.Repeat("a", 76), []string{strings.Repeat("a", 75), " a"}},
		{"two continuations", strings.Repeat("a", 75+74+1), []string{strings.Repeat("a", 75), " " + strings.Repeat("a", 74), " a"}},
		{"umlaut across the cut", strings.Repeat("a", 74) + "ü" + "b", []string{strings.Repeat("a", 74), " üb"}},
	} {
		got := strings.Split(fold(tc.in), "\r\n")
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: folded to %q, want %q", tc.name, got, tc.want)
		}
		for _, l := range got {
			if len(l) > 75 || !utf8.ValidString(l) {
				t.Errorf("%s: physical line %q", tc.name, l)
			}
		}
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	if got, want := escape("a\\b;c,d\ne"), `a\\b\;c\,d\ne`; got != want {
		t.Errorf("escape: %q, want %q", got, want)
	}
}
