// Package events fans the booking events out to the open streams of this
// process: one Redis subscription per process (not one per stream) feeds an
// in-process hub keyed by appointment type and by clinic. Each stream has a
// bounded buffer; a stream that cannot keep up is cut rather than allowed to
// slow the others (the shape of benbjohnson/wtf's inmem event service).
package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/holds"
)

// Reasons a stream ends, sent in its last event and counted in metrics.
const (
	ReasonLeaseExpired   = "lease-expired"
	ReasonSendFailed     = "send-failed"
	ReasonInitFailed     = "init-failed"
	ReasonClientAbort    = "client-abort"
	ReasonServerShutdown = "server-shutdown"
	ReasonReplaced       = "replaced"
	// ReasonAccessEnded: the viewer may no longer see the stream (signed
	// out, session expired, account disabled, kiosk token revoked).
	ReasonAccessEnded = "access-ended"
)

// ControlChannel carries "a stream opened" notices between instances, so a
// client has one stream across all of them.
const ControlChannel = "streams:control"

// eventPattern matches every clinic's channel: each event is published
// there once, whatever its type.
const eventPattern = "holds:events:clinic:*"

// Item is what a subscription receives: an event, or a request to resend
// the whole state because events may have been lost.
type Item struct {
	Event  *holds.Event
	Resync bool
}

// Key of a subscription.
func TypeKey(appointmentTypeID uuid.UUID) string { return "type:" + appointmentTypeID.String() }
func ClinicKey(clinicID uuid.UUID) string        { return "clinic:" + clinicID.String() }

// Sub is one subscriber: a stream, or a shared view that feeds streams.
type Sub struct {
	C          <-chan Item
	c          chan Item
	done       chan struct{}
	once       sync.Once
	reason     atomic.Value // string
	keys       []string
	clientHash string // non-empty for streams that are "the" stream of a client
	connID     string
	// announced is set once this stream's own "open" notice came back from
	// Redis: only a notice ordered after it may replace it.
	announced atomic.Bool
	hub       *Hub
}

// Done is closed when the hub ends the subscription; Reason says why.
func (s *Sub) Done() <-chan struct{} { return s.done }

// Reason is why the hub ended the subscription ("" while it is open).
func (s *Sub) Reason() string {
	r, _ := s.reason.Load().(string)
	return r
}

// ConnID is the subscription's connection id.
func (s *Sub) ConnID() string { return s.connID }

// End ends the subscription from the subscriber's side.
func (s *Sub) End() { s.end(ReasonClientAbort) }

func (s *Sub) end(reason string) {
	s.once.Do(func() {
		s.reason.Store(reason)
		close(s.done)
	})
}

// Hub routes events to subscriptions.
type Hub struct {
	rdb      redis.UniversalClient
	logger   *slog.Logger
	instance string
	metrics  *Metrics

	mu       sync.RWMutex
	byKey    map[string]map[*Sub]struct{}
	byClient map[string]*Sub
	closed   bool

	ready     chan struct{} // closed once the first subscription is live
	readyOnce sync.Once
}

// NewHub builds a hub; Run connects it to Redis.
func NewHub(rdb redis.UniversalClient, logger *slog.Logger, m *Metrics) *Hub {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Hub{
		rdb: rdb, logger: logger, instance: hex.EncodeToString(b), metrics: m,
		byKey: map[string]map[*Sub]struct{}{}, byClient: map[string]*Sub{},
		ready: make(chan struct{}),
	}
}

// Ready is closed once the hub's Redis subscription first came up.
func (h *Hub) Ready() <-chan struct{} { return h.ready }

// Subscribe registers a subscription on keys with a buffer of buf items.
// A non-empty clientID makes it that client's one stream: an older stream
// of the client, on this instance or any other, ends with "replaced".
func (h *Hub) Subscribe(ctx context.Context, keys []string, clientID string, buf int) *Sub {
	c := make(chan Item, buf)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	s := &Sub{C: c, c: c, done: make(chan struct{}), keys: keys, connID: "c" + hex.EncodeToString(b), hub: h}
	if clientID != "" {
		s.clientHash = holds.ClientHash(clientID)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		s.end(ReasonServerShutdown)
		return s
	}
	for _, k := range keys {
		if h.byKey[k] == nil {
			h.byKey[k] = map[*Sub]struct{}{}
		}
		h.byKey[k][s] = struct{}{}
	}
	var old *Sub
	if s.clientHash != "" {
		old = h.byClient[s.clientHash]
		h.byClient[s.clientHash] = s
	}
	h.mu.Unlock()
	if old != nil {
		h.drop(old, ReasonReplaced)
	}
	if s.clientHash != "" && h.rdb != nil {
		msg, _ := json.Marshal(control{Kind: "open", ClientHash: s.clientHash, ConnID: s.connID, Instance: h.instance})
		if err := h.rdb.Publish(ctx, ControlChannel, msg).Err(); err != nil {
			h.logger.Warn("announce stream", "err", err)
		}
	}
	return s
}

type control struct {
	Kind       string `json:"kind"`
	ClientHash string `json:"clientHash"`
	ConnID     string `json:"connId"`
	Instance   string `json:"instance"`
}

// Unsubscribe removes a subscription; the stream calls it when it ends.
func (h *Hub) Unsubscribe(s *Sub) {
	h.mu.Lock()
	h.remove(s)
	h.mu.Unlock()
}

func (h *Hub) remove(s *Sub) {
	for _, k := range s.keys {
		if m := h.byKey[k]; m != nil {
			delete(m, s)
			if len(m) == 0 {
				delete(h.byKey, k)
			}
		}
	}
	if s.clientHash != "" && h.byClient[s.clientHash] == s {
		delete(h.byClient, s.clientHash)
	}
}

// drop ends a subscription and removes it.
func (h *Hub) drop(s *Sub, reason string) {
	s.end(reason)
	h.mu.Lock()
	h.remove(s)
	h.mu.Unlock()
}

// Publish hands an event to the local subscriptions of its type and its
// clinic. It never blocks: a subscription whose buffer is full is cut.
func (h *Hub) Publish(ev *holds.Event) {
	h.mu.RLock()
	var targets []*Sub
	for _, k := range []string{TypeKey(ev.AppointmentTypeID), ClinicKey(ev.ClinicID)} {
		for s := range h.byKey[k] {
			targets = append(targets, s)
		}
	}
	h.mu.RUnlock()
	var slow []*Sub
	for _, s := range targets {
		select {
		case s.c <- Item{Event: ev}:
			h.metrics.delivered()
		default:
			slow = append(slow, s)
		}
	}
	for _, s := range slow {
		h.drop(s, ReasonSendFailed)
	}
}

// Resync asks every subscription to resend its whole state: called when
// the subscription came back after a gap, and when the PostgreSQL server
// changed (a failover), since a change committed on the old primary just
// before it died may never have been announced.
func (h *Hub) Resync() {
	h.mu.RLock()
	var all []*Sub
	for _, m := range h.byKey {
		for s := range m {
			all = append(all, s)
		}
	}
	h.mu.RUnlock()
	for _, s := range all {
		select {
		case s.c <- Item{Resync: true}:
		default:
			h.drop(s, ReasonSendFailed)
		}
	}
}

// Shutdown ends every subscription with "server-shutdown" and refuses new ones.
func (h *Hub) Shutdown() {
	h.mu.Lock()
	h.closed = true
	var all []*Sub
	seen := map[*Sub]bool{}
	for _, m := range h.byKey {
		for s := range m {
			if !seen[s] {
				seen[s] = true
				all = append(all, s)
			}
		}
	}
	h.byKey = map[string]map[*Sub]struct{}{}
	h.byClient = map[string]*Sub{}
	h.mu.Unlock()
	for _, s := range all {
		s.end(ReasonServerShutdown)
	}
}

// Run keeps the process's one Redis subscription and dispatches what it
// receives, until ctx ends. When the subscription drops and comes back,
// every subscription is told to resync: events in between are lost.
func (h *Hub) Run(ctx context.Context) {
	ps := h.rdb.PSubscribe(ctx, eventPattern)
	defer ps.Close()
	// Receive does not watch ctx: closing the subscription wakes it.
	defer context.AfterFunc(ctx, func() { _ = ps.Close() })()
	if err := ps.Subscribe(ctx, ControlChannel); err != nil {
		h.logger.Warn("subscribe control channel", "err", err)
	}
	subscribed := 0
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			h.metrics.setRedisConnected(false)
			h.logger.Warn("event subscription lost; retrying", "err", err, "in", backoff)
			// On a cluster the subscription's node may be gone for good, its
			// slots now a replica's: the retry asks for the node of the
			// pattern's slot, so have the slot map read again first.
			if cc, ok := h.rdb.(*redis.ClusterClient); ok {
				cc.ReloadState(ctx)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, 2*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		switch m := msg.(type) {
		case *redis.Subscription:
			// Two confirmations (pattern and control) per (re)connection.
			subscribed++
			h.metrics.setRedisConnected(true)
			if subscribed == 2 {
				h.readyOnce.Do(func() { close(h.ready) })
			} else if subscribed > 2 && subscribed%2 == 0 {
				h.logger.Info("event subscription back; resyncing streams")
				h.Resync()
			}
		case *redis.Message:
			if m.Channel == ControlChannel {
				h.onControl(m.Payload)
				continue
			}
			var ev holds.Event
			if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
				h.logger.Warn("undecodable event", "channel", m.Channel, "err", err)
				continue
			}
			h.metrics.received(ev.Type)
			h.Publish(&ev)
		}
	}
}

func (h *Hub) onControl(payload string) {
	var c control
	if err := json.Unmarshal([]byte(payload), &c); err != nil || c.Kind != "open" {
		return
	}
	h.mu.RLock()
	s := h.byClient[c.ClientHash]
	h.mu.RUnlock()
	if s == nil {
		return
	}
	if c.Instance == h.instance {
		// Our own notice: a stream of ours replaced here was already ended
		// when its successor registered.
		if c.ConnID == s.connID {
			s.announced.Store(true)
		}
		return
	}
	// Redis delivers notices to every instance in one order: the stream
	// whose notice came last wins. A notice older than our stream's own
	// (ours not yet seen) must not end it.
	if s.announced.Load() {
		h.drop(s, ReasonReplaced)
	}
}

// Counts reports the open subscriptions per key prefix, for tests and logs.
func (h *Hub) Counts() map[string]int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := map[string]int{}
	for k, m := range h.byKey {
		kind, _, _ := strings.Cut(k, ":")
		out[kind] += len(m)
	}
	return out
}
