package views

import (
	"context"
	"io"
	"time"

	"github.com/a-h/templ"

	"github.com/clinic/booking/internal/i18n"
)

// kioskSay renders c in each of a board's languages. A board of one
// language gets c as it is; a board that takes turns gets c once per
// language, each in an element (tag, "span" or "div") marked with its
// language, and the stylesheet shows the one whose turn it is (the
// board's data-lang, which the page's script moves on).
func kioskSay(langs []string, tag string, c templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		if len(langs) == 1 {
			return c.Render(i18n.WithLocalizer(ctx, i18n.For(langs[0])), w)
		}
		for _, l := range langs {
			// Languages and tags are the code's own, never a visitor's.
			if _, err := io.WriteString(w, "<"+tag+` class="kl" lang="`+templ.EscapeString(l)+`">`); err != nil {
				return err
			}
			if err := c.Render(i18n.WithLocalizer(ctx, i18n.For(l)), w); err != nil {
				return err
			}
			if _, err := io.WriteString(w, "</"+tag+">"); err != nil {
				return err
			}
		}
		return nil
	})
}

// kioskLang is the language a board's part is being rendered in.
func kioskLang(ctx context.Context) string { return i18n.FromContext(ctx).Lang() }

// kioskLongDay is t as the language being rendered says a day in full.
func kioskLongDay(ctx context.Context, t time.Time) string { return i18n.FromContext(ctx).LongDay(t) }

// kioskDay is t as a short day ("Mon 30 Nov", "Mo., 30. Nov.").
func kioskDay(ctx context.Context, t time.Time) string { return i18n.FromContext(ctx).Day(t) }

// KioskLanguageKey is the message that names a screen language
// (practice.KioskLanguages) on the staff page.
func KioskLanguageKey(lang string) string {
	switch lang {
	case "de":
		return "kiosks.language.de"
	case "en":
		return "kiosks.language.en"
	}
	return "kiosks.language.both"
}
