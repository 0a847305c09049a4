package holds

// Keeping a hold: heartbeats and the confirm's pin.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/ratelimit"
)

// Heartbeat extends the client's hold to a full TTL from now, but never
// past its KeepUntil (a hold without one, written before it existed, is
// at it), and returns it. A hold that expired, never existed,
// is another client's or has reached its KeepUntil: ErrGone (the caller
// cannot tell them apart, and need not). A hold kept to its KeepUntil then
// lapses like any other, and the sweeper announces it as expired.
//
// counts are rate limits of the caller's (keys with the hold's clinic's
// hash tag), counted in the heartbeat's own step before anything else:
// over one of them the answer is a *LimitedError. A heartbeat of a hold
// this store cannot find is counted all the same (Count).
func (s *Store) Heartbeat(ctx context.Context, holdID, clientID string, counts ...ratelimit.Counter) (Hold, error) {
	h, r, err := s.extend(ctx, holdID, clientID, s.ttl, true, counts)
	switch {
	case errors.Is(err, errNoHold), errors.Is(err, ErrNotOwner):
		return Hold{}, ErrGone
	case err != nil:
		return Hold{}, err
	}
	if !r.published {
		s.publishOrLog(ctx, Event{Type: EventHeartbeat, Hold: h})
	}
	return h, nil
}

// Pin prepares the booking path: the hold must be live and the client's,
// and it then lives at least pin more (max of its remaining TTL and pin),
// so it cannot lapse while the booking is inserted. Unlike a heartbeat a
// pin may reach past KeepUntil, by pin at most (itself at most a minute):
// a patient confirming just before it is not cut off mid-insert, and
// repeated pins cannot keep a hold. Errors: ErrExpired (expired or
// unknown), ErrNotOwner. Publishes nothing.
func (s *Store) Pin(ctx context.Context, holdID, clientID string, pin time.Duration) (Hold, error) {
	h, _, err := s.PinWatching(ctx, holdID, clientID, pin, nil)
	return h, err
}

// PinWatching is Pin that also reads, in the pin's own step, the string
// values of watch ("" for a missing key): counters of the hold's clinic
// (keys with its hash tag) whose values tell the caller whether what it
// read before the pin still stands.
func (s *Store) PinWatching(ctx context.Context, holdID, clientID string, pin time.Duration, watch []string) (Hold, []string, error) {
	h, r, err := s.extend(ctx, holdID, clientID, min(max(pin, time.Millisecond), maxPin), false, nil, watch...)
	if errors.Is(err, errNoHold) {
		return Hold{}, nil, ErrExpired
	}
	return h, r.watched, err
}

// Keep makes the client's live hold last until until (and no less than
// it does already), heartbeats aside, and raises its KeepUntil to at least
// until: the server's own holds (a waitlist offer's, passed from one
// patient to the next) are kept this way, as long as the server decides,
// past the life their claim gave them. A pin then reaches past the new
// KeepUntil as it would past a claim's. The specialist's index of holds,
// and its room's, live as long. Publishes a heartbeat event with the new expiry when it
// changed. Errors: ErrExpired, ErrNotOwner.
func (s *Store) Keep(ctx context.Context, holdID, clientID string, until time.Time) (Hold, error) {
	h, ok, err := s.lookup(ctx, holdID)
	if err != nil {
		return Hold{}, err
	}
	if !ok {
		return Hold{}, ErrExpired
	}
	now := s.now()
	d := until.Sub(now).Truncate(time.Millisecond)
	if d <= 0 {
		return h, nil
	}
	// The script announces an extended hold; an unchanged one needs no event.
	h, _, err = s.runExtend(ctx, h, clientID, d, now.Add(d), true, true, "-")
	switch {
	case errors.Is(err, errNoHold):
		return Hold{}, ErrExpired
	case err != nil:
		return Hold{}, err
	}
	return h, nil
}

// extendScript serves Heartbeat (d = ttl) and Pin (d = the pin): the hold
// must be live and the caller's; it then lives at least d more.
//
//	ARGV[1] holdId  ARGV[2] clientId  ARGV[3] d  ARGV[4] expiry (now+d)
//	ARGV[5] expiry as the payload's RFC3339 string
//	ARGV[6] the KeepUntil the caller computed the expiry from (RFC3339),
//	or '-' when it read the payload just now
//	for a heartbeat: ARGV[7] its event if the hold is extended  ARGV[8...]
//	the channels
//	KEYS[5...] keys of the clinic the caller watches (see PinWatching)
//
// Replies: {'ok', payload, published (0|1), {the watched keys' values}} |
// {'gone'} | {'notowner'} |
// {'stale', payload}: the hold's KeepUntil is not the one the caller
// remembered (the server kept it longer since), so nothing was changed and
// the caller computes again from the payload.
//
// "Live" means the hold key exists AND holds this holdId: after an expiry
// someone else may have claimed the same slot under a new id while our meta
// entry waits for the sweeper. The TTL is only ever raised (max(remaining,
// d)), so a heartbeat during a booking's insert cannot undo its pin. The
// payload is re-encoded with the new expiry in both the key and the meta
// hash, so every reader sees the same hold. An extended hold's heartbeat
// event is published here, in the same step: the caller built it from the
// hold it knew with the new expiry, and nothing else in a payload ever
// changes but the KeepUntil the script checks. A hold kept as it was
// (pinned for longer) is announced by the caller with the payload it gets
// back.
var extendScript = redis.NewScript(extendTTL + ownedHold + sortableTime + `
local lastKey, lastArg = #KEYS, #ARGV
` + extendSteps)

// heartbeatScript is extendScript for a heartbeat that counts against
// rate limits of the caller's (countTail), before anything else: over one
// of them it answers {'limited', j} and changes nothing. Every heartbeat
// that reaches it is counted, whatever its answer, as separate counts
// before the heartbeat would count it.
var heartbeatScript = redis.NewScript(extendTTL + ownedHold + sortableTime + countTail + `
local over = overLimit()
if over then
  return {'limited', over}
end
` + extendSteps)

// extendSteps is extendScript's work, on the keys and arguments up to
// lastKey and lastArg: keepSteps, then the watched keys' values and the
// heartbeat's event.
const extendSteps = keepSteps + `
local watched = {}
for i = 5, lastKey do
  watched[#watched + 1] = redis.call('GET', KEYS[i]) or ''
end
if not (extended and lastArg >= 7) then
  return {'ok', payload, 0, watched}
end
for i = 8, lastArg do
  redis.call('PUBLISH', ARGV[i], ARGV[7])
end
return {'ok', payload, 1, watched}
`

// keepSteps is what extending and pinning a hold share: refused when the
// hold is gone, another's or not as the caller remembered it (a return);
// else the hold lives at least ARGV[3] ms more, leaving the locals
// payload (as kept) and extended (whether its expiry moved) to the steps
// that follow.
const keepSteps = `
if not redis.call('HGET', KEYS[3], ARGV[1]) then
  return {'gone'}
end
local cur, p, refused = ownedHold(KEYS[1], ARGV[1], ARGV[2])
if refused then
  return {refused}
end
if ARGV[6] ~= '-' and sortable(p.holdKeepUntil) ~= sortable(ARGV[6]) then
  return {'stale', cur}
end

local d = tonumber(ARGV[3])
local payload = cur
local extended = redis.call('PTTL', KEYS[1]) < d
if extended then
  p.holdExpiresAt = ARGV[5]
  payload = cjson.encode(p)
  redis.call('SET', KEYS[1], payload, 'PX', d)
  redis.call('HSET', KEYS[3], ARGV[1], payload)
  redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
end
-- The claim script may have pruned the member if the score had run out
-- a moment before the key did; a live hold belongs in its client's set.
redis.call('SADD', KEYS[2], ARGV[1])
extendTTL(KEYS[2], d)
`

// sortableTime is shared Lua: a payload's time as a string that sorts and
// compares as the time does. Payload times are written as Go writes them,
// UTC RFC3339 with the fraction's trailing zeros dropped, so the fraction
// is padded; a missing or unreadable time is the empty string.
const sortableTime = `
local function sortable(t)
  local sec, frac = string.match(t or '', '^(%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d)%.?(%d*)Z$')
  if not sec then
    return ''
  end
  return sec .. string.sub(frac .. '000000000', 1, 9)
end
`

// keepScript serves Keep: extendScript's step, with the same arguments
// (its ARGV[6] unused: Keep reads the payload just before),
// on a hold whose KeepUntil is then at least the new expiry (ARGV[5]), and
// with the specialist's index of holds (KEYS[5]), and the room's (KEYS[6])
// when the hold has a room, living at least d and a minute more, as a
// claim leaves them. A raised KeepUntil alone rewrites the
// payload without touching the key's TTL or the expiry score.
//
// Payload times are compared as sortableTime reads them. A payload without
// a KeepUntil gets one.
var keepScript = redis.NewScript(extendTTL + ownedHold + sortableTime + `
if not redis.call('HGET', KEYS[3], ARGV[1]) then
  return {'gone'}
end
local cur, p, refused = ownedHold(KEYS[1], ARGV[1], ARGV[2])
if refused then
  return {refused}
end

local d = tonumber(ARGV[3])
local extended = redis.call('PTTL', KEYS[1]) < d
local raised = sortable(p.holdKeepUntil) < sortable(ARGV[5])
local payload = cur
if extended or raised then
  if extended then
    p.holdExpiresAt = ARGV[5]
  end
  if raised then
    p.holdKeepUntil = ARGV[5]
  end
  payload = cjson.encode(p)
  redis.call('HSET', KEYS[3], ARGV[1], payload)
end
if extended then
  redis.call('SET', KEYS[1], payload, 'PX', d)
  redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
elseif raised then
  redis.call('SET', KEYS[1], payload, 'KEEPTTL')
end
redis.call('SADD', KEYS[2], ARGV[1])
extendTTL(KEYS[2], d)
extendTTL(KEYS[5], d + 60000)
if KEYS[6] then
  extendTTL(KEYS[6], d + 60000)
end
if not (extended and ARGV[7]) then
  return {'ok', payload, 0}
end
for i = 8, #ARGV do
  redis.call('PUBLISH', ARGV[i], ARGV[7])
end
return {'ok', payload, 1}
`)

// errNoHold is extend's "expired or unknown"; callers name it their way.
var errNoHold = errors.New("holds: no such live hold")

// extend runs extendScript. With announce (a heartbeat) the script also
// publishes the heartbeat event of an extended hold, built here; published
// says whether it did (if not, the caller publishes what it returned). A
// hold this process knows is extended in one round trip; one it does not,
// or whose KeepUntil moved since, is read first. counts are counted once
// (see Heartbeat).
func (s *Store) extend(ctx context.Context, holdID, clientID string, want time.Duration, announce bool, counts []ratelimit.Counter, watch ...string) (Hold, extended, error) {
	h, fresh, ok, err := s.recall(ctx, holdID)
	if err != nil {
		return Hold{}, extended{}, err
	}
	if !ok {
		return Hold{}, extended{}, s.countRefused(ctx, counts, errNoHold)
	}
	for {
		now := s.now()
		d := want
		exp := now.Add(d)
		limit := h.KeepUntil
		if limit.IsZero() {
			// A payload from before KeepUntil existed: its claim time is
			// unknown, so it counts as at its limit. A heartbeat answers gone
			// and the hold lapses within a TTL; a pin still gets its minute.
			limit = now
		}
		if !announce {
			limit = limit.Add(d) // a pin (see Pin)
		}
		capped := exp.After(limit)
		if capped {
			exp = limit
		}
		// Whole milliseconds, as Redis counts them; nothing left is gone.
		if d = exp.Sub(now).Truncate(time.Millisecond); d <= 0 {
			return Hold{}, extended{}, s.countRefused(ctx, counts, errNoHold)
		}
		if !capped {
			// A capped hold's expiry is its limit to the millisecond: that is
			// how a lapse at the end of the longest life is told apart.
			exp = now.Add(d)
		}
		expect := "-"
		if !fresh {
			expect = keepText(h)
		}
		var stale *staleError
		h2, r, err := s.runCounted(ctx, h, clientID, d, exp, announce, false, expect, counts, watch...)
		if errors.As(err, &stale) && !fresh {
			// Counted already: the script counts before it looks.
			h, fresh, counts = stale.hold, true, nil
			continue
		}
		return h2, r, err
	}
}

// keepText is h's KeepUntil as extendScript compares it; "" for none.
func keepText(h Hold) string {
	if h.KeepUntil.IsZero() {
		return ""
	}
	return h.KeepUntil.UTC().Format(time.RFC3339Nano)
}

// extended is what extendScript answered besides the hold: whether it
// published the heartbeat event, and the watched keys' values.
type extended struct {
	published bool
	watched   []string
}

// staleError is extendScript's 'stale': the hold as it is now.
type staleError struct{ hold Hold }

func (e *staleError) Error() string { return "holds: extend: the remembered hold is out of date" }

// runExtend runs extendScript on hold h: it lives at least d more, to exp.
// With keep it runs keepScript instead (see Keep): the hold's KeepUntil
// becomes at least exp, and the specialist's (and its room's) index lives
// as long, plus a minute.
func (s *Store) runExtend(ctx context.Context, h Hold, clientID string, d time.Duration, exp time.Time, announce, keep bool, expect string, watch ...string) (Hold, extended, error) {
	return s.runCounted(ctx, h, clientID, d, exp, announce, keep, expect, nil, watch...)
}

// runCounted is runExtend for a heartbeat that counts against counts:
// heartbeatScript then counts them first.
func (s *Store) runCounted(ctx context.Context, h Hold, clientID string, d time.Duration, exp time.Time, announce, keep bool, expect string, counts []ratelimit.Counter, watch ...string) (Hold, extended, error) {
	// RFC3339Nano is the layout time.Time's MarshalJSON writes, so the
	// script's re-encoded payload reads back like one Go wrote.
	expText := msTime(exp.UnixMilli()).Format(time.RFC3339Nano)
	args := []any{h.HoldID, clientID, d.Milliseconds(), exp.UnixMilli(), expText, expect}
	if announce {
		longer := h
		longer.ExpiresAt = msTime(exp.UnixMilli())
		if keep && longer.KeepUntil.Before(longer.ExpiresAt) {
			longer.KeepUntil = longer.ExpiresAt
		}
		msg, channels, err := eventMessage(Event{Type: EventHeartbeat, Hold: longer})
		if err != nil {
			return Hold{}, extended{}, err
		}
		args = append(args, string(msg))
		for _, ch := range channels {
			args = append(args, ch)
		}
	}
	script, keys := extendScript, append(h.scriptKeys(), watch...)
	switch {
	case keep:
		script, keys = keepScript, append(h.scriptKeys(), specialistKey(h.ClinicID, h.SpecialistID))
		if h.ResourceID != uuid.Nil {
			keys = append(keys, roomKey(h.ClinicID, h.ResourceID))
		}
	case len(counts) > 0:
		script = heartbeatScript
		keys, args = withCounts(keys, args, counts)
	}
	res, err := script.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return Hold{}, extended{}, fmt.Errorf("holds: extend: %w", err)
	}
	switch status(res) {
	case "ok":
		h, err := s.payloads.decode(str(res, 1))
		if err == nil {
			s.known.put(h)
		}
		n, _ := res[2].(int64)
		r := extended{published: n == 1}
		if len(res) > 3 {
			vals, _ := res[3].([]any)
			for _, v := range vals {
				text, _ := v.(string)
				r.watched = append(r.watched, text)
			}
		}
		return h, r, err
	case "limited":
		return Hold{}, extended{}, limited(res, counts)
	case "stale":
		h, err := s.payloads.decode(str(res, 1))
		if err != nil {
			return Hold{}, extended{}, err
		}
		return Hold{}, extended{}, &staleError{hold: h}
	case "gone":
		s.known.forget(h.HoldID)
		return Hold{}, extended{}, errNoHold
	case "notowner":
		return Hold{}, extended{}, ErrNotOwner
	default:
		return Hold{}, extended{}, fmt.Errorf("holds: extend: unexpected reply %q", status(res))
	}
}
