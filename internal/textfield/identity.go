package textfield

// What makes two different strings look like one person's name or
// address: characters that show nothing, compatibility forms of letters
// (full-width "ｅ"), and letters of two scripts mixed in one word (a Latin
// "example" with a Cyrillic "а"). A patient's name and e-mail address are
// compared and shown to people, so they refuse these; other fields
// (reasons, notes, descriptions) may hold them, as emoji sequences and
// some scripts' words need joiners.

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Invisible is the first character of s that shows nothing where it
// stands, and whether there is one: format characters (Unicode category
// Cf: zero-width space and joiners, the left-to-right and right-to-left
// marks, the Arabic letter mark, the byte order mark, the tag characters
// U+E0001-U+E007F), the other default-ignorable code points (variation
// selectors, the combining grapheme joiner, the Hangul fillers U+115F,
// U+1160, U+3164 and U+FFA0), and the blank Braille pattern U+2800, a
// filler that renders as a space without being one.
func Invisible(s string) (rune, bool) {
	for _, r := range s {
		if invisible(r) {
			return r, true
		}
	}
	return 0, false
}

func invisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r):
		return true
	case r >= 0xE0000 && r <= 0xE0FFF: // tags, variation selectors and what is reserved around them
		return true
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x2800:
		return true
	}
	return false
}

// Compatible reports whether s is written without compatibility forms:
// Unicode NFKC would change nothing that NFC keeps. Full-width letters,
// ligatures ("ﬁ"), circled and superscript letters are such forms; a
// real address or name never needs them, and each reads as the plain
// letter it stands for.
func Compatible(s string) bool {
	nfc := norm.NFC.String(s)
	return norm.NFKC.String(nfc) == nfc
}

// MixedScripts reports whether one word of s (the parts between dots, @
// signs, spaces, hyphens and apostrophes) holds letters of more than one
// script, Japanese and Korean writing's usual mixes with Han aside. Such
// a word is how a lookalike of another is made: "exаmple" with a
// Cyrillic "а".
func MixedScripts(s string) bool {
	for _, word := range strings.FieldsFunc(s, func(r rune) bool {
		return r == '.' || r == '@' || r == '-' || r == '\'' || r == '’' || unicode.IsSpace(r)
	}) {
		if mixed(word) {
			return true
		}
	}
	return false
}

// compatibleScripts are scripts written together in one word.
var compatibleScripts = map[string]string{
	"Hiragana": "Japanese", "Katakana": "Japanese", "Han": "CJK", "Hangul": "Korean", "Bopomofo": "CJK",
}

func mixed(word string) bool {
	var first string
	cjk := false
	for _, r := range word {
		sc := script(r)
		if sc == "" {
			continue
		}
		if _, ok := compatibleScripts[sc]; ok {
			// Han with kana or Hangul is one writing; any of them with
			// another script is a mix.
			if first != "" && !cjk {
				return true
			}
			cjk = true
			if first == "" {
				first = sc
			}
			continue
		}
		if cjk || (first != "" && first != sc) {
			return true
		}
		first = sc
	}
	return false
}

// script is the script of a letter or mark, or "" for characters every
// script shares (digits, punctuation, combining accents).
func script(r rune) string {
	if r < 0x80 {
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return ""
	}
	if unicode.In(r, unicode.Common, unicode.Inherited) {
		return ""
	}
	for name, table := range unicode.Scripts {
		if unicode.Is(table, r) {
			return name
		}
	}
	return ""
}
