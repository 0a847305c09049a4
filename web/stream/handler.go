// Package stream is the server-sent events: the stream plumbing, the live
// HTML grids shared by every viewer of one view (patients, the desk,
// kiosks), the JSON stream of holds and the shared access checks of
// streams that need sign-in.
package stream

import (
	"context"
	"log/slog"
	"sync"

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
}

// Live holds the handlers.
type Live struct {
	deps    Deps
	live    *liveGrids
	streams sync.WaitGroup
	Access  *accessCache
}

// New makes the streams' handler.
func New(deps Deps) *Live {
	l := &Live{deps: deps}
	l.live = newLiveGrids(l)
	l.Access = newAccessCache(AccessCheckEvery*3/4, deps.Logger)
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
