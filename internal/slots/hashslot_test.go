package slots

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
)

func clusterSlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for _, b := range []byte(key) {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

// The rebuild and clear scripts touch a day's bitmap and its epoch together.
func TestBitmapScriptKeysShareOneClusterSlot(t *testing.T) {
	sp := uuid.New()
	d := availability.Date{Year: 2030, Month: 1, Day: 7}
	if clusterSlot(bitmapKey(sp, d)) != clusterSlot(epochKey(sp, d)) {
		t.Fatalf("%s and %s are in different slots", bitmapKey(sp, d), epochKey(sp, d))
	}
}
