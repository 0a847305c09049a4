package web_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestOversizedBodiesAre413(t *testing.T) {
	t.Parallel()
	ts := newServer(t, nil)
	for name, size := range map[string]int{"OverTheJSONLimit": 100 << 10, "OverTheServerLimit": 1 << 20} {
		t.Run(name, func(t *testing.T) {
			body := `{"clientId":"` + strings.Repeat("x", size) + `"}`
			res, err := http.Post(ts.URL+"/v1/holds", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("want 413, got %d", res.StatusCode)
			}
		})
	}
}
