package holds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultTTL is a hold's life without heartbeats when NewStore is given none.
const DefaultTTL = 30 * time.Second

// DefaultMaxLife is how long heartbeats may keep a hold, from its claim,
// unless SetMaxLife says otherwise.
const DefaultMaxLife = 10 * time.Minute

// maxPin bounds a pin: past its KeepUntil a hold is pinned at most this
// long, so a confirm can finish its insert but a pin cannot keep a hold.
const maxPin = time.Minute

// maxOccupied is longer than any hold occupies with its buffers (a booking
// lasts at most a day): the claim reads the specialist index no further.
const maxOccupied = 48 * time.Hour

// maxClientIDLen bounds client ids, which become part of key names.
const maxClientIDLen = 200

// Store keeps holds in Redis. It is safe for concurrent use.
type Store struct {
	rdb     redis.UniversalClient
	ttl     time.Duration
	maxLife time.Duration
	coolOff time.Duration // 0: maxLife
	log     *slog.Logger
	// now is the clock every script is given; tests replace it.
	now func() time.Time

	// The sweeper's counters (see SweepStats).
	sweeps, swept, sweepErrors, lastSweep atomic.Int64

	payloads payloadCache
	known    knownHolds

	// registered is when this process last put each clinic in the
	// sweeper's set (see register).
	registered sync.Map
}

// NewStore returns a store whose holds live ttl (DefaultTTL if <= 0)
// without a heartbeat. A nil logger means slog.Default().
func NewStore(rdb redis.UniversalClient, ttl time.Duration, logger *slog.Logger) *Store {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Store{rdb: rdb, ttl: ttl, maxLife: DefaultMaxLife, log: logger, now: time.Now}
}

// SetMaxLife bounds how long heartbeats may keep a hold, counted from its
// claim (DefaultMaxLife if d <= 0; never below the TTL). Call it while
// wiring, before the store is used.
func (s *Store) SetMaxLife(d time.Duration) {
	if d <= 0 {
		d = DefaultMaxLife
	}
	s.maxLife = max(d, s.ttl)
}

// SetReclaimCoolOff sets how long, after a hold lapsed at the end of its
// longest life (its last heartbeat could only reach KeepUntil), no client
// from the network that claimed it may claim that slot again; other
// networks may at once. A hold that lapsed earlier bars nothing (one its
// owner released bars the network until its KeepUntil: see Release). d <= 0
// means the max life (the default): a hold cannot be renewed in place, and
// a patient who kept one to its end waits that long for that one slot
// only. Call it while wiring, before the store is used.
func (s *Store) SetReclaimCoolOff(d time.Duration) { s.coolOff = max(d, 0) }

// ReclaimCoolOff is the re-claim cool-off (see SetReclaimCoolOff).
func (s *Store) ReclaimCoolOff() time.Duration {
	if s.coolOff > 0 {
		return s.coolOff
	}
	return s.maxLife
}

// TTL is a hold's life without heartbeats.
func (s *Store) TTL() time.Duration { return s.ttl }

// MaxLife is the longest heartbeats keep a hold, from its claim.
func (s *Store) MaxLife() time.Duration { return s.maxLife }

// lookup reads a hold's payload from the meta hash, to name its keys for a
// script (see "Declared keys" in the package doc). ok is false for a
// malformed id or a hold the index no longer knows.
func (s *Store) lookup(ctx context.Context, holdID string) (Hold, bool, error) {
	clinicID, ok := ParseHoldID(holdID)
	if !ok {
		return Hold{}, false, nil
	}
	raw, err := s.rdb.HGet(ctx, metaKey(clinicID), holdID).Result()
	if errors.Is(err, redis.Nil) {
		return Hold{}, false, nil
	}
	if err != nil {
		return Hold{}, false, fmt.Errorf("holds: read hold: %w", err)
	}
	h, err := s.payloads.decode(raw)
	if err != nil {
		return Hold{}, false, err
	}
	if h.ClinicID != clinicID || h.HoldID != holdID {
		return Hold{}, false, fmt.Errorf("holds: meta entry %s does not match its id", holdID)
	}
	return h, true, nil
}

// scriptKeys are the four keys every single-hold script declares, in order.
func (h Hold) scriptKeys() []string {
	return []string{h.key(), clientKey(h.ClinicID, h.ClientID), metaKey(h.ClinicID), expiryKey(h.ClinicID)}
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func status(res []any) string { return str(res, 0) }

func str(res []any, i int) string {
	if i >= len(res) {
		return ""
	}
	s, _ := res[i].(string)
	return s
}
