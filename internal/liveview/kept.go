package liveview

import (
	"sync"
	"time"

	"github.com/google/uuid"
)

// Kept is an answer that depends on a clinic's set-up alone (its
// settings, types and specialists: the clinic page's listing), kept with
// the data it is rendered from until the set-up changes. The clinic's
// subscription tells of every change: a calendar event (which every
// committed change of the set-up publishes, on any instance) drops it,
// and so does any doubt about the subscription. A change made by this
// process drops it at once (SetupChanged), before its event comes back.
type Kept struct {
	key      string
	feed     *feed
	meta     any
	deadline time.Time
	s        *Store

	mu        sync.Mutex
	memo      map[string]Answer
	memoBytes int
	dropped   bool
}

// Meta is what Keep was given.
func (k *Kept) Meta() any { return k.meta }

// Answer is the answer named variant: kept from an earlier call, or
// rendered by render now (and kept, up to maxVariants of them).
func (k *Kept) Answer(variant string, render func() ([]byte, error)) (Answer, error) {
	k.mu.Lock()
	a, ok := k.memo[variant]
	k.mu.Unlock()
	if ok {
		return a, nil
	}
	body, err := render()
	if err != nil {
		return Answer{}, err
	}
	a = Answer{Body: body, ETag: ETag(body)}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dropped || len(k.memo) >= maxVariants {
		return a, nil
	}
	if _, had := k.memo[variant]; !had {
		k.memo[variant] = a
		k.memoBytes += len(body)
		k.s.m.addBytes(len(body))
	}
	return a, nil
}

// Keep keeps meta under key (one per page: "clinic:" and the slug) as an
// answer of the set-up of t's clinic, read from the source after t began.
// It returns nil when it cannot be kept: the set-up changed meanwhile (or
// may have: the subscription was lost), or too many are kept.
func (s *Store) Keep(t *Ticket, key string, meta any) *Kept {
	if s == nil || t == nil {
		return nil
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	f := t.feed
	if !s.up || s.epoch != t.epoch || f.dead || s.feeds[f.clinicID] != f || f.setup != t.setup {
		return nil
	}
	if old := s.kept[key]; old != nil {
		s.dropKeptOneLocked(old)
	}
	if len(s.kept) >= s.max {
		return nil
	}
	k := &Kept{key: key, feed: f, meta: meta, deadline: now.Add(s.maxAge), memo: map[string]Answer{}, s: s}
	s.kept[key] = k
	f.kept[k] = struct{}{}
	return k
}

// Kept is what is kept under key, or nil.
func (s *Store) Kept(key string) *Kept {
	if s == nil {
		return nil
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.kept[key]
	if k != nil && !now.Before(k.deadline) {
		s.dropKeptOneLocked(k)
		return nil
	}
	return k
}

// SetupChanged is Changed after a change of the clinic's set-up that
// this process committed: its views and its kept answers go at once, and
// no reading of the set-up begun before is kept.
func (s *Store) SetupChanged(clinicID uuid.UUID) {
	if s == nil {
		return
	}
	s.Changed(clinicID)
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.feeds[clinicID]; f != nil {
		s.setupLocked(f)
	}
}

// setupLocked notes that f's clinic's set-up changed, or may have: its
// kept answers go. It needs s.mu.
func (s *Store) setupLocked(f *feed) {
	f.setup++
	for k := range f.kept {
		s.dropKeptOneLocked(k)
	}
}

// dropKeptLocked drops every kept answer; it needs s.mu. (Only views'
// drops are counted by reason.)
func (s *Store) dropKeptLocked() {
	for _, k := range s.kept {
		s.dropKeptOneLocked(k)
	}
}

func (s *Store) dropKeptOneLocked(k *Kept) {
	if s.kept[k.key] == k {
		delete(s.kept, k.key)
	}
	delete(k.feed.kept, k)
	k.mu.Lock()
	if !k.dropped {
		k.dropped = true
		s.m.addBytes(-k.memoBytes)
	}
	k.mu.Unlock()
}
