package verify

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/testkit"
)

// The allowance's counter lives in the clinic's cluster slot, where the
// pin of a hold (whose keys carry the clinic's hash tag) counts it in the
// same script; a counted plan is a reservation of that counter.
func TestAllowanceCounterSharesTheClinicsClusterSlot(t *testing.T) {
	clinic := uuid.New()
	s := New(nil, Config{Allowance: ratelimit.New(nil, "scope:booking-address", 3, time.Hour, nil)})
	for _, addr := range []string{"203.0.113.7", "2001:db8::1", "not an address"} {
		p := s.Plan(clinic, addr)
		if testkit.ClusterSlot(p.Key) != testkit.ClusterSlot("{"+clinic.String()+"}") {
			t.Fatalf("%s is not in the clinic's slot", p.Key)
		}
		if p.Limit != 3 || p.WindowMS != time.Hour.Milliseconds() {
			t.Fatalf("plan %+v, want the limiter's limit and window", p)
		}
		if _, ok, _ := s.Counted(p, true); !ok {
			t.Fatal("a counted plan is no reservation")
		}
		if _, ok, wait := s.Counted(p, false); ok || wait <= 0 || wait > time.Hour {
			t.Fatalf("a refused plan: ok %v, wait %s", ok, wait)
		}
	}
}
