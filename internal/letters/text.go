package letters

import (
	"strings"
	"unicode/utf8"

	"github.com/clinic/booking/views"
)

// The text part is written here in Go, not by a templ component: templ
// writes every { value } HTML-escaped ("&" as "&amp;", a quote as
// "&#34;") and joins a component's lines into one, so a plain-text part
// from templ would need every value wrapped in templ.Raw and every line
// break written by hand, which is this function with more steps.

// textWidth is where the text part's lines wrap. A word longer than the
// line, a link above all, is never broken: it stands on a line of its own.
const textWidth = 76

// plainText is the letter as plain text: the same words as the HTML part,
// links written out in full, each on its own line.
func plainText(vm views.EmailVM) string {
	var t text
	t.heading(vm.Heading)
	t.para(vm.Greeting)
	for _, p := range vm.Paragraphs {
		t.para(p)
	}
	t.facts(vm.Facts)
	for _, it := range vm.Items {
		t.item(it)
	}
	t.action(vm.Action)
	for _, p := range vm.After {
		t.para(p)
	}
	t.footer(vm.Footer)
	return t.String()
}

// text collects the lines of a text part, paragraphs one blank line apart.
type text struct {
	lines []string
}

func (t *text) String() string { return strings.Join(t.lines, "\n") + "\n" }

// blank starts a paragraph: one empty line after whatever came before.
func (t *text) blank() {
	if n := len(t.lines); n > 0 && t.lines[n-1] != "" {
		t.lines = append(t.lines, "")
	}
}

func (t *text) heading(s string) {
	t.lines = append(t.lines, wrap(s, "", "")...)
	t.lines = append(t.lines, strings.Repeat("=", min(utf8.RuneCountInString(s), textWidth)))
}

func (t *text) para(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	t.blank()
	t.lines = append(t.lines, wrap(s, "", "")...)
}

// facts are "Label:  value" lines, the values aligned, a long value
// continuing under itself.
func (t *text) facts(facts []views.EmailFact) {
	if len(facts) == 0 {
		return
	}
	t.blank()
	width := 0
	for _, f := range facts {
		width = max(width, utf8.RuneCountInString(f.Label)+1)
	}
	indent := strings.Repeat(" ", width+2)
	for _, f := range facts {
		label := f.Label + ":"
		label += strings.Repeat(" ", width+2-utf8.RuneCountInString(label))
		t.lines = append(t.lines, wrap(f.Value, label, indent)...)
	}
}

// item is a list entry: "* heading", its lines and link indented beneath.
func (t *text) item(it views.EmailItem) {
	t.blank()
	t.lines = append(t.lines, wrap(it.Heading, "* ", "  ")...)
	for _, l := range it.Lines {
		t.lines = append(t.lines, wrap(l, "  ", "  ")...)
	}
	if it.Action.URL != "" {
		t.lines = append(t.lines, wrap(it.Action.Label+":", "  ", "  ")...)
		t.lines = append(t.lines, "  "+it.Action.URL)
	}
}

// action is the button's label and, on the next line, its link in full.
func (t *text) action(a views.EmailAction) {
	if a.URL == "" {
		return
	}
	t.blank()
	t.lines = append(t.lines, wrap(a.Label+":", "", "")...)
	t.lines = append(t.lines, a.URL)
}

// footer follows the signature separator "-- " mail programs recognise.
func (t *text) footer(f views.EmailFooter) {
	t.blank()
	t.lines = append(t.lines, "-- ")
	for _, l := range []string{f.Name, f.Address, f.Contact} {
		if strings.TrimSpace(l) != "" {
			t.lines = append(t.lines, wrap(l, "", "")...)
		}
	}
	t.para(f.Note)
	if f.Privacy.URL != "" {
		t.blank()
		t.lines = append(t.lines, wrap(f.Privacy.Label+":", "", "")...)
		t.lines = append(t.lines, f.Privacy.URL)
	}
}

// wrap breaks s into lines of at most textWidth characters, the first
// starting with first and the others with rest. Any run of white space,
// a line break among them, is one space: a value cannot start a line of
// its own. A word too long for a line is not broken.
func wrap(s, first, rest string) []string {
	var lines []string
	line, empty := first, true
	for _, word := range strings.Fields(s) {
		switch {
		case empty:
			line += word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= textWidth:
			line += " " + word
		default:
			lines = append(lines, line)
			line = rest + word
		}
		empty = false
	}
	return append(lines, line)
}
