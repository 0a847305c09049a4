// Package i18n is the language of the patient pages, the staff pages,
// the kiosk board and the calendar file: English and German.
//
// A request's language is chosen once, by Choose: the "lang" cookie (set
// by the page footer's switcher) wins, then the first supported language
// the browser's Accept-Language names, then the clinic's own language.
// The chosen Localizer travels in the request's context (WithLocalizer);
// templates read it from the ctx templ hands them (views.T, views.Tf), and
// handlers that shape view models read it with FromContext. A context
// without one speaks English. Live fragments are rendered with a context
// carrying the viewer's Localizer, so a stream speaks its page's language.
//
// Messages live in locales/en.toml and locales/de.toml (patient pages,
// kiosk, e-mail) and locales/<area>.en.toml, locales/<area>.de.toml for
// the staff pages, embedded in the binary; each language holds exactly
// the same keys (a test says so).
package i18n

import (
	"context"
	"embed"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

// The languages the pages speak; English is the fallback.
const (
	English = "en"
	German  = "de"
)

// Supported lists the languages in the switcher's order.
var Supported = []string{English, German}

// CookieName is the switcher's cookie.
const CookieName = "lang"

//go:embed locales/*.toml
var localeFiles embed.FS

var (
	bundleOnce sync.Once
	bundle     *goi18n.Bundle
	localizers map[string]*Localizer
	matcher    = language.NewMatcher([]language.Tag{language.English, language.German})
)

func load() {
	bundle = goi18n.NewBundle(language.English)
	bundle.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	localizers = map[string]*Localizer{}
	for _, lang := range Supported {
		files, err := localeFilesOf(lang)
		if err != nil {
			panic("i18n: " + err.Error())
		}
		for _, f := range files {
			if _, err := bundle.LoadMessageFileFS(localeFiles, f); err != nil {
				panic("i18n: " + err.Error())
			}
		}
		localizers[lang] = &Localizer{lang: lang, l: goi18n.NewLocalizer(bundle, lang)}
	}
}

// Localizer translates into one language.
type Localizer struct {
	lang string
	l    *goi18n.Localizer
}

// For is the Localizer of lang; an unsupported one gets English.
func For(lang string) *Localizer {
	bundleOnce.Do(load)
	if l, ok := localizers[lang]; ok {
		return l
	}
	return localizers[English]
}

// IsSupported reports whether lang is one of Supported.
func IsSupported(lang string) bool {
	for _, s := range Supported {
		if s == lang {
			return true
		}
	}
	return false
}

// orEnglish lets a nil Localizer speak English.
func (l *Localizer) orEnglish() *Localizer {
	if l == nil {
		return For(English)
	}
	return l
}

// Lang is the localizer's language, "en" or "de".
func (l *Localizer) Lang() string { return l.orEnglish().lang }

// T is the message key in l's language, with data filling its
// {{.Placeholders}}. A key without a message is returned as it is (the
// key-parity test keeps that from reaching a page).
func (l *Localizer) T(key string, data map[string]any) string {
	l = l.orEnglish()
	s, err := l.l.Localize(&goi18n.LocalizeConfig{MessageID: key, TemplateData: data})
	if err != nil {
		return key
	}
	return s
}

// Choose picks the language of a request for a clinic speaking
// clinicLang: the cookie, then Accept-Language, then the clinic's.
func Choose(r *http.Request, clinicLang string) *Localizer {
	if ck, err := r.Cookie(CookieName); err == nil && IsSupported(ck.Value) {
		return For(ck.Value)
	}
	if lang, ok := FromAcceptLanguage(r.Header.Get("Accept-Language")); ok {
		return For(lang)
	}
	return For(clinicLang)
}

// FromAcceptLanguage is the supported language an Accept-Language header
// names, if it names one.
func FromAcceptLanguage(header string) (string, bool) {
	if header == "" {
		return "", false
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(tags) == 0 {
		return "", false
	}
	_, idx, conf := matcher.Match(tags...)
	if conf == language.No {
		return "", false
	}
	return Supported[idx], true
}

type ctxKey struct{}

// WithLocalizer is ctx carrying l.
func WithLocalizer(ctx context.Context, l *Localizer) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// FromContext is the Localizer ctx carries, or English.
func FromContext(ctx context.Context) *Localizer {
	if l, ok := ctx.Value(ctxKey{}).(*Localizer); ok && l != nil {
		return l
	}
	return For(English)
}

// Has reports whether ctx carries a Localizer.
func Has(ctx context.Context) bool {
	l, ok := ctx.Value(ctxKey{}).(*Localizer)
	return ok && l != nil
}

type switchKey struct{}

// WithSwitch is ctx for a page that shows the language switcher; url is
// the page's own path and query, where each link leads back to.
func WithSwitch(ctx context.Context, url string) context.Context {
	return context.WithValue(ctx, switchKey{}, url)
}

// SwitchURL is the page the switcher leads back to, when it is shown.
func SwitchURL(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(switchKey{}).(string)
	return u, ok
}

// SwitchParam is the query parameter a switcher link carries; the server
// turns it into the cookie and sends the browser back without it.
const SwitchParam = "lang"

// SwitchLink is url with the switcher's parameter for lang.
func SwitchLink(url, lang string) string {
	if strings.Contains(url, "?") {
		return url + "&" + SwitchParam + "=" + lang
	}
	return url + "?" + SwitchParam + "=" + lang
}

// localeFilesOf are lang's message files: locales/<lang>.toml for the
// patient pages and locales/<area>.<lang>.toml for each other area (the
// staff pages' files), so each area's words live in a file of their own.
func localeFilesOf(lang string) ([]string, error) {
	entries, err := localeFiles.ReadDir("locales")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if name == lang+".toml" || strings.HasSuffix(name, "."+lang+".toml") {
			files = append(files, "locales/"+name)
		}
	}
	return files, nil
}

// Keys are the message keys of lang's files; a key in two of them is an
// error, since one would silently hide the other.
func Keys(lang string) ([]string, error) {
	files, err := localeFilesOf(lang)
	if err != nil {
		return nil, err
	}
	seen := map[string]string{}
	var keys []string
	for _, f := range files {
		b, err := localeFiles.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var m map[string]string
		if err := toml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for k := range m {
			if other, ok := seen[k]; ok {
				return nil, fmt.Errorf("%q is in both %s and %s", k, other, f)
			}
			seen[k] = f
			keys = append(keys, k)
		}
	}
	return keys, nil
}
