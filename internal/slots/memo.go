package slots

// The in-process memo of decoded entries, indexed by the day counters
// each names so that a booking can find the lists it may carry over.

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
)

// memo keeps decoded cache entries in process. Its keys carry the
// generation read from Redis on every request, so an instance never serves
// an entry another instance has invalidated; it only skips fetching and
// decoding the same entry again.
type memo struct {
	mu      sync.Mutex
	entries map[string]memoEntry
	byDay   map[string][]string // day generation key -> keys of entries that name it
	// recent are the keys of the free-slot lists last put, per type and
	// specialist, newest last (see remembered).
	recent map[recentKey][]string
	// latest is each generation counter's newest value this process has
	// read or set: a list read at an older one is out of date.
	latest map[string]string
}

// recentKey groups the lists remembered can answer a day from.
type recentKey struct {
	typeID, specialistID uuid.UUID
}

// recentPerKey is how many lists of one type and specialist remembered
// looks through.
const recentPerKey = 64

type memoEntry struct {
	e       *entry
	ref     *cacheRef
	expires time.Time
}

const memoSize = 2048

func (m *memo) get(key string, now time.Time) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	me, ok := m.entries[key]
	if !ok || now.After(me.expires) {
		return nil
	}
	return me.e
}

// put keeps e until its window runs out (ttl from now for an entry that
// does not say).
func (m *memo) put(ref *cacheRef, e *entry, now time.Time, ttl time.Duration) {
	expires := e.Expires
	if expires.IsZero() {
		expires = now.Add(ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = make(map[string]memoEntry)
		m.byDay = make(map[string][]string)
		m.recent = make(map[recentKey][]string)
		m.latest = make(map[string]string)
	}
	if len(m.entries) >= memoSize {
		// Old generations are dead weight: drop everything and start over;
		// the next reads refill it from Redis.
		clear(m.entries)
		clear(m.byDay)
		clear(m.recent)
		clear(m.latest)
	}
	if _, again := m.entries[ref.key]; !again && !ref.req.NoBookings {
		for _, k := range ref.genKeys[1:] {
			m.byDay[k] = append(m.byDay[k], ref.key)
		}
		rk := recentKey{ref.req.AppointmentTypeID, ref.req.SpecialistID}
		keys := append(m.recent[rk], ref.key)
		m.recent[rk] = keys[max(len(keys)-recentPerKey, 0):]
	}
	m.entries[ref.key] = memoEntry{e: e, ref: ref, expires: expires}
}

// carriable are the live free-slot lists of a clinic that name one of
// the day counters days and were read at the newest values this process
// knows of their counters: the lists a booking on those days may carry
// over, should each counter it names move on by exactly one (which the
// script that moves them checks; see Service.booked).
func (m *memo) carriable(clinicID uuid.UUID, days []string, now time.Time) []memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var out []memoEntry
	for _, day := range days {
		for _, key := range m.byDay[day] {
			if seen[key] {
				continue
			}
			seen[key] = true
			me := m.entries[key]
			if me.e != nil && me.ref.clinicID == clinicID && !me.ref.req.NoBookings && !now.After(me.expires) && m.current(me.ref) {
				out = append(out, me)
			}
		}
	}
	return out
}

// covering is the newest live free-slot list of the type and specialist
// whose range holds day, or false.
func (m *memo) covering(typeID, specialistID uuid.UUID, day availability.Date, now time.Time) (memoEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.recent[recentKey{typeID, specialistID}]
	for i := len(keys) - 1; i >= 0; i-- {
		me, ok := m.entries[keys[i]]
		if ok && me.e != nil && !now.After(me.expires) && !day.Before(me.ref.req.From) && !me.ref.req.To.Before(day) && m.current(me.ref) {
			return me, true
		}
	}
	return memoEntry{}, false
}

// current reports whether ref was read at the newest values this process
// knows of its counters.
func (m *memo) current(ref *cacheRef) bool {
	for i, k := range ref.genKeys {
		if v, ok := m.latest[k]; ok && v != ref.genVals[i] {
			return false
		}
	}
	return true
}

// saw records counters' values as read from Redis or set by this process
// (keys[i] -> vals[i]).
func (m *memo) saw(keys, vals []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.latest == nil {
		m.latest = make(map[string]string)
	}
	if len(m.latest) >= memoSize*8 {
		clear(m.latest)
	}
	for i, k := range keys {
		m.latest[k] = vals[i]
	}
}

// guess is the values this process last saw of keys, "" for a counter
// it has not seen (which, never bumped, does not exist).
func (m *memo) guess(keys []string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = m.latest[k]
	}
	return out
}

// clear forgets every entry.
func (m *memo) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.entries)
	clear(m.byDay)
	clear(m.recent)
	clear(m.latest)
}
