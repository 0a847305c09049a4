package slots

// The in-process memo of decoded entries, indexed by the day counters
// each names so that a booking can find the lists it may carry over.

import (
	"strconv"
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
}

// recentKey groups the lists remembered can answer a day from.
type recentKey struct {
	typeID, specialistID uuid.UUID
}

// recentPerKey is how many lists of one type and specialist remembered
// looks through.
const recentPerKey = 8

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
	}
	if len(m.entries) >= memoSize {
		// Old generations are dead weight: drop everything and start over;
		// the next reads refill it from Redis.
		clear(m.entries)
		clear(m.byDay)
		clear(m.recent)
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

// following are the live free-slot lists of a clinic that a booking which
// moved the day counters to bumped (key -> new value) had seen: each of
// those counters it names stood just before the booking's value. Lists
// that name none of them are not the booking's business.
func (m *memo) following(clinicID uuid.UUID, bumped map[string]int64, now time.Time) []memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var out []memoEntry
	for day := range bumped {
		for _, key := range m.byDay[day] {
			if seen[key] {
				continue
			}
			seen[key] = true
			if me := m.entries[key]; m.carries(me, clinicID, bumped, now) {
				out = append(out, me)
			}
		}
	}
	return out
}

// carries reports whether me is a live list of the clinic read at the
// counters just before bumped: each counter it names stood one below the
// booking's value ("" when the booking made it 1).
func (m *memo) carries(me memoEntry, clinicID uuid.UUID, bumped map[string]int64, now time.Time) bool {
	if me.e == nil || me.ref.clinicID != clinicID || me.ref.req.NoBookings || now.After(me.expires) {
		return false
	}
	named := 0
	for i, k := range me.ref.genKeys {
		n, hit := bumped[k]
		if !hit {
			continue
		}
		named++
		before := ""
		if n > 1 {
			before = strconv.FormatInt(n-1, 10)
		}
		if me.ref.genVals[i] != before {
			return false
		}
	}
	return named > 0
}

// covering is the newest live free-slot list of the type and specialist
// whose range holds day, or false.
func (m *memo) covering(typeID, specialistID uuid.UUID, day availability.Date, now time.Time) (memoEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.recent[recentKey{typeID, specialistID}]
	for i := len(keys) - 1; i >= 0; i-- {
		me, ok := m.entries[keys[i]]
		if ok && me.e != nil && !now.After(me.expires) && !day.Before(me.ref.req.From) && !me.ref.req.To.Before(day) {
			return me, true
		}
	}
	return memoEntry{}, false
}

// clear forgets every entry.
func (m *memo) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.entries)
	clear(m.byDay)
	clear(m.recent)
}
