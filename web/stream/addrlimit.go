package stream

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/clientaddr"
)

// DefaultStreamsPerAddress is how many public streams one address network
// may keep open at once when Deps says nothing.
const DefaultStreamsPerAddress = 50

// streamRetryAfter is what a refused stream is told to wait: a place
// frees when one of the network's streams closes, which nobody can
// foresee.
const streamRetryAfter = 30 * time.Second

// addressStreams counts the open streams of each address network that
// nobody signed in for (the booking and reschedule pages' grids, kiosk
// boards and the API's hold stream), in this process. Each open stream
// holds goroutines and buffers for as long as its client likes, so one
// address must not open them without end. Signed-in staff are not
// counted (Viewer.SignedIn): their streams end with their sessions.
//
// The count is per server process, not shared through Redis: a process
// that dies takes its streams with it, so its count can never outlive
// them, and a counter in Redis would need leases to be as safe. Behind a
// load balancer with several instances an address may therefore hold up
// to the limit on each.
type addressStreams struct {
	limit   int
	refused prometheus.Counter

	mu   sync.Mutex
	open map[string]int
}

func newAddressStreams(limit int, reg prometheus.Registerer) *addressStreams {
	if limit <= 0 {
		limit = DefaultStreamsPerAddress
	}
	a := &addressStreams{
		limit: limit,
		open:  make(map[string]int),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clinic_streams_refused_total",
			Help: "Public event streams refused because their address network had STREAMS_PER_ADDRESS open.",
		}),
	}
	if reg != nil {
		reg.MustRegister(a.refused)
	}
	return a
}

// take counts a new stream of ip's network and returns the function that
// ends its count (call it once, when the stream ends), or a 429
// RATE_LIMITED with Retry-After when the network has its limit open.
func (a *addressStreams) take(ip string) (done func(), err error) {
	network, ok := clientaddr.Network(ip)
	if !ok {
		network = ip // never empty in practice: the peer of a TCP connection
	}
	a.mu.Lock()
	if a.open[network] >= a.limit {
		a.mu.Unlock()
		a.refused.Inc()
		return nil, &apperr.Error{
			Kind: apperr.TooMany, Code: apperr.CodeRateLimited, RetryAfter: streamRetryAfter,
			Message: fmt.Sprintf("At most %d live pages can be open at once from one network address. Close some, or try again in %d s.",
				a.limit, apperr.Seconds(streamRetryAfter)),
			Details: map[string]any{"retryAfterSeconds": apperr.Seconds(streamRetryAfter)},
		}
	}
	a.open[network]++
	a.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.open[network]--; a.open[network] <= 0 {
				delete(a.open, network)
			}
		})
	}, nil
}
