package app

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// The waitlist's metrics may be registered again on the same registry
// (the metrics handler built more than once): no panic, and each series
// is gathered once, with the service's counts.
func TestWaitlistMetricsRegisterOnce(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	wl := waitlist.New(waitlist.NewOpenings(testkit.DB(t), nil, waitlist.Config{}), nil)
	for range 3 {
		registerWaitlistMetrics(reg, wl)
	}
	registerWaitlistMetrics(reg, nil) // no waitlist: nothing to add
	registerWaitlistMetrics(nil, wl)  // no registry: nothing to add to
	wl.Stats().Joined.Add(2)
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	seen := map[string]int{}
	for _, f := range families {
		seen[f.GetName()] += len(f.GetMetric())
		if f.GetName() == "clinic_waitlist_joined_total" {
			if v := f.GetMetric()[0].GetCounter().GetValue(); v != 2 {
				t.Errorf("clinic_waitlist_joined_total = %v, want 2", v)
			}
		}
	}
	for name, n := range map[string]int{
		"clinic_waitlist_joined_total": 1, "clinic_waitlist_offers_total": 4, "clinic_waitlist_entries": 3,
		"clinic_waitlist_openings_open": 1, "clinic_waitlist_rebooked_total": 1,
	} {
		if seen[name] != n {
			t.Errorf("%s gathered %d times, want %d", name, seen[name], n)
		}
	}
}
