package i18n

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"
)

func keySet(t *testing.T, lang string) map[string]bool {
	t.Helper()
	keys, err := Keys(lang)
	if err != nil {
		t.Fatalf("keys of %s: %v", lang, err)
	}
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// Every key of one language file is in the other.
func TestLocaleFilesHaveTheSameKeys(t *testing.T) {
	en, de := keySet(t, English), keySet(t, German)
	if len(en) < 50 {
		t.Fatalf("en.toml has only %d keys", len(en))
	}
	for k := range en {
		if !de[k] {
			t.Errorf("%q is in en.toml but not in de.toml", k)
		}
	}
	for k := range de {
		if !en[k] {
			t.Errorf("%q is in de.toml but not in en.toml", k)
		}
	}
}

// usedKey finds the keys the templates and handlers ask for:
// T(ctx, "key"), Tf(ctx, "key", ...) and l.T("key", ...); tableKey the
// keys the web handlers' tables name ("error.SLOT_TAKEN").
var (
	usedKey  = regexp.MustCompile(`(?:\bTf?\(ctx, |\.T\()"([^"]+)"`)
	tableKey = regexp.MustCompile(`"((?:error|panel)\.[A-Za-z_.]+)"`)
)

// Every key the templates and the web handlers use has a message.
func TestUsedKeysExist(t *testing.T) {
	en := keySet(t, English)
	var files []string
	for _, pattern := range []string{"../../views/*.templ", "../../web/*.go", "../../web/*/*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	used := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found := usedKey.FindAllSubmatch(b, -1)
		if filepath.Ext(f) == ".go" {
			found = append(found, tableKey.FindAllSubmatch(b, -1)...)
		}
		for _, m := range found {
			used++
			if !en[string(m[1])] {
				t.Errorf("%s uses %q, which has no message", filepath.Base(f), m[1])
			}
		}
	}
	if used < 50 {
		t.Fatalf("found only %d uses of keys: is the scan still right?", used)
	}
}

func TestGermanDates(t *testing.T) {
	de := For(German)
	at := time.Date(2026, 11, 24, 14, 30, 0, 0, time.UTC) // a Tuesday
	cases := map[string][2]string{
		"Day":          {de.Day(at), "Di., 24. Nov."},
		"Time":         {de.Time(at), "14:30"},
		"DayMonthYear": {de.DayMonthYear(at), "24. Nov. 2026"},
		"LongDay":      {de.LongDay(at), "Dienstag, 24. November"},
		"LongDateTime": {de.LongDateTime(at), "Dienstag, 24. November 2026, 14:30"},
		"March":        {de.Day(time.Date(2026, 3, 1, 9, 5, 0, 0, time.UTC)), "So., 1. März"},
		"Morning":      {de.Time(time.Date(2026, 3, 1, 9, 5, 0, 0, time.UTC)), "09:05"},
	}
	for name, c := range cases {
		if c[0] != c[1] {
			t.Errorf("%s: got %q, want %q", name, c[0], c[1])
		}
	}
}

func TestEnglishDatesAsBefore(t *testing.T) {
	en := For(English)
	at := time.Date(2026, 11, 24, 14, 30, 0, 0, time.UTC)
	if got := en.Day(at); got != "Tue 24 Nov" {
		t.Errorf("Day: %q", got)
	}
	if got := en.LongDateTime(at); got != "Tuesday 24 November 2026, 14:30" {
		t.Errorf("LongDateTime: %q", got)
	}
	if got := en.DayMonthYear(at); got != "24 Nov 2026" {
		t.Errorf("DayMonthYear: %q", got)
	}
}

func TestChoose(t *testing.T) {
	cases := []struct {
		name, cookie, accept, clinic, want string
	}{
		{"clinic default", "", "", "de", "de"},
		{"accept beats clinic", "", "en-GB,en;q=0.9", "de", "en"},
		{"accept German", "", "de-AT, en;q=0.5", "en", "de"},
		{"accept names a later supported one", "", "fr-FR, de;q=0.8", "en", "de"},
		{"cookie beats accept", "de", "en-US", "en", "de"},
		{"cookie beats clinic", "en", "", "de", "en"},
		{"unsupported accept falls back to clinic", "", "fr-FR, it;q=0.5", "de", "de"},
		{"unsupported cookie is ignored", "fr", "", "de", "de"},
		{"garbage accept", "", ";;;", "de", "de"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		if c.cookie != "" {
			r.Header.Set("Cookie", CookieName+"="+c.cookie)
		}
		if c.accept != "" {
			r.Header.Set("Accept-Language", c.accept)
		}
		if got := Choose(r, c.clinic).Lang(); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestTranslateWithData(t *testing.T) {
	if got := For(German).T("kiosk.n_free", map[string]any{"N": 3}); got != "3 frei" {
		t.Errorf("got %q", got)
	}
	if got := For("fr").Lang(); got != English {
		t.Errorf("unsupported language: %q", got)
	}
	if !slices.Equal(Supported, []string{"en", "de"}) {
		t.Errorf("supported: %v", Supported)
	}
	if got := SwitchLink("/c/x?week=2026-11-23", German); got != "/c/x?week=2026-11-23&lang=de" {
		t.Errorf("switch link: %q", got)
	}
}

func TestZoneAsPeopleSayIt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ lang, zone, want string }{
		{English, "Europe/Berlin", "Berlin time"},
		{German, "Europe/Berlin", "Berliner Zeit"},
		{English, "America/New_York", "New York time"},
		{German, "America/New_York", "New Yorker Zeit"},
		{German, "Asia/Tokyo", "Ortszeit Tokyo"},
		{English, "UTC", "UTC"},
		{German, "Etc/GMT+2", "Etc/GMT+2"},
	} {
		if got := For(c.lang).Zone(c.zone); got != c.want {
			t.Errorf("%s Zone(%q) = %q, want %q", c.lang, c.zone, got, c.want)
		}
	}
}
