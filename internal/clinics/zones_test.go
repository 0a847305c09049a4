package clinics_test

import (
	"testing"

	"github.com/clinic/booking/internal/clinics"
)

// Every zone the settings page offers is one a clinic can be saved with.
func TestZonesResolve(t *testing.T) {
	t.Parallel()
	zones := clinics.Zones()
	if len(zones) < 400 {
		t.Fatalf("only %d zones", len(zones))
	}
	seen := map[string]bool{}
	for _, z := range zones {
		if seen[z] {
			t.Errorf("%s is listed twice", z)
		}
		seen[z] = true
		if _, err := clinics.LoadZone(z); err != nil {
			t.Errorf("%s: %v", z, err)
		}
	}
	for _, want := range []string{"Europe/Berlin", "Europe/Vienna", "Europe/Zurich", "America/New_York", "UTC"} {
		if !seen[want] {
			t.Errorf("%s is not offered", want)
		}
	}
	if clinics.ZoneRegion("America/Argentina/Salta") != "America" || clinics.ZoneRegion("UTC") != "" {
		t.Error("ZoneRegion")
	}
}
