package privacy

// Redis: the keys that name a patient. None holds a name, an address or
// a number in plain text; a few are named by a hash of the address's
// identity key or by a booking, and those go here (docs/privacy.md lists
// every key, and those left to expire).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// eraseRedis deletes the keys of p and of f's bookings: the client's
// cooldowns the bookings started (and their reverse keys), the live
// verification code e-mailed to the address and the count of codes sent
// to it. It returns how many keys went.
func (s *Service) eraseRedis(ctx context.Context, p Patient, f found) (int64, error) {
	if s.cfg.Redis == nil {
		return 0, nil
	}
	var n int64
	var errs []error
	if s.cfg.Holds != nil {
		for _, b := range f.bookings {
			if err := s.cfg.Holds.ClearCooldown(ctx, p.ClinicID, b.ID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if p.EmailKey != "" {
		// One key a command: on a Redis Cluster they live in different slots.
		for _, k := range addressKeys(s.cfg.LimitScope, p.EmailKey, time.Now()) {
			d, err := s.cfg.Redis.Del(ctx, k).Result()
			if err != nil {
				errs = append(errs, fmt.Errorf("delete the address's keys: %w", err))
			}
			n += d
		}
	}
	return n, errors.Join(errs...)
}

// addressKeys are the keys named after an address (internal/verify): its
// live code, and the counts of codes sent to it in this hour's window and
// the last one (a count outlives its window by at most one more).
func addressKeys(scope, emailKey string, now time.Time) []string {
	sum := sha256.Sum256([]byte(emailKey))
	id := hex.EncodeToString(sum[:])
	win := now.UnixMilli() / time.Hour.Milliseconds()
	return []string{
		"verify:" + scope + "code:" + id,
		fmt.Sprintf("ratelimit:%scode-recipient:%s:%d", scope, id, win),
		fmt.Sprintf("ratelimit:%scode-recipient:%s:%d", scope, id, win-1),
	}
}
