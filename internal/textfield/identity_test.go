package textfield_test

import (
	"testing"

	"github.com/clinic/booking/internal/textfield"
)

func TestInvisible(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]rune{
		"ZeroWidthSpace": 0x200B, "ZeroWidthNonJoiner": 0x200C, "ZeroWidthJoiner": 0x200D, "WordJoiner": 0x2060,
		"LRM": 0x200E, "RLM": 0x200F, "ALM": 0x061C, "BOM": 0xFEFF, "SoftHyphen": 0x00AD,
		"HangulFiller": 0x3164, "HalfwidthHangulFiller": 0xFFA0, "HangulChoseongFiller": 0x115F, "HangulJungseongFiller": 0x1160,
		"TagA": 0xE0041, "CancelTag": 0xE007F, "LanguageTag": 0xE0001, "VariationSelector16": 0xFE0F,
		"VariationSelector256": 0xE01EF, "CombiningGraphemeJoiner": 0x034F, "BrailleBlank": 0x2800, "MongolianVowelSeparator": 0x180E,
	} {
		if got, ok := textfield.Invisible("a" + string(r) + "b"); !ok || got != r {
			t.Errorf("%s (U+%04X) not found: %U %v", name, r, got, ok)
		}
	}
	for _, s := range []string{"Zoë Ødegård-O’Brien", "山田 太郎", "محمد", "ada@example.org", "Nguyễn"} {
		if r, ok := textfield.Invisible(s); ok {
			t.Errorf("%q: U+%04X called invisible", s, r)
		}
	}
}

func TestCompatible(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ada@example.org", "Zoë", "Zoe\u0308", "山田", "Straße"} {
		if !textfield.Compatible(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"ｅxample", "ﬁle", "ª", "x²", "Ⓐda", "ｱ"} {
		if textfield.Compatible(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestMixedScripts(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ex\u0430mple.com", "gmail.c\u043em", "g\u03bfogle", "vict\u0456m@example.org", "abcд"} {
		if !textfield.MixedScripts(s) {
			t.Errorf("%q not mixed", s)
		}
	}
	for _, s := range []string{"ada@example.org", "иван@пример.рф", "山田@example.jp", "日本語ひらがなカタカナ", "한국어漢字", "ada-Иван", "O’Brien", "x2.example"} {
		if textfield.MixedScripts(s) {
			t.Errorf("%q called mixed", s)
		}
	}
}
