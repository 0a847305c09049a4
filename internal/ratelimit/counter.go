package ratelimit

import (
	"context"
	"time"
)

// Counter is one request's count under a limit, made by a script of the
// caller's in its own step instead of a round trip of its own: the script
// adds one to Key (giving it Window's expiry when it is new) and refuses
// when the count passes Limit. Ends is when the window ends, for the
// refusal's Retry-After.
type Counter struct {
	Key    string
	Limit  int64
	Window time.Duration
	Ends   time.Time
}

// CounterIn is the counter of key's requests in the window of now, under
// the hash tag tag: on Redis Cluster a script touches keys of one hash
// slot only, so a count made inside a script of, say, a clinic's keys
// carries the clinic's tag. The count is then the key's within that tag:
// AllowIn counts the same key.
func (l *Limiter) CounterIn(tag, key string) Counter {
	now := l.now()
	k, win := l.key(tagged(tag, key), now)
	return Counter{Key: k, Limit: l.limit, Window: l.window, Ends: time.UnixMilli((win + 1) * l.window.Milliseconds())}
}

// AllowIn is Allow for key under the hash tag tag: the count CounterIn
// names.
func (l *Limiter) AllowIn(ctx context.Context, tag, key string) (bool, time.Duration) {
	return l.Allow(ctx, tagged(tag, key))
}

func tagged(tag, key string) string { return "{" + tag + "}:" + key }
