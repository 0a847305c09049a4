// Package liveview keeps, for each slot grid being looked at (a type, a
// range of days, a specialist or any), its state in memory: the slots,
// the clinic's live holds and the answers rendered from them. The
// process's one Redis subscription (events.Hub) keeps each view current,
// so a read of a watched grid costs neither a PostgreSQL query nor a Redis
// round trip. Answers that depend on a clinic's set-up alone (the clinic
// page) are kept the same way until the set-up changes (Kept).
//
// A view is only an optimisation. It is built from a reading made after
// its clinic's events were already being heard, and events heard during
// the reading are applied to it again before it is kept. An event it
// cannot apply exactly (a cancellation, a change of hours) drops it; so
// does any doubt about the subscription (lost, back after a gap, falling
// behind). Without a view, callers read the source as before.
package liveview

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
)

// Options of New.
type Options struct {
	MaxViews int           // 0: 1000; past it the least recently read goes
	MaxAge   time.Duration // 0: 1 min; a view is read again at least this often
	Now      func() time.Time
}

// feedMemory is how many of a clinic's recent events are kept to be
// applied again to a view read meanwhile; a reading that took longer is
// not kept.
const feedMemory = 256

// feedBuffer is how far a clinic's subscription may fall behind before
// the hub cuts it (and its views go).
const feedBuffer = 4096

// Store is the process's live views.
type Store struct {
	hub    *events.Hub
	m      *metrics
	max    int
	maxAge time.Duration
	now    func() time.Time

	mu    sync.Mutex
	views map[grid.View]*View
	lru   *list.List // of *View, most recently read first
	feeds map[uuid.UUID]*feed
	kept  map[string]*Kept // answers of a clinic's set-up alone, by key
	// up: the hub's subscription is live; confirmed counts the
	// subscription confirmations since it was last lost (see connected).
	up        bool
	confirmed int
	// epoch moves each time the subscription is lost: a reading begun
	// before cannot be kept.
	epoch uint64
}

// feed is one clinic's events, as this store hears them.
type feed struct {
	clinicID uuid.UUID
	sub      *events.Sub
	seq      uint64                  // events handled
	writes   uint64                  // changes this process made (see Changed)
	recent   [feedMemory]holds.Event // the last ones, by seq % feedMemory
	views    map[*View]struct{}
	// setup counts the changes of the clinic's set-up heard or made here
	// (and any doubt about them); kept are its answers of the set-up alone.
	setup uint64
	kept  map[*Kept]struct{}
	dead  bool
}

// New builds a store fed by hub. It keeps no view until the hub's
// subscription is known to be up: wire the hub's connected gauge through
// WatchConnected.
func New(hub *events.Hub, reg prometheus.Registerer, o Options) *Store {
	if o.MaxViews <= 0 {
		o.MaxViews = 1000
	}
	if o.MaxAge <= 0 {
		o.MaxAge = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{
		hub: hub, m: newMetrics(reg), max: o.MaxViews, maxAge: o.MaxAge, now: o.Now,
		views: map[grid.View]*View{}, lru: list.New(), feeds: map[uuid.UUID]*feed{}, kept: map[string]*Kept{},
	}
}

// WatchConnected wraps the gauge the hub sets to 1 on each confirmation of
// its subscription and to 0 when it is lost, so the store follows it.
func (s *Store) WatchConnected(g prometheus.Gauge) prometheus.Gauge {
	return &connGauge{Gauge: g, s: s}
}

// connected follows the hub's subscription. The hub subscribes to two
// things (the events' pattern and the control channel) and hears one
// confirmation of each: only after both is every event of a clinic heard.
// A loss drops every view: what was published meanwhile is not heard.
func (s *Store) connected(up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if up {
		s.confirmed++
		s.up = s.confirmed >= 2
		return
	}
	s.confirmed, s.up = 0, false
	s.epoch++
	for _, v := range s.views {
		s.dropLocked(v, DropLost)
	}
	s.dropKeptLocked()
}

// DropAll drops every view, and no reading begun before is kept: the
// source they were read from is in doubt. Called when the PostgreSQL
// server changed (a failover): a booking committed on the old primary
// just before it died may never have been announced.
func (s *Store) DropAll(reason string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	for _, v := range s.views {
		s.dropLocked(v, reason)
	}
	s.dropKeptLocked()
}

// Ticket is a reading under way: Begin before reading, Install after.
type Ticket struct {
	feed   *feed
	seq    uint64
	writes uint64
	setup  uint64
	epoch  uint64
}

// Begin is called before a view's state is read from the source: from
// then on, the clinic's events are recorded. nil (also for a nil store)
// when no view can be kept now.
func (s *Store) Begin(clinicID uuid.UUID) *Ticket {
	if s == nil || s.hub == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return nil
	}
	f := s.feeds[clinicID]
	if f == nil || f.dead {
		f = &feed{clinicID: clinicID, views: map[*View]struct{}{}, kept: map[*Kept]struct{}{}}
		f.sub = s.hub.Subscribe(context.Background(), []string{events.ClinicKey(clinicID)}, "", feedBuffer)
		s.feeds[clinicID] = f
		go s.follow(f)
	}
	return &Ticket{feed: f, seq: f.seq, writes: f.writes, setup: f.setup, epoch: s.epoch}
}

// Changed is called once this process changed a clinic's holds or
// bookings, before it answers the request that did: its event comes back
// through Redis a moment later, and until then the clinic's views (and
// any reading begun before the change) would not show it. They are
// dropped, so a read that follows the answer sees the change.
func (s *Store) Changed(clinicID uuid.UUID) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.feeds[clinicID]
	if f == nil {
		return
	}
	f.writes++
	for v := range f.views {
		s.dropLocked(v, DropWrite)
	}
}

// Applied is Changed for a change this process made and knows exactly (a
// hold it claimed, a booking it confirmed): the clinic's views take its
// event at once, as they take the events they hear, and take it again when
// it comes back through Redis (a hold, a release or a booking applied
// twice has the same effect as once). A view the event cannot be applied
// to exactly is dropped. The views stay served through a rush of holds
// instead of being rebuilt after each.
func (s *Store) Applied(ev holds.Event) {
	if s == nil {
		return
	}
	ev.ClientID = "" // as on the wire: events name their owner by ClientHash
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.feeds[ev.ClinicID]; f != nil {
		s.handle(f, events.Item{Event: &ev})
	}
}

// follow applies a clinic's events to its views until its subscription
// ends. A clinic keeps its subscription once it had a view: one per
// clinic, whatever the number of views.
func (s *Store) follow(f *feed) {
	for {
		select {
		case <-f.sub.Done():
			s.mu.Lock()
			f.dead = true
			if s.feeds[f.clinicID] == f {
				delete(s.feeds, f.clinicID)
			}
			reason := DropLost
			if f.sub.Reason() == events.ReasonSendFailed {
				reason = DropLagging
			}
			for v := range f.views {
				s.dropLocked(v, reason)
			}
			s.setupLocked(f)
			s.mu.Unlock()
			return
		case it := <-f.sub.C:
			s.mu.Lock()
			s.handle(f, it)
			s.mu.Unlock()
		}
	}
}

// resyncEvent marks a resync among a feed's recent events: no reading
// that saw it can be kept.
const resyncEvent = "resync"

func (s *Store) handle(f *feed, it events.Item) {
	f.seq++
	if it.Resync || it.Event == nil {
		f.recent[f.seq%feedMemory] = holds.Event{Type: resyncEvent}
		for v := range f.views {
			s.dropLocked(v, DropResync)
		}
		s.setupLocked(f)
		return
	}
	ev := *it.Event
	f.recent[f.seq%feedMemory] = ev
	if ev.Type == holds.EventCalendar {
		s.setupLocked(f)
	}
	for v := range f.views {
		if !v.apply(ev) {
			s.dropLocked(v, DropEvent)
		}
	}
}

// Install keeps sn, read from the source after t began, as the live view
// of sn.View, with meta (what else its pages need, nil for none) and no
// later than until (zero: no bound of the caller's). The events heard
// since t began are applied to it first. It returns the view, or nil when
// it cannot be kept (the subscription was lost, an event could not be
// applied); the caller then answers from sn as before.
func (s *Store) Install(t *Ticket, sn *grid.Snapshot, meta any, until time.Time) *View {
	if s == nil || t == nil || sn == nil {
		return nil
	}
	now := s.now()
	deadline := s.deadline(sn, now, until)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.replay(t, sn)
	if !ok {
		s.m.built("raced")
		return nil
	}
	if !now.Before(deadline) {
		return nil
	}
	if old := s.views[sn.View]; old != nil {
		// The kept view is as current (events keep it so); only a page's
		// data it lacks makes the new reading worth more.
		if old.meta != nil || meta == nil {
			s.lru.MoveToFront(old.elem)
			return old
		}
		s.dropLocked(old, DropReplaced)
	}
	v := &View{key: sn.View, feed: t.feed, meta: meta, deadline: deadline, memo: map[string]memoEntry{}, s: s}
	v.size = approxSize(sn)
	v.st.Store(st)
	v.elem = s.lru.PushFront(v)
	s.views[sn.View] = v
	t.feed.views[v] = struct{}{}
	s.m.addBytes(v.size)
	for s.lru.Len() > s.max {
		s.dropLocked(s.lru.Back().Value.(*View), DropEvicted)
	}
	s.m.setLive(len(s.views))
	s.m.built("kept")
	return v
}

// replay is sn with the events heard since t began applied; false when
// it cannot be kept. It needs s.mu.
func (s *Store) replay(t *Ticket, sn *grid.Snapshot) (*state, bool) {
	f := t.feed
	if !s.up || s.epoch != t.epoch || f.writes != t.writes || f.dead || s.feeds[f.clinicID] != f || sn.ClinicID != f.clinicID || f.seq-t.seq > feedMemory {
		return nil, false
	}
	st := newState(sn)
	for q := t.seq + 1; q <= f.seq; q++ {
		next, ok := st.apply(f.recent[q%feedMemory])
		if !ok {
			return nil, false
		}
		st = next
	}
	return st, true
}

// deadline is when a view read now stops being right without any event:
// its first slot passes the minimum notice, its clinic's day ends (the
// booking window moves), or it has been kept MaxAge.
func (s *Store) deadline(sn *grid.Snapshot, now, until time.Time) time.Time {
	d := now.Add(s.maxAge)
	if !until.IsZero() && until.Before(d) {
		d = until
	}
	notice := sn.Type().MinNotice
	for _, p := range sn.Positions() {
		if at := p.Start.Add(-notice); at.Before(d) {
			d = at
		}
	}
	if sn.Zone != nil {
		local := now.In(sn.Zone)
		midnight := time.Date(local.Year(), local.Month(), local.Day()+1, 0, 0, 0, 0, sn.Zone)
		if midnight.Before(d) {
			d = midnight
		}
	}
	return d
}

// Get is the live view of key, or nil; reading it makes it the most
// recently used.
func (s *Store) Get(key grid.View) *View {
	if s == nil {
		return nil
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[key]
	if v == nil {
		return nil
	}
	if !now.Before(v.deadline) {
		s.dropLocked(v, DropExpired)
		return nil
	}
	s.lru.MoveToFront(v.elem)
	return v
}

// Count records a read of kind ("page", "timeslots") answered by a view
// (hit) or not (miss), for /metrics.
func (s *Store) Count(kind string, hit bool) {
	if s == nil {
		return
	}
	if hit {
		s.m.read(kind, "hit")
	} else {
		s.m.read(kind, "miss")
	}
}

// Len is how many views are kept.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.views)
}

// dropLocked forgets v; it needs s.mu.
func (s *Store) dropLocked(v *View, reason string) {
	if s.views[v.key] == v {
		delete(s.views, v.key)
	}
	if v.elem != nil {
		s.lru.Remove(v.elem)
		v.elem = nil
	}
	delete(v.feed.views, v)
	v.mu.Lock()
	if !v.dropped {
		v.dropped = true
		s.m.addBytes(-(v.size + v.memoBytes))
		s.m.dropped(reason)
	}
	v.mu.Unlock()
	s.m.setLive(len(s.views))
}

// ETag is the entity tag of a body: the same bytes give the same tag on
// every instance.
func ETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}
