package privacy

import (
	"testing"
	"time"
)

func TestDailyNext(t *testing.T) {
	t.Parallel()
	d := daily{at: RunAt}
	for _, c := range []struct{ now, want string }{
		{"2026-11-26T02:59:59Z", "2026-11-26T03:00:00Z"},
		{"2026-11-26T03:00:00Z", "2026-11-27T03:00:00Z"},
		{"2026-11-26T22:00:00Z", "2026-11-27T03:00:00Z"},
		{"2026-11-26T01:00:00+01:00", "2026-11-26T03:00:00Z"},
	} {
		now, _ := time.Parse(time.RFC3339, c.now)
		want, _ := time.Parse(time.RFC3339, c.want)
		if got := d.Next(now); !got.Equal(want) {
			t.Errorf("Next(%s) = %s, want %s", c.now, got, c.want)
		}
	}
}
