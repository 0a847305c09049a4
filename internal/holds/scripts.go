package holds

import "github.com/redis/go-redis/v9"

// The scripts. Each exists because its operation reads something and writes
// based on it; run as separate commands, another client could change the
// hold in between. Scripts run
// atomically, so here the check and the write are one step.
//
// Every operation on one hold declares the same four keys, first (a claim,
// which may try several specialists at once, has a layout of its own; see
// claimScript):
//
//	KEYS[1] hold key   KEYS[2] client set   KEYS[3] holds:meta   KEYS[4] holds:expiry
//
// Replies are tables whose first element is a status word; Go maps the
// words to errors. Times are unix milliseconds passed in from Go.

// extendTTL is shared Lua: extend a key's TTL to at least ms milliseconds,
// never shorten it (the client set may already live longer for another,
// pinned hold). PTTL -1 (no TTL yet, a fresh SADD) gets one; -2 (no key)
// makes PEXPIRE a no-op.
const extendTTL = `
local function extendTTL(key, ms)
  local cur = redis.call('PTTL', key)
  if cur == -1 or cur < ms then
    redis.call('PEXPIRE', key, ms)
  end
end
`

// coolOff is shared Lua: set a re-claim cool-off key to last until untilMs
// (its value; the key's own TTL only cleans up), never shortening one
// that already lasts longer. Readers compare the value with their now.
const coolOff = `
local function coolOff(key, untilMs, now)
  local cur = tonumber(redis.call('GET', key) or 0) or 0
  if untilMs > now and untilMs > cur then
    redis.call('SET', key, string.format('%.0f', untilMs), 'PX', string.format('%.0f', untilMs - now))
  end
end
`

// ownedHold is shared Lua: the payload of the live hold key, decoded, if it
// is holdId and belongs to clientId; otherwise the refusal word, 'gone'
// (expired, or the key is another hold's by now) or 'notowner'.
const ownedHold = `
local function ownedHold(key, holdId, clientId)
  local cur = redis.call('GET', key)
  if not cur then
    return nil, nil, 'gone'
  end
  local p = cjson.decode(cur)
  if p.holdId ~= holdId then
    return nil, nil, 'gone'
  end
  if p.clientId ~= clientId then
    return nil, nil, 'notowner'
  end
  return cur, p, nil
end
`

// releaseScript deletes the caller's live hold and its index entries, and
// announces it; an owner's release also bars the network the hold was
// claimed from from its slot until the hold's end of life.
//
//	with a bar: KEYS[5] the slot's re-claim key for that network
//	ARGV[1] holdId  ARGV[2] clientId  ARGV[3] now
//	ARGV[4] when the bar ends (the hold's KeepUntil), 0 for none
//	ARGV[5] the "release" event  ARGV[6...] the channels to publish it on
//
// Replies: {'ok', payload} | {'gone'} | {'notowner'}.
//
// A hold whose key has already expired is 'gone' and left alone: its index
// entries are the sweeper's, which announces it as expired. The release
// is published in the same step as the deletion, as a claim publishes its
// hold: no page (and no live view, which refuses claims of times it shows
// held) keeps a released hold because the process died, or its request
// ended, right after the script. The bar is written in that step too, so
// no claim from the network can come between the release and the bar: a
// release followed by a claim is not a way to renew a hold's life, while
// every other network may take the time at once.
var releaseScript = redis.NewScript(coolOff + ownedHold + `
local cur, _, refused = ownedHold(KEYS[1], ARGV[1], ARGV[2])
if refused then
  return {refused}
end
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
if KEYS[5] then
  coolOff(KEYS[5], tonumber(ARGV[4]), tonumber(ARGV[3]))
end
for i = 6, #ARGV do
  redis.call('PUBLISH', ARGV[i], ARGV[5])
end
return {'ok', cur}
`)

// consumeScript removes a hold that became a booking.
//
//	with a cooldown: KEYS[5] the cooldown key  KEYS[6] its reverse key
//	ARGV[1] holdId  ARGV[2] the "confirm" event, or ''
//	ARGV[3] the cooldown in ms (0: none)  ARGV[4] the booking's id
//	ARGV[5...] the channels to publish the event on
//
// The index entries go even if the key has just expired, so the sweeper
// never announces "expired" for a slot that was booked. The key is deleted
// only if it is still this hold: it may already be someone else's. The
// booking's event, when given, is published in the same step, so no page
// sees the hold gone before it hears of the booking. The cooldown the
// booking starts is written with it, as SetCooldown writes it: the
// cooldown key names the booking and the reverse key the cooldown key.
var consumeScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cjson.decode(cur).holdId == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
if KEYS[6] and tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[5], ARGV[4], 'PX', ARGV[3])
  redis.call('SET', KEYS[6], KEYS[5], 'PX', ARGV[3])
end
for i = 5, #ARGV do
  redis.call('PUBLISH', ARGV[i], ARGV[2])
end
return 1
`)

// sweepScript removes expired holds of one clinic and returns their
// payloads. Concurrent sweepers all see the same candidates, but the script
// runs atomically and removes what it returns, so each expired hold is
// returned to exactly one of them.
//
//	KEYS[1] holds:meta  KEYS[2] holds:expiry
//	then per candidate, in order: its hold key, its client set, and, if
//	its payload names the claimer's network, its re-claim key
//	ARGV[1] now  ARGV[2] the re-claim cool-off
//	then per candidate: its holdId and how many keys it declared (2 or 3)
//
// A swept hold with a re-claim key starts its cool-off, counted from its
// lapse (its score), unless the claim script already did.
//
// A candidate is swept only if its score is (still) <= now, its meta entry
// is still there, and its hold key no longer holds it. A hold heartbeated
// since the caller's read has a new score and stays; one whose key outlives
// its score by a few ms (clocks) is left for the next sweep.
var sweepScript = redis.NewScript(coolOff + `
local now = tonumber(ARGV[1])
local coolOffMs = tonumber(ARGV[2])
local out = {}
local k = 3
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  local hk, ck = KEYS[k], KEYS[k + 1]
  local rk = nil
  if ARGV[i + 1] == '3' then
    rk = KEYS[k + 2]
  end
  k = k + tonumber(ARGV[i + 1])
  local score = redis.call('ZSCORE', KEYS[2], id)
  local raw = redis.call('HGET', KEYS[1], id)
  if score and raw and tonumber(score) <= now then
    local cur = redis.call('GET', hk)
    if not cur or cjson.decode(cur).holdId ~= id then
      redis.call('HDEL', KEYS[1], id)
      redis.call('ZREM', KEYS[2], id)
      redis.call('SREM', ck, id)
      if rk then
        coolOff(rk, tonumber(score) + coolOffMs, now)
      end
      out[#out + 1] = raw
    end
  end
end
return out
`)

// clearCooldownScript deletes a cooldown through its reverse key, but only
// if the cooldown is still this booking's: a later booking of the same
// client and type overwrites the cooldown, and cancelling the earlier one
// must not lift the later one's.
//
//	KEYS[1] cooldown key  KEYS[2] reverse key  ARGV[1] bookingId
var clearCooldownScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
redis.call('DEL', KEYS[2])
return 1
`)

// activeScript returns the payloads of the holds whose expiry is after
// ARGV[1] (now): false (nil to Go) for an id in the expiry index without a
// payload.
//
//	KEYS[1] holds:meta  KEYS[2] holds:expiry
var activeScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf')
local out = {}
-- HMGET in chunks: Lua unpacks a few thousand values at most.
for i = 1, #ids, 1000 do
  local part = redis.call('HMGET', KEYS[1], unpack(ids, i, math.min(i + 999, #ids)))
  for j = 1, #part do
    out[#out + 1] = part[j]
  end
end
return out
`)
