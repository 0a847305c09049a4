package holds

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// sweepBatch bounds the candidates one sweep script handles, so a backlog
// (say, after an outage) never blocks Redis with one long script.
const sweepBatch = 100

// Sweep releases the expired holds of every clinic in holds:clinics,
// publishing a "release" event with reason "expired" for each, and returns
// how many it released. Any number of instances may sweep at once: each
// expired hold is released (and announced) by exactly one of them. Errors
// of one clinic do not stop the others; they are returned joined.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	members, err := s.rdb.SMembers(ctx, clinicsKey).Result()
	if err != nil {
		return 0, fmt.Errorf("holds: sweep: list clinics: %w", err)
	}
	clinics := make([]uuid.UUID, 0, len(members))
	for _, m := range members {
		if id, err := uuid.Parse(m); err == nil {
			clinics = append(clinics, id)
		}
	}
	if len(clinics) == 0 {
		return 0, nil
	}

	// First pass, one round trip for all clinics: which have candidates.
	// Most clinics have none most seconds.
	now := s.now()
	cands := make([]*redis.StringSliceCmd, len(clinics))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range clinics {
			cands[i] = p.ZRangeByScore(ctx, expiryKey(c), expiredRange(now))
		}
		return nil
	})
	// On a Redis Cluster the round trip is one per node, and a node that is
	// down fails only its clinics' reads: the others are still swept.
	if err != nil && !slices.ContainsFunc(cands, func(c *redis.StringSliceCmd) bool { return c.Err() == nil }) {
		return 0, fmt.Errorf("holds: sweep: read expiry indexes: %w", err)
	}

	total := 0
	var errs []error
	if err != nil {
		unread := 0
		for _, c := range cands {
			if c.Err() != nil {
				unread++
			}
		}
		errs = append(errs, fmt.Errorf("holds: sweep: read the expiry indexes of %d of %d clinics: %w", unread, len(clinics), err))
	}
	for i, c := range clinics {
		if cands[i].Err() != nil {
			continue
		}
		ids := cands[i].Val()
		if len(ids) == 0 {
			continue
		}
		n, err := s.sweepClinic(ctx, c, now, ids)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// SweepClinic is Sweep for one clinic.
func (s *Store) SweepClinic(ctx context.Context, clinicID uuid.UUID) (int, error) {
	now := s.now()
	ids, err := s.rdb.ZRangeByScore(ctx, expiryKey(clinicID), expiredRange(now)).Result()
	if err != nil {
		return 0, fmt.Errorf("holds: sweep %s: %w", clinicID, err)
	}
	return s.sweepClinic(ctx, clinicID, now, ids)
}

func expiredRange(now time.Time) *redis.ZRangeBy {
	return &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: sweepBatch}
}

// sweepClinic sweeps the candidate ids of one clinic, then further batches
// while full batches keep yielding releases.
func (s *Store) sweepClinic(ctx context.Context, clinicID uuid.UUID, now time.Time, ids []string) (int, error) {
	total := 0
	for len(ids) > 0 {
		n, err := s.sweepBatch(ctx, clinicID, now, ids)
		total += n
		if err != nil {
			return total, err
		}
		// A short batch was everything; a full batch that released nothing
		// is all holds whose keys outlive their scores, which the next tick
		// will find again.
		if len(ids) < sweepBatch || n == 0 {
			return total, nil
		}
		if ids, err = s.rdb.ZRangeByScore(ctx, expiryKey(clinicID), expiredRange(now)).Result(); err != nil {
			return total, fmt.Errorf("holds: sweep %s: %w", clinicID, err)
		}
	}
	return total, nil
}

func (s *Store) sweepBatch(ctx context.Context, clinicID uuid.UUID, now time.Time, ids []string) (int, error) {
	meta, expiry := metaKey(clinicID), expiryKey(clinicID)
	// The script must be told each candidate's hold key, client set and
	// re-claim key, which derive from its payload: read the payloads first.
	raws, err := s.rdb.HMGet(ctx, meta, ids...).Result()
	if err != nil {
		return 0, fmt.Errorf("holds: sweep %s: read payloads: %w", clinicID, err)
	}
	keys := []string{meta, expiry}
	args := []any{now.UnixMilli(), s.ReclaimCoolOff().Milliseconds()}
	var orphans []string
	for i, raw := range raws {
		text, ok := raw.(string)
		if !ok {
			// In the index but not in meta. The scripts write and delete both
			// together and hold ids are never reused, so this entry is junk
			// that no concurrent operation can revive: drop it directly.
			orphans = append(orphans, ids[i])
			continue
		}
		h, err := s.payloads.decode(text)
		if err != nil {
			return 0, err
		}
		keys = append(keys, h.key(), clientKey(clinicID, h.ClientID))
		if h.network == "" || !h.reachedMaxLife() {
			args = append(args, ids[i], 2)
		} else {
			keys = append(keys, reclaimKey(h.key(), h.network))
			args = append(args, ids[i], 3)
		}
	}
	if len(orphans) > 0 {
		if err := s.rdb.ZRem(ctx, expiry, anys(orphans)...).Err(); err != nil {
			return 0, fmt.Errorf("holds: sweep %s: drop orphans: %w", clinicID, err)
		}
	}
	if len(args) == 2 {
		return 0, nil
	}

	swept, err := sweepScript.Run(ctx, s.rdb, keys, args...).StringSlice()
	if err != nil {
		return 0, fmt.Errorf("holds: sweep %s: %w", clinicID, err)
	}
	for _, raw := range swept {
		h, err := s.payloads.decode(raw)
		if err != nil {
			// Released all the same; only its announcement is lost.
			s.log.Error("decode swept hold", "clinicId", clinicID, "err", err)
			continue
		}
		s.publishOrLog(ctx, Event{Type: EventRelease, Hold: h, Reason: ReasonExpired})
	}
	return len(swept), nil
}

// RunSweeper calls Sweep every interval until ctx is done. Errors (and
// panics) are logged, never raised: a sweeper that stops leaves every
// stream showing phantom holds.
func (s *Store) RunSweeper(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sweepOnce(ctx)
		}
	}
}

func (s *Store) sweepOnce(ctx context.Context) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("hold sweeper panicked", "panic", r)
		}
	}()
	began := time.Now()
	n, err := s.Sweep(ctx)
	s.sweeps.Add(1)
	s.swept.Add(int64(n))
	s.lastSweep.Store(int64(time.Since(began)))
	if err != nil && ctx.Err() == nil {
		s.sweepErrors.Add(1)
		s.log.Warn("sweep expired holds", "released", n, "err", err)
	} else if n > 0 {
		s.log.Debug("swept expired holds", "released", n)
	}
}

// SweepStats is what this instance's sweeper has done: sweeps run, holds
// it released, sweeps that failed, and how long the last one took.
type SweepStats struct {
	Sweeps, Released, Errors int64
	Last                     time.Duration
}

// SweepStats reads the sweeper's counters, for /metrics.
func (s *Store) SweepStats() SweepStats {
	return SweepStats{Sweeps: s.sweeps.Load(), Released: s.swept.Load(), Errors: s.sweepErrors.Load(), Last: time.Duration(s.lastSweep.Load())}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
