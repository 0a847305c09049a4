package httpx

import "testing"

// Fails if a body with bytes that are not UTF-8 is named by the wrong
// field (or not at all): the client must be told which field to fix.
func TestInvalidUTF8Field(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"{\"clientId\":\"A\xff\xfeB\"}", "clientId"},
		{"{\"a\":1,\"patient\":{\"email\":\"x@y.z\",\"name\":\"A\xc3\"},\"b\":2}", "patient.name"},
		{"{\"patient\":{\"email\":\"x\"},\"reason\":\"\xed\xa0\x80\"}", "reason"},
		{"{\"list\":[\"ok\",\"b\xffad\"]}", "list"},
		{"{\"k\xff\":\"v\"}", "body"},
		{"\"\xff\"", "body"},
		{"{\"a\":\"b\xff", "a"},
		// Anywhere: deep in objects, in arrays of objects, in keys.
		{"{\"a\":{\"b\":[{\"ok\":1},{\"c\":\"x\xff\"}]}}", "a.b.c"},
		{"{\"a\":{\"ok\":\"\",\"k\xff\":1}}", "a"},
		{"[1,{\"x\":[\"\xc0\x80\"]}]", "x"},
		// Escapes of half a surrogate pair decode to U+FFFD just the same.
		{`{"patient":{"name":"A\ud800B"}}`, "patient.name"},
		{`{"reason":"\udc00"}`, "reason"},
		{`{"k\ud83d":"v"}`, "body"},
		{`{"list":["\ud83d\u0041"]}`, "list"},
	} {
		if got := invalidUTF8Field([]byte(tc.body)); got != tc.want {
			t.Errorf("invalidUTF8Field(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// Fails if a valid body is refused: surrogate pairs, escaped backslashes
// before a "u", and every other escape are text as written.
func TestValidTextAcceptsWhatDecodesAsWritten(t *testing.T) {
	for _, body := range []string{
		`{"name":"Änne \ud83d\ude00 Ørsted"}`,
		`{"path":"C:\\ud800"}`,
		`{"q":"\"\\\/\b\f\n\r\t\u00e9"}`,
		`{"a":[{"b":{"c":"ok"}}]}`,
	} {
		if !validText([]byte(body)) {
			t.Errorf("validText(%s) = false, want true", body)
		}
	}
	for _, body := range []string{"{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":"\ud800\ud800"}`, `{"a":"x\udfff"}`} {
		if validText([]byte(body)) {
			t.Errorf("validText(%q) = true, want false", body)
		}
	}
}
