package stream

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/apperr"
)

// Fails if one network can open more than its limit, if another network
// shares its count, or if an ended stream does not give its place back
// (once, however often its end is called).
func TestAddressStreamsCountEachNetwork(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newAddressStreams(2, reg)
	first, err := a.take("2001:db8:1:2::1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.take("2001:db8:1:2::ffff"); err != nil { // the same /64
		t.Fatal(err)
	}
	_, err = a.take("2001:db8:1:2::2")
	if e := apperr.As(err); e == nil || e.Code != apperr.CodeRateLimited || e.RetryAfter <= 0 {
		t.Fatalf("the third stream of the network: %v, want RATE_LIMITED with Retry-After", err)
	}
	if _, err := a.take("198.51.100.7"); err != nil {
		t.Fatalf("another network: %v", err)
	}
	first()
	first() // a second call frees nothing more
	if _, err := a.take("2001:db8:1:2::3"); err != nil {
		t.Fatalf("after one ended: %v", err)
	}
	if _, err := a.take("2001:db8:1:2::4"); err == nil {
		t.Fatal("an ended stream's end, called twice, freed two places")
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "clinic_streams_refused_total" || mfs[0].GetMetric()[0].GetCounter().GetValue() != 2 {
		t.Fatalf("refusals counted: %v, %v; want clinic_streams_refused_total 2", mfs, err)
	}
}
