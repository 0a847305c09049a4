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
	} {
		if got := invalidUTF8Field([]byte(tc.body)); got != tc.want {
			t.Errorf("invalidUTF8Field(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
