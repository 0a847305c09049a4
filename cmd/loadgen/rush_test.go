package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// serveInProcess runs the server in this process on a loopback port,
// trusting 127.0.0.1 as its load balancer and keeping the per-address
// limits the server has by default; it returns the base URL.
func serveInProcess(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	built := app.Build(pool, testkit.Redis(t), slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{
		LimitScope:        uuid.NewString() + ":",
		TrustedProxies:    []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		HoldsPerMinute:    30,
		APIHoldsPerMinute: 120,
		HoldsPerAddress:   4,
		// Every patient books once, from an address of its own; the raise
		// keeps the scenario about the rush, not the allowance.
		BookingsPerAddress: 100000,
	})
	ctx, cancel := context.WithCancel(context.Background())
	built.RunBackground(ctx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- web.New(built.Deps, ln.Addr().String()).Serve(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case <-built.Deps.Hub.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the hub did not subscribe to Redis")
	}
	return "http://" + ln.Addr().String()
}

// A short rush: 300 patients over 2 s for 40 slots. Every slot is booked
// exactly once, by a 201 each, and no request is answered with a 5xx. The
// patients keep trying (the page again once the times they saw are gone)
// until they book or the page shows nothing free: with three tries, how
// many slots a slow server under the race detector gets booked would
// depend on its speed, since every patient then sees the same first
// times. The latencies are printed, not judged: the machine is shared.
func TestRushBooksEverySlotOnce(t *testing.T) {
	pool := testkit.DB(t)
	base := serveInProcess(t, pool)
	r, err := rushScenario(t.Context(), pool, base, rushOptions{patients: 300, window: 2 * time.Second, slots: 40, tries: 100})
	if err != nil {
		t.Fatal(err)
	}
	printRush(r)
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
	if r.booked != 40 || r.rows != 40 || r.duplicates != 0 || r.left != 0 {
		t.Fatalf("%d booked, %d rows, %d slots twice, %d left; want 40, 40, 0, 0", r.booked, r.rows, r.duplicates, r.left)
	}
	if r.fiveXX != 0 || r.failed != 0 {
		t.Fatalf("%d answers of 5xx, %d patients failed: %v", r.fiveXX, r.failed, r.statuses)
	}
	if r.booked+r.none+r.lost+r.failed != 300 {
		t.Fatalf("outcomes of %d patients, want 300", r.booked+r.none+r.lost+r.failed)
	}
}

// The page's free cells are read as a browser's click would post them:
// the start of each free cell, in page order, none of the others.
func TestFreeStartsReadsFreeCellsOnly(t *testing.T) {
	page := `<section class="day"><ul class="slots">
<li id="slot-any-1" class="slot slot-taken" data-testid="slot" data-state="taken" data-start="2030-01-07T07:00:00Z"><span>08:00</span></li>
<li id="slot-any-2" class="slot slot-free" data-testid="slot" data-state="free" data-start="2030-01-07T07:30:00Z" sse-swap="slot-any-2"><form method="post"><input type="hidden" name="start" value="2030-01-07T07:30:00Z"/></form></li>
<li id="slot-any-3" class="slot slot-held" data-testid="slot" data-state="held" data-start="2030-01-07T08:00:00Z"></li>
<li id="slot-any-4" class="slot slot-free" data-testid="slot" data-state="free" data-start="2030-01-07T08:30:00Z"></li>
</ul></section>`
	got := freeStarts([]byte(page))
	if want := []string{"2030-01-07T07:30:00Z", "2030-01-07T08:30:00Z"}; !slices.Equal(got, want) {
		t.Fatalf("free starts %q, want %q", got, want)
	}
}
