package testkit

import (
	"context"
	"strings"
	"testing"
)

// CutSubscription kills the connections to the test Redis that carry the
// client name name and hold a subscription (channels or patterns), as a
// network fault or a Redis restart would; it fails the test unless it cut
// exactly one, the subscriber a test gave that name.
func CutSubscription(t testing.TB, name string) {
	t.Helper()
	admin := Redis(t)
	ctx := context.Background()
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] != name || (f["psub"] == "0" && f["sub"] == "0") {
			continue
		}
		if err := admin.Do(ctx, "CLIENT", "KILL", "ID", f["id"]).Err(); err != nil {
			t.Fatal(err)
		}
		killed++
	}
	if killed != 1 {
		t.Fatalf("cut %d subscribed connections named %s, want the one subscriber", killed, name)
	}
}
