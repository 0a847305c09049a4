package holds

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
)

var slotOf = testkit.ClusterSlot

func TestSlotOfMatchesRedisCluster(t *testing.T) {
	// Values from the Redis Cluster specification.
	if got := slotOf("123456789"); got != 0x31C3%16384 {
		t.Fatalf("slotOf(123456789) = %d", got)
	}
	if slotOf("{user1000}.following") != slotOf("{user1000}.followers") {
		t.Fatal("hash tags must decide the slot")
	}
}

// Every Lua script touches keys of one clinic; on Redis Cluster they must
// all live in one slot.
func TestScriptKeysShareOneClusterSlot(t *testing.T) {
	clinic, atid, sp := uuid.New(), uuid.New(), uuid.New()
	hold := holdKey(clinic, atid, sp, time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC))
	keys := []string{
		hold,
		reclaimKey(hold, "2001:db8::/64"),
		reclaimKey(hold, "203.0.113.7"),
		metaKey(clinic),
		expiryKey(clinic),
		registeredKey(clinic),
		clientKey(clinic, "some-client"),
		addressKey(clinic, "2001:db8::/64"),
		specialistKey(clinic, sp),
		cooldownKey(clinic, "some-client", atid),
		cooldownReverseKey(clinic, uuid.New()),
	}
	want := slotOf(keys[0])
	for _, k := range keys {
		if slotOf(k) != want {
			t.Errorf("%s is in slot %d, the clinic's keys in %d", k, slotOf(k), want)
		}
	}
}
