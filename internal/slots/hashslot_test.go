package slots

import (
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/testkit"
)

var clusterSlot = testkit.ClusterSlot

// The rebuild and clear scripts touch a day's bitmap and its epoch together.
func TestBitmapScriptKeysShareOneClusterSlot(t *testing.T) {
	sp := uuid.New()
	d := availability.Date{Year: 2030, Month: 1, Day: 7}
	if clusterSlot(bitmapKey(sp, d)) != clusterSlot(epochKey(sp, d)) {
		t.Fatalf("%s and %s are in different slots", bitmapKey(sp, d), epochKey(sp, d))
	}
}

// A cache key's generations are read with one MGET: the clinic's set-up
// generation and its days' must share a slot.
func TestGenerationKeysShareOneClusterSlot(t *testing.T) {
	clinic := uuid.New()
	want := clusterSlot(GenerationKey(clinic))
	d := availability.Date{Year: 2030, Month: 1, Day: 7}
	for i := range 62 {
		if k := dayGenerationKey(clinic, d.AddDays(i)); clusterSlot(k) != want {
			t.Fatalf("%s is in slot %d, %s in %d", k, clusterSlot(k), GenerationKey(clinic), want)
		}
	}
}
