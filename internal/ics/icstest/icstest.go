// Package icstest reads the iCalendar files package ics writes, for the
// tests of the packages that serve or send them: it checks the physical
// lines (CRLF, at most 75 octets, whole UTF-8 characters) and the
// calendar's structure, and hands back the one event's properties.
package icstest

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Prop is one content line: NAME;PARAMS:VALUE.
type Prop struct {
	Name, Params, Value string
}

// Parse checks the physical lines and returns the unfolded content lines.
func Parse(t testing.TB, raw string) []Prop {
	t.Helper()
	var out []Prop
	for _, l := range unfold(t, raw) {
		// The name and parameters end at the first ':' outside a quoted parameter value.
		inQuote, cut := false, -1
		for i, r := range l {
			if r == '"' {
				inQuote = !inQuote
			}
			if r == ':' && !inQuote {
				cut = i
				break
			}
		}
		if cut <= 0 {
			t.Errorf("content line without a name: %q", l)
			continue
		}
		name, params, _ := strings.Cut(l[:cut], ";")
		out = append(out, Prop{Name: strings.ToUpper(name), Params: params, Value: l[cut+1:]})
	}
	return out
}

// unfold splits raw into physical lines, checks each, and joins the
// continuation lines to the line they continue.
func unfold(t testing.TB, raw string) []string {
	t.Helper()
	if !strings.HasSuffix(raw, "\r\n") {
		t.Errorf("the file does not end with CRLF")
	}
	var logical []string
	for i, l := range strings.Split(strings.TrimSuffix(raw, "\r\n"), "\r\n") {
		if strings.ContainsAny(l, "\r\n") {
			t.Errorf("line %d has a bare CR or LF: %q", i+1, l)
		}
		if len(l) > 75 {
			t.Errorf("line %d is %d octets, more than 75: %q", i+1, len(l), l)
		}
		if !utf8.ValidString(l) {
			t.Errorf("line %d splits a UTF-8 character: %q", i+1, l)
		}
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			if len(logical) == 0 {
				t.Fatalf("the file starts with a continuation line")
			}
			logical[len(logical)-1] += l[1:]
			continue
		}
		logical = append(logical, l)
	}
	return logical
}

// Unescape undoes TEXT escaping.
func Unescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\;`, ";", `\,`, ",", `\n`, "\n", `\N`, "\n").Replace(s)
}

// Event is the one VEVENT's properties (name -> value; a property's
// parameters under "NAME;"), checking the calendar's structure on the way.
func Event(t testing.TB, raw string) map[string]string {
	t.Helper()
	props := Parse(t, raw)
	if len(props) < 2 || props[0] != (Prop{Name: "BEGIN", Value: "VCALENDAR"}) || props[len(props)-1] != (Prop{Name: "END", Value: "VCALENDAR"}) {
		t.Fatalf("not a VCALENDAR: %+v", props)
	}
	cal := map[string]string{}
	ev := map[string]string{}
	depth, events := 0, 0
	for _, p := range props[1 : len(props)-1] {
		switch {
		case p.Name == "BEGIN":
			depth++
			if p.Value == "VEVENT" {
				events++
			}
		case p.Name == "END":
			depth--
		case depth == 0:
			cal[p.Name] = p.Value
		case depth == 1:
			if _, dup := ev[p.Name]; dup && p.Name != "ATTENDEE" {
				t.Errorf("property %s twice in the event", p.Name)
			}
			ev[p.Name] = p.Value
			if p.Params != "" {
				ev[p.Name+";"] = p.Params
			}
		}
	}
	if depth != 0 || events != 1 {
		t.Fatalf("want exactly one VEVENT and balanced BEGIN/END (events %d, depth %d)", events, depth)
	}
	if cal["VERSION"] != "2.0" || cal["PRODID"] == "" {
		t.Errorf("calendar VERSION %q PRODID %q", cal["VERSION"], cal["PRODID"])
	}
	return ev
}

// Time reads the event's UTC DATE-TIME property name ("20260330T070000Z").
func Time(t testing.TB, ev map[string]string, name string) time.Time {
	t.Helper()
	v := ev[name]
	if ev[name+";"] != "" {
		t.Errorf("%s has parameters %q; want a plain UTC value", name, ev[name+";"])
	}
	if !strings.HasSuffix(v, "Z") {
		t.Fatalf("%s = %q: want UTC (…Z)", name, v)
	}
	tm, err := time.Parse("20060102T150405Z", v)
	if err != nil {
		t.Fatalf("%s = %q: %v", name, v, err)
	}
	return tm
}
