// Package stream is the server-sent events: the stream plumbing, the live
// HTML grids shared by every viewer of one view (patients, the desk,
// kiosks), the JSON stream of holds and the shared access checks of
// streams that need sign-in.
package stream

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/slots"
)

// Deps is what the Live uses of the server's dependencies.
type Deps struct {
	Holds         *holds.Store
	Hub           *events.Hub
	Logger        *slog.Logger
	Slots         *slots.Service
	StreamMetrics *events.Metrics
	// StreamsPerAddress is how many public streams one address network
	// may keep open on this process (0: DefaultStreamsPerAddress).
	StreamsPerAddress int
	// Registry takes the count of refused streams and of the live views'
	// updates; nil: not registered.
	Registry prometheus.Registerer
}

// Live serves the streams and keeps their shared state.
type Live struct {
	deps Deps
	live *liveGrids
	// streams counts the HTML streams served on hijacked connections,
	// which http.Server.Shutdown does not wait for (see Wait).
	streams sync.WaitGroup
	// access shares the streams' periodic access checks (see accessCache).
	access *accessCache
	// perAddress counts the public streams of each address network.
	perAddress *addressStreams
}

// New makes the streams' handler.
func New(deps Deps) *Live {
	l := &Live{deps: deps}
	l.live = newLiveGrids(l, deps.Registry)
	l.access = newAccessCache(AccessCheckEvery*3/4, deps.Logger)
	l.perAddress = newAddressStreams(deps.StreamsPerAddress, deps.Registry)
	return l
}

// Wait waits until the HTML streams served on hijacked connections have
// ended, or ctx is done; it reports whether they ended.
func (l *Live) Wait(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { l.streams.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Allowed is check's answer for key from the streams' shared access
// checks (see accessCache.Allowed): a stream that needs sign-in or a
// kiosk token asks it every AccessCheckEvery.
func (l *Live) Allowed(ctx context.Context, key string, check func(context.Context) (bool, error)) bool {
	return l.access.Allowed(ctx, key, check)
}
