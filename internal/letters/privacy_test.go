package letters_test

import (
	"strings"
	"testing"
)

// Every letter's footer links the clinic's privacy page, in the letter's
// language, in both parts; the text part after the signature separator.
func TestFooterLinksThePrivacyPage(t *testing.T) {
	t.Parallel()
	const privacyURL = "https://book.example.org/c/praxis/privacy"
	for _, tc := range []struct{ lang, label string }{
		{"en", "How we handle your data"},
		{"de", "Wie wir mit Ihren Daten umgehen"},
	} {
		for _, kind := range everyKind {
			in := input(kind, tc.lang, december)
			in.PrivacyURL = privacyURL
			l := compose(t, in)
			link := doc(t, l).Find(`[data-testid="mail-privacy"]`)
			if href, _ := link.Attr("href"); href != privacyURL || link.Text() != tc.label {
				t.Errorf("%s in %s: the HTML footer links %q as %q", kind, tc.lang, href, link.Text())
			}
			_, foot, ok := strings.Cut(l.Text, "\n-- \n")
			if !ok || !strings.Contains(foot, tc.label+":\n"+privacyURL) {
				t.Errorf("%s in %s: the text footer lacks the link:\n%s", kind, tc.lang, foot)
			}
		}
	}
	// Without the page's address (a letter composed elsewhere), no link.
	l := compose(t, input(everyKind[0], "en", december))
	if strings.Contains(l.Text, "How we handle") || strings.Contains(l.HTML, "mail-privacy") {
		t.Error("a letter without a privacy address links one")
	}
}
