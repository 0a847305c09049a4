package holds

// Reading the live holds.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/availability"
)

// HeldBy returns the live hold on one slot of one specialist, if any.
func (s *Store) HeldBy(ctx context.Context, clinicID, atid, specialistID uuid.UUID, start time.Time) (Hold, bool, error) {
	raw, err := s.rdb.Get(ctx, holdKey(clinicID, atid, specialistID, start)).Result()
	if errors.Is(err, redis.Nil) {
		return Hold{}, false, nil
	}
	if err != nil {
		return Hold{}, false, fmt.Errorf("holds: get: %w", err)
	}
	h, err := s.payloads.decode(raw)
	return h, err == nil, err
}

// Active lists every live hold of a clinic (meta entries whose expiry is
// ahead), ordered by start, specialist and id. One command: a script
// reads the live ids and their payloads at one moment.
func (s *Store) Active(ctx context.Context, clinicID uuid.UUID) ([]Hold, error) {
	raws, err := activeScript.Run(ctx, s.rdb, []string{metaKey(clinicID), expiryKey(clinicID)}, s.now().UnixMilli()).Slice()
	if err != nil {
		return nil, fmt.Errorf("holds: list: %w", err)
	}
	return s.decodeActive(raws)
}

// activeReadingScript is activeScript that first reads the string values
// of KEYS[3...] (false for a missing key) and replies {values, payloads}.
var activeReadingScript = redis.NewScript(`
local values = {}
for i = 3, #KEYS do
  values[#values + 1] = redis.call('GET', KEYS[i])
end
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf')
local out = {}
for i = 1, #ids, 1000 do
  local part = redis.call('HMGET', KEYS[1], unpack(ids, i, math.min(i + 999, #ids)))
  for j = 1, #part do
    out[#out + 1] = part[j]
  end
end
return {values, out}
`)

// ActiveReading is Active that also reads, in the same step, the string
// values of keys ("" for a missing key): keys of the clinic (its hash
// tag), such as the counters a list of free slots was cached under, so
// that a reading of a clinic's slots and holds is one round trip.
func (s *Store) ActiveReading(ctx context.Context, clinicID uuid.UUID, keys []string) ([]Hold, []string, error) {
	res, err := activeReadingScript.Run(ctx, s.rdb, append([]string{metaKey(clinicID), expiryKey(clinicID)}, keys...), s.now().UnixMilli()).Slice()
	if err != nil {
		return nil, nil, fmt.Errorf("holds: list: %w", err)
	}
	if len(res) != 2 {
		return nil, nil, fmt.Errorf("holds: list: unexpected reply of %d values", len(res))
	}
	got, _ := res[0].([]any)
	vals := make([]string, len(keys))
	for i := range min(len(got), len(keys)) {
		vals[i], _ = got[i].(string)
	}
	raws, _ := res[1].([]any)
	hs, err := s.decodeActive(raws)
	return hs, vals, err
}

// decodeActive is the holds of an active script's payloads, in order.
func (s *Store) decodeActive(raws []any) ([]Hold, error) {
	out := make([]Hold, 0, len(raws))
	for _, raw := range raws {
		text, ok := raw.(string)
		if !ok {
			continue // in the index but not in meta: junk the sweeper drops
		}
		h, err := s.payloads.decode(text)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Hold) int {
		// Bytes order UUIDs as their strings do.
		return cmp.Or(a.Start.Compare(b.Start), bytes.Compare(a.SpecialistID[:], b.SpecialistID[:]), cmp.Compare(a.HoldID, b.HoldID))
	})
	return out, nil
}

// ActiveHolds is Active in the slot engine's terms (slots.HoldSource).
func (s *Store) ActiveHolds(ctx context.Context, clinicID uuid.UUID) ([]availability.Busy, error) {
	hs, err := s.Active(ctx, clinicID)
	if err != nil {
		return nil, err
	}
	out := make([]availability.Busy, len(hs))
	for i, h := range hs {
		out[i] = availability.Busy{SpecialistID: h.SpecialistID, ResourceID: h.ResourceID, Start: h.Start, End: h.End, BufferBefore: h.BufferBefore, BufferAfter: h.BufferAfter}
	}
	return out, nil
}
