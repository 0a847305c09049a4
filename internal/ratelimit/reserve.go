package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reservation is one request Reserve counted, which GiveBack uncounts.
// It names the window it was counted in, so a give-back after the window
// turned touches nothing of the next one.
type Reservation struct {
	key string
}

// ReserveStep is Lua for another package's script that counts a
// reservation in its own step (see Planned): reserve(key, limit, window
// ms) counts one only while the window has room, and answers 1 when it
// counted, else 0. Refused requests are not counted, so a give-back
// leaves exactly the successes.
const ReserveStep = `
local function reserve(key, limit, windowMs)
  local n = tonumber(redis.call('GET', key) or '0')
  if n >= tonumber(limit) then
    return 0
  end
  if redis.call('INCR', key) == 1 then
    redis.call('PEXPIRE', key, windowMs)
  end
  return 1
end
`

// reserve counts one request only while the window has room.
//
//	KEYS[1] the window's counter  ARGV[1] limit  ARGV[2] window (ms)
//
// Replies 1 when counted, else 0.
var reserve = redis.NewScript(ReserveStep + `
return reserve(KEYS[1], ARGV[1], ARGV[2])
`)

// giveBack uncounts one request of a window that still exists.
var giveBack = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then
  redis.call('DECR', KEYS[1])
end
return n
`)

// Reserve counts one request for key when the window has room for it, in
// one step, so concurrent callers never get more than Limit between them.
// Over the limit it counts nothing and returns false with how long until
// the window ends. A Redis failure is returned (the caller decides).
func (l *Limiter) Reserve(ctx context.Context, key string) (Reservation, bool, time.Duration, error) {
	now := l.now()
	k, win := l.key(key, now)
	ok, err := reserve.Run(ctx, l.rdb, []string{k}, l.limit, l.window.Milliseconds()).Int()
	if err != nil {
		return Reservation{}, false, 0, fmt.Errorf("rate limit %s: %w", l.name, err)
	}
	if ok == 0 {
		return Reservation{}, false, time.UnixMilli((win + 1) * l.window.Milliseconds()).Sub(now), nil
	}
	return Reservation{key: k}, true, 0, nil
}

// GiveBack uncounts a reservation whose request did not go through. A
// zero Reservation is nothing to give back.
func (l *Limiter) GiveBack(ctx context.Context, r Reservation) error {
	if r.key == "" {
		return nil
	}
	if err := giveBack.Run(ctx, l.rdb, []string{r.key}).Err(); err != nil {
		return fmt.Errorf("rate limit %s: %w", l.name, err)
	}
	return nil
}

// Planned is a reservation for a caller to count in a script of its own
// (with ReserveStep), together with other work in one step: the window's
// counter, the limit and the window's length in milliseconds.
type Planned struct {
	Key      string
	Limit    int64
	WindowMS int64
	ends     time.Time
}

// Plan names the reservation Reserve would count for key now.
func (l *Limiter) Plan(key string) Planned {
	now := l.now()
	k, win := l.key(key, now)
	return Planned{Key: k, Limit: l.limit, WindowMS: l.window.Milliseconds(), ends: time.UnixMilli((win + 1) * l.window.Milliseconds())}
}

// Counted is what Reserve answers for a planned reservation that the
// caller's script counted (ok) or refused: the Reservation to give back,
// or how long until the window ends.
func (l *Limiter) Counted(p Planned, ok bool) (Reservation, bool, time.Duration) {
	if !ok {
		return Reservation{}, false, p.ends.Sub(l.now())
	}
	return Reservation{key: p.Key}, true, 0
}
