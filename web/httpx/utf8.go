package httpx

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// invalidUTF8Field names where a JSON body that is not valid UTF-8 goes
// wrong: the dotted path of the member whose key or value holds the bad
// bytes ("patient.name"), or "body" when that cannot be told. encoding/json
// would quietly store such bytes as U+FFFD, so the body is refused instead
// and the client is told which field to fix.
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
		bad := !utf8.Valid(raw[prev:end])
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
