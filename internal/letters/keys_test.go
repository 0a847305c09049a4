package letters_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/i18n"
)

var mailKey = regexp.MustCompile(`"(mail\.[A-Za-z_.]+)"`)

// Every mail.* key the letters use has a message in both languages, and
// every mail.* message is used. (The i18n package checks that both files
// hold the same keys; its scan of used keys does not look here.)
func TestMailKeysInBothCatalogues(t *testing.T) {
	t.Parallel()
	catalogues := map[string]map[string]bool{}
	for _, lang := range i18n.Supported {
		keys, err := i18n.Keys(lang)
		if err != nil {
			t.Fatal(err)
		}
		catalogues[lang] = map[string]bool{}
		for _, k := range keys {
			catalogues[lang][k] = true
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mailKey.FindAllSubmatch(b, -1) {
			used[string(m[1])] = true
		}
	}
	if len(used) < 30 {
		t.Fatalf("found only %d mail keys in use: is the scan still right?", len(used))
	}
	for k := range used {
		for lang, keys := range catalogues {
			if !keys[k] {
				t.Errorf("%s is used but not in %s.toml", k, lang)
			}
		}
	}
	for lang, keys := range catalogues {
		for k := range keys {
			if strings.HasPrefix(k, "mail.") && !used[k] {
				t.Errorf("%s.toml has %s, which no letter uses", lang, k)
			}
		}
	}
}
