// Package ratelimit counts requests per key in fixed windows in Redis, so
// every instance shares one count. Checks fail open: a Redis hiccup must
// not lock patients out.
package ratelimit

import (
	"context"
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
// and how long until the window ends.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, time.Duration) {
	now := l.now()
	win := now.UnixMilli() / l.window.Milliseconds()
	k := fmt.Sprintf("ratelimit:%s:%s:%d", l.name, key, win)
	n, err := incr.Run(ctx, l.rdb, []string{k}, l.window.Milliseconds()).Int64()
	if err != nil {
		l.logger.Warn("rate limit check failed; allowing", "limiter", l.name, "err", err)
		return true, 0
	}
	if n > l.limit {
		end := time.UnixMilli((win + 1) * l.window.Milliseconds())
		return false, end.Sub(now)
	}
	return true, 0
}
