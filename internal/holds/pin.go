package holds

// The confirm's pin, which may count a place of an allowance in its step.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/ratelimit"
)

// PinRequest asks PinCounting to pin a hold (see Pin) and, in the same step,
// to read Watch (see PinWatching) and to count one place of Count.
type PinRequest struct {
	HoldID, ClientID string
	Pin              time.Duration
	// Watch are counters of the hold's clinic (keys with its hash tag)
	// whose values tell the caller whether what it read before still stands.
	Watch []string
	// Count, when its Key is set, is a place of an allowance counted
	// only if the pin goes through: a key with the clinic's hash tag.
	Count ratelimit.Planned
}

// Pinned is what PinCounting did: the hold as pinned, the watched keys' values
// ("" for a missing key), and whether Count's place was counted (false
// when the allowance's window had no room, or nothing was asked). With an
// error, Counted alone may be set: the pin went through but its answer
// could not be read, and the counted place is the caller's to give back.
type Pinned struct {
	Hold    Hold
	Watched []string
	Counted bool
}

// PinCounting is Pin with PinWatching's reads and, for a booking that counts
// against an allowance, that count, all in one round trip: a confirm's
// Redis work before its insert. Nothing is counted when the pin is
// refused. Errors: ErrExpired (expired or unknown), ErrNotOwner.
func (s *Store) PinCounting(ctx context.Context, req PinRequest) (Pinned, error) {
	pin := min(max(req.Pin, time.Millisecond), maxPin)
	h, fresh, ok, err := s.recall(ctx, req.HoldID)
	if err != nil {
		return Pinned{}, err
	}
	if !ok {
		return Pinned{}, ErrExpired
	}
	for {
		now := s.now()
		limit := h.KeepUntil
		if limit.IsZero() {
			// A payload from before KeepUntil existed: at its limit, it
			// still gets its pin.
			limit = now
		}
		exp, capped := now.Add(pin), false
		if limit = limit.Add(pin); exp.After(limit) {
			exp, capped = limit, true
		}
		d := exp.Sub(now).Truncate(time.Millisecond)
		if d <= 0 {
			return Pinned{}, ErrExpired
		}
		if !capped {
			exp = now.Add(d)
		}
		expect := "-"
		if !fresh {
			expect = keepText(h)
		}
		var stale *staleError
		p, err := s.runPin(ctx, h, req, d, exp, expect)
		if errors.As(err, &stale) && !fresh {
			h, fresh = stale.hold, true
			continue
		}
		return p, err
	}
}

// pinScript serves PinCounting: keepSteps for a pin (no event), then
// the watched keys' values, and one place of an allowance counted.
//
//	KEYS[1..4] the hold's (see scripts.go)  KEYS[5] the allowance's
//	counter when ARGV[7] is not ''  then the watched keys
//	ARGV[1] holdId  ARGV[2] clientId  ARGV[3] d  ARGV[4] expiry (now+d)
//	ARGV[5] expiry as the payload's RFC3339 string  ARGV[6] the KeepUntil
//	the caller computed it from, or '-' (see extendScript)
//	ARGV[7] the allowance's limit, or ''  ARGV[8] its window (ms)
//
// Replies: {'ok', payload, counted (0|1), {the watched keys' values}} |
// {'gone'} | {'notowner'} | {'stale', payload}.
var pinScript = redis.NewScript(extendTTL + ownedHold + sortableTime + ratelimit.ReserveStep + keepSteps + `
local counted, first = 0, 5
if ARGV[7] ~= '' then
  counted = reserve(KEYS[5], ARGV[7], ARGV[8])
  first = 6
end
local watched = {}
for i = first, #KEYS do
  watched[#watched + 1] = redis.call('GET', KEYS[i]) or ''
end
return {'ok', payload, counted, watched}
`)

// runPin runs pinScript on hold h: it lives at least d more, to exp.
func (s *Store) runPin(ctx context.Context, h Hold, req PinRequest, d time.Duration, exp time.Time, expect string) (Pinned, error) {
	expText := msTime(exp.UnixMilli()).Format(time.RFC3339Nano)
	args := []any{h.HoldID, req.ClientID, d.Milliseconds(), exp.UnixMilli(), expText, expect, "", 0}
	keys := h.scriptKeys()
	if req.Count.Key != "" {
		args[6], args[7] = req.Count.Limit, req.Count.WindowMS
		keys = append(keys, req.Count.Key)
	}
	keys = append(keys, req.Watch...)
	res, err := pinScript.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return Pinned{}, fmt.Errorf("holds: pin: %w", err)
	}
	switch status(res) {
	case "ok":
		n, _ := res[2].(int64)
		h, err := s.payloads.decode(str(res, 1))
		if err != nil {
			// The place was counted all the same: the caller gives it back.
			return Pinned{Counted: n == 1}, err
		}
		s.known.put(h)
		p := Pinned{Hold: h, Counted: n == 1}
		if len(res) > 3 {
			vals, _ := res[3].([]any)
			for _, v := range vals {
				text, _ := v.(string)
				p.Watched = append(p.Watched, text)
			}
		}
		return p, nil
	case "stale":
		h, err := s.payloads.decode(str(res, 1))
		if err != nil {
			return Pinned{}, err
		}
		return Pinned{}, &staleError{hold: h}
	case "gone":
		s.known.forget(h.HoldID)
		return Pinned{}, ErrExpired
	case "notowner":
		return Pinned{}, ErrNotOwner
	default:
		return Pinned{}, fmt.Errorf("holds: pin: unexpected reply %q", status(res))
	}
}
