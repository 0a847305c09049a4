package httpx

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// validText reports whether a JSON body (or a piece of one) is text
// encoding/json decodes as written: valid UTF-8, and no \u escape of half
// a surrogate pair. Either would be stored as U+FFFD.
func validText(raw []byte) bool {
	return utf8.Valid(raw) && !loneSurrogate(raw)
}

// loneSurrogate reports whether raw holds a \u escape of a high surrogate
// not followed by one of a low surrogate, or of a low surrogate alone.
// Backslashes stand only inside strings in JSON, so raw is not parsed.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := escapedRune(raw[i:])
		switch {
		case !ok:
			i++ // an escape of one character, or not JSON (the decoder says so)
		case utf16.IsSurrogate(r) && r < 0xdc00:
			low, ok := escapedRune(raw[i+6:])
			if !ok || low < 0xdc00 || low > 0xdfff {
				return true
			}
			i += 11
		case utf16.IsSurrogate(r):
			return true
		default:
			i += 5
		}
	}
	return false
}

// escapedRune reads a \uXXXX escape at the start of b.
func escapedRune(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return rune(n), err == nil
}

// invalidUTF8Field names where a JSON body that is not valid text (see
// validText) goes wrong, anywhere in it: the dotted path of the member
// whose key or value holds the bad bytes ("patient.name"; an array's
// elements are named by the array), or "body" when that cannot be told.
// encoding/json would quietly store such bytes as U+FFFD, so the body is
// refused instead and the client is told which field to fix.
func invalidUTF8Field(raw []byte) string {
	type frame struct {
		object  bool
		wantKey bool
		key     string
	}
	var stack []frame
	path := func(last string) string {
		var parts []string
		for _, f := range stack {
			if f.object && f.key != "" {
				parts = append(parts, f.key)
			}
		}
		if last != "" {
			parts = append(parts, last)
		}
		if len(parts) == 0 {
			return "body"
		}
		return strings.Join(parts, ".")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return path("")
		}
		end := dec.InputOffset()
		bad := !validText(raw[prev:end])
		prev = end
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, frame{object: t == '{', wantKey: t == '{'})
				continue
			default:
				stack = stack[:top]
				top--
			}
		case string:
			if top >= 0 && stack[top].object && stack[top].wantKey {
				if bad {
					stack[top].key = "" // the key itself is what is wrong
					return path("")
				}
				stack[top].key = t
				stack[top].wantKey = false
				continue
			}
		}
		if bad {
			return path("")
		}
		if top >= 0 && stack[top].object {
			stack[top].wantKey = true
		}
	}
}
