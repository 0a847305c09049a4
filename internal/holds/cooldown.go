package holds

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// The booking cooldown: after a booking, the client may not hold slots of
// the same type for a while. Failing open when Redis is down is the
// caller's decision, so these functions return every error.

// CooldownRemaining is how long the client's cooldown for the type still
// runs; 0 means none.
func (s *Store) CooldownRemaining(ctx context.Context, clinicID uuid.UUID, clientID string, atid uuid.UUID) (time.Duration, error) {
	d, err := s.rdb.PTTL(ctx, cooldownKey(clinicID, clientID, atid)).Result()
	if err != nil {
		return 0, fmt.Errorf("holds: cooldown: %w", err)
	}
	// go-redis reports "no key" and "no TTL" as -2ns and -1ns. We always set
	// a TTL, so a key without one is not ours to enforce.
	return max(d, 0), nil
}

// SetCooldown starts the client's cooldown for the type after bookingID,
// together with the reverse key that lets ClearCooldown find it by booking.
// d <= 0 is a no-op (the type has no cooldown).
func (s *Store) SetCooldown(ctx context.Context, clinicID uuid.UUID, clientID string, atid, bookingID uuid.UUID, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	d = max(d, time.Millisecond) // PX counts whole milliseconds
	key := cooldownKey(clinicID, clientID, atid)
	// One MULTI: both keys exist, with the same TTL, or neither.
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, key, bookingID.String(), d)
		p.Set(ctx, cooldownReverseKey(clinicID, bookingID), key, d)
		return nil
	})
	if err != nil {
		return fmt.Errorf("holds: set cooldown: %w", err)
	}
	return nil
}

// ClearCooldown lifts the cooldown a booking started (on cancellation),
// found through its reverse key: no SCAN. A cooldown that expired, or that a
// later booking has replaced, is left as it is.
func (s *Store) ClearCooldown(ctx context.Context, clinicID, bookingID uuid.UUID) error {
	rev := cooldownReverseKey(clinicID, bookingID)
	key, err := s.rdb.Get(ctx, rev).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("holds: clear cooldown: %w", err)
	}
	// The reverse key names the cooldown key; only one of this clinic's may
	// be deleted (and only such a key shares the script's hash slot).
	if !strings.HasPrefix(key, "client_limit:"+tag(clinicID)+":") {
		return fmt.Errorf("holds: clear cooldown: reverse key %s names %q", rev, key)
	}
	if err := clearCooldownScript.Run(ctx, s.rdb, []string{key, rev}, bookingID.String()).Err(); err != nil {
		return fmt.Errorf("holds: clear cooldown: %w", err)
	}
	return nil
}

// moveCooldownScript hands a cooldown from a rescheduled booking to the
// booking that replaced it: the cooldown key then names the new booking
// and a new reverse key points at it, with the time left unchanged.
// KEYS: the old reverse key, the new reverse key, the cooldown key it names.
var moveCooldownScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= KEYS[3] then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
if redis.call('GET', KEYS[3]) == ARGV[1] then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ttl)
end
redis.call('SET', KEYS[2], KEYS[3], 'PX', ttl)
redis.call('DEL', KEYS[1])
return 1
`)

// MoveCooldown follows a reschedule: cancelling the new booking must lift
// the cooldown the old one started.
func (s *Store) MoveCooldown(ctx context.Context, clinicID, fromBookingID, toBookingID uuid.UUID) error {
	from := cooldownReverseKey(clinicID, fromBookingID)
	key, err := s.rdb.Get(ctx, from).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("holds: move cooldown: %w", err)
	}
	if !strings.HasPrefix(key, "client_limit:"+tag(clinicID)+":") {
		return fmt.Errorf("holds: move cooldown: reverse key %s names %q", from, key)
	}
	keys := []string{from, cooldownReverseKey(clinicID, toBookingID), key}
	if err := moveCooldownScript.Run(ctx, s.rdb, keys, fromBookingID.String(), toBookingID.String()).Err(); err != nil {
		return fmt.Errorf("holds: move cooldown: %w", err)
	}
	return nil
}

// shortenCooldownScript ends a cooldown through its reverse key no later
// than ARGV[2] milliseconds from now, but only if the cooldown is still
// this booking's (as clearCooldownScript).
//
//	KEYS[1] cooldown key  KEYS[2] reverse key  ARGV[1] bookingId  ARGV[2] ms
var shortenCooldownScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 or ttl > tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
end
redis.call('DEL', KEYS[2])
return 1
`)

// ShortenCooldown follows a patient's own cancel: the cooldown the
// booking started runs on for at most keep (it lifts at once for keep
// <= 0, as ClearCooldown), so that booking and cancelling in a loop does
// not renew a client's holds.
func (s *Store) ShortenCooldown(ctx context.Context, clinicID, bookingID uuid.UUID, keep time.Duration) error {
	if keep <= 0 {
		return s.ClearCooldown(ctx, clinicID, bookingID)
	}
	rev := cooldownReverseKey(clinicID, bookingID)
	key, err := s.rdb.Get(ctx, rev).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("holds: shorten cooldown: %w", err)
	}
	if !strings.HasPrefix(key, "client_limit:"+tag(clinicID)+":") {
		return fmt.Errorf("holds: shorten cooldown: reverse key %s names %q", rev, key)
	}
	ms := max(keep.Milliseconds(), 1)
	if err := shortenCooldownScript.Run(ctx, s.rdb, []string{key, rev}, bookingID.String(), ms).Err(); err != nil {
		return fmt.Errorf("holds: shorten cooldown: %w", err)
	}
	return nil
}
