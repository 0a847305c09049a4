package holds

// Rate limits counted inside a claim's or a heartbeat's own script: the
// request's limits cost no round trips of their own.

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/ratelimit"
)

// LimitedError is a request refused by one of the rate limits it was
// counted against (ClaimRequest.Counts, Heartbeat's counts): Counter is
// that limit's place among them, RetryAfter the time until its window
// ends. The limits before it were counted, those after it were not.
type LimitedError struct {
	Counter    int
	RetryAfter time.Duration
}

func (e *LimitedError) Error() string {
	return fmt.Sprintf("holds: over rate limit %d for %s", e.Counter, e.RetryAfter)
}

// countTail is shared Lua for a script whose last keys are rate-limit
// counters (ratelimit.Counter), in the layout withCounts writes: the
// counters' keys last in KEYS, and last in ARGV each counter's limit and
// window (ms), then how many counters there are. lastKey and lastArg are
// the script's own last key and argument; overLimit() adds one to each
// counter in turn (a new one gets the window's expiry, as the ratelimit
// package's own count does) and stops at the first whose count passes its
// limit, returning its place, or nil when none does.
const countTail = `
local counters = tonumber(ARGV[#ARGV])
local lastKey, lastArg = #KEYS - counters, #ARGV - 2 * counters - 1
local function overLimit()
  for j = 1, counters do
    local key = KEYS[lastKey + j]
    local n = redis.call('INCR', key)
    if n == 1 then
      redis.call('PEXPIRE', key, ARGV[lastArg + 2 * j])
    end
    if n > tonumber(ARGV[lastArg + 2 * j - 1]) then
      return j
    end
  end
  return nil
end
`

// withCounts appends counts to a script's keys and arguments in the
// layout countTail reads.
func withCounts(keys []string, args []any, counts []ratelimit.Counter) ([]string, []any) {
	for _, c := range counts {
		keys = append(keys, c.Key)
		args = append(args, c.Limit, c.Window.Milliseconds())
	}
	return keys, append(args, len(counts))
}

// limited is the error of a script's {'limited', j} reply.
func limited(res []any, counts []ratelimit.Counter) error {
	j, _ := res[1].(int64)
	if j < 1 || int(j) > len(counts) {
		return fmt.Errorf("holds: unexpected limit %d in a reply", j)
	}
	return &LimitedError{Counter: int(j) - 1, RetryAfter: max(time.Until(counts[j-1].Ends), 0)}
}

// countScript counts a request against its limits when it gets no
// further than that (countTail).
var countScript = redis.NewScript(countTail + `
local over = overLimit()
if over then
  return {'limited', over}
end
return {'ok'}
`)

// Count counts a request against counts, in one step, as a claim or a
// heartbeat does in its own: for a request refused before its script
// (invalid, or a hold this store cannot find), so that every request is
// counted once. Over a limit it returns a *LimitedError; when Redis
// cannot count it allows, as the ratelimit package does, and returns nil.
func (s *Store) Count(ctx context.Context, counts ...ratelimit.Counter) error {
	if len(counts) == 0 {
		return nil
	}
	keys, args := withCounts(nil, nil, counts)
	res, err := countScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		s.log.Warn("rate limit count failed; allowing", "err", err)
		return nil
	}
	if status(res) == "limited" {
		return limited(res, counts)
	}
	return nil
}

// countRefused counts a request refused with err before its script ran:
// err, or the limit it is over.
func (s *Store) countRefused(ctx context.Context, counts []ratelimit.Counter, err error) error {
	if lerr := s.Count(ctx, counts...); lerr != nil {
		return lerr
	}
	return err
}
