// Package ratelimit counts requests per key in fixed windows in Redis, so
// every instance shares one count. Allow fails open: a Redis hiccup must
// not lock patients out. Check reports the failure instead, for the few
// limits whose purpose an outage must not suspend.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Limiter allows Limit requests per Window for each key.
type Limiter struct {
	rdb    redis.UniversalClient
	name   string
	limit  int64
	window time.Duration
	logger *slog.Logger
	now    func() time.Time
}

func New(rdb redis.UniversalClient, name string, limit int, window time.Duration, logger *slog.Logger) *Limiter {
	return &Limiter{rdb: rdb, name: name, limit: int64(limit), window: window, logger: logger, now: time.Now}
}

// Limit is how many requests a key may make per Window.
func (l *Limiter) Limit() int { return int(l.limit) }

// Window is the length of the fixed counting window.
func (l *Limiter) Window() time.Duration { return l.window }

var incr = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
`)

// Allow counts one request for key; when over the limit it returns false
// and how long until the window ends. When Redis cannot count, it allows.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, time.Duration) {
	ok, wait, err := l.Check(ctx, key)
	if err != nil {
		l.logger.Warn("rate limit check failed; allowing", "limiter", l.name, "err", err)
		return true, 0
	}
	return ok, wait
}

// Check is Allow that leaves a failure to count to the caller: the error
// says Redis did not answer, and the request should then be refused.
func (l *Limiter) Check(ctx context.Context, key string) (bool, time.Duration, error) {
	now := l.now()
	k, win := l.key(key, now)
	n, err := incr.Run(ctx, l.rdb, []string{k}, l.window.Milliseconds()).Int64()
	if err != nil {
		return false, 0, fmt.Errorf("rate limit %s: %w", l.name, err)
	}
	if n > l.limit {
		end := time.UnixMilli((win + 1) * l.window.Milliseconds())
		return false, end.Sub(now), nil
	}
	return true, 0, nil
}

// Spent reports, without counting anything, whether key has made its Limit
// requests in this window, and if so how long until the window ends. With
// Count it limits what succeeded rather than what was tried: ask Spent
// first, act, and Count only what went through.
func (l *Limiter) Spent(ctx context.Context, key string) (bool, time.Duration, error) {
	now := l.now()
	k, win := l.key(key, now)
	n, err := l.rdb.Get(ctx, k).Int64()
	switch {
	case errors.Is(err, redis.Nil):
		return false, 0, nil
	case err != nil:
		return false, 0, fmt.Errorf("rate limit %s: %w", l.name, err)
	case n < l.limit:
		return false, 0, nil
	}
	return true, time.UnixMilli((win + 1) * l.window.Milliseconds()).Sub(now), nil
}

// Count counts one request for key without deciding anything (see Spent).
func (l *Limiter) Count(ctx context.Context, key string) error {
	k, _ := l.key(key, l.now())
	if err := incr.Run(ctx, l.rdb, []string{k}, l.window.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("rate limit %s: %w", l.name, err)
	}
	return nil
}

// key is the Redis key of key's count in the window of now, and that
// window's number.
func (l *Limiter) key(key string, now time.Time) (string, int64) {
	win := now.UnixMilli() / l.window.Milliseconds()
	return fmt.Sprintf("ratelimit:%s:%s:%d", l.name, key, win), win
}
