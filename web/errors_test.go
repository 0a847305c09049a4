package web_test

import "testing"

func TestUnknownRouteUsesTheErrorShape(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	r := a.do(t, "GET", "/v1/no/such/thing", nil)
	var body errorShape
	r.Decode(&body)
	if r.Status != 404 || body.Error.Code != "NOT_FOUND" || body.Error.Details == nil {
		t.Fatalf("got %d %+v", r.Status, body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatal("every response carries a request id")
	}
}
