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

// claimScript takes a slot with the first of one or more specialists
// that can have it, enforcing the quotas and each specialist's other
// holds, in one step: a request for "any specialist" is one round trip
// however many there are.
//
//	KEYS[1] the client set  KEYS[2] holds:meta  KEYS[3] holds:expiry
//	KEYS[4] the client's booking cooldown for the type  KEYS[5] the address set
//	KEYS[6] the clinic's mark of being registered for the sweeper
//	per candidate c (1-based), from KEYS[7]: KEYS[3c+4] the hold key,
//	KEYS[3c+5] the specialist index, KEYS[3c+6] the slot's re-claim key
//	for the address's network
//	ARGV[1] now  ARGV[2] ttl  ARGV[3] expiry (now+ttl)  ARGV[4] holdId
//	ARGV[5] clientId  ARGV[6] appointmentTypeId  ARGV[7] quota
//	ARGV[8] occupied start  ARGV[9] occupied end
//	ARGV[10] how far the specialist index is read  ARGV[11] address quota
//	ARGV[12] the indexes' TTL (the longest a hold can live)
//	ARGV[13] the re-claim cool-off  ARGV[14] the address's network, or ''
//	ARGV[15] the slot start as payloads write it
//	ARGV[16] '1' to refuse while the cooldown runs, else '0'
//	ARGV[17] the number of candidates n  ARGV[18] the number of channels m
//	ARGV[19...18+m] the channels to publish the event on
//	then per candidate c: its payload and its "hold" event
//	then the watched counters: KEYS[3n+7...] and the values they must
//	have, ARGV[19+m+2n...]
//	last, the rate limits the claim counts against (countTail)
//
// Replies: {'ok', c, registered (0|1)} | {'moved'} | {'limited', j} | {'own', payload} | {'quota'} |
// {'addrquota'} | {'held', payload, remaining ms} | {'reclaim', remaining
// ms} | {'cooldown', remaining ms}. 'ok' names the candidate taken and says
// whether the clinic's mark was there; if not (a new clinic, an hour
// since the last mark, a Redis that lost its data), the script sets it and
// the caller registers the clinic for the sweeper. 'held' is the refusal when
// another client's hold stands in the way of at least one candidate (the
// one that lasts longest is named), 'reclaim' when only cool-offs do.
//
// A watched counter that moved ('moved') refuses the claim before anything
// else: the caller chose the candidates from a list those counters vouch
// for. Then the claim is counted against its rate limits, and refused
// over one of them ('limited', naming it): every claim that reaches this
// step is counted, whatever its answer, as a separate count before the
// claim would count it. Then a client in its booking cooldown for the
// type is refused, its own hold of the slot included.
//
// A new hold's event is published by the script itself: every page hears
// of a hold that exists, and of none that does not, even if the process
// dies right after the claim (channels are not keys, so this holds on
// Redis Cluster too).
//
// The caller's own hold on this very slot (with any of the candidates) is
// answered first, so a re-click by a client at its quota gets its hold
// back rather than ErrQuota. The quotas count the holds whose expiry is
// still ahead: the client's of this type, and the address's of any type.
// Members that are dead (expired, or without index entries) are pruned on
// the way, which keeps the sets small without any other cleanup.
//
// Then, per candidate, another client's live hold blocks the claim when
// its occupied time (the slot with its type's buffers) overlaps the new
// hold's: the same slot through the hold key, any other start or type
// through the specialist index, a sorted set of
// "holdId:occupiedStart:occupiedEnd" scored by the occupied end. Reading
// it from the new occupied start finds every hold that ends after it;
// those that start before the new one ends overlap. Holds whose slots are
// long past are dropped from it.
//
// Last, a claim that would succeed is refused while the slot's re-claim
// key for the claimer's network says a hold of it lapsed within the
// cool-off. The sweeper sets that key; but the slot is free from the
// moment the hold lapses, up to a sweep earlier, so the claim also looks
// at the lapsed holds it meets in the specialist index: one still in
// holds:meta with its score past (released and booked holds leave meta at
// once) of this very slot and network starts the cool-off here.
var claimScript = redis.NewScript(extendTTL + coolOff + countTail + `
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[17])
local channels = tonumber(ARGV[18])
local network = ARGV[14]
local addrQuota = tonumber(ARGV[11])
for i = 3 * n + 7, lastKey do
  if (redis.call('GET', KEYS[i]) or '') ~= ARGV[i + 12 + channels - n] then
    return {'moved'}
  end
end
local over = overLimit()
if over then
  return {'limited', over}
end
if ARGV[16] == '1' then
  local cd = redis.call('PTTL', KEYS[4])
  if cd > 0 then
    return {'cooldown', cd}
  end
end

local existing = {}
for c = 1, n do
  local raw = redis.call('GET', KEYS[3 * c + 4])
  if raw and cjson.decode(raw).clientId == ARGV[5] then
    return {'own', raw}
  end
  existing[c] = raw
end

-- The payload of a live hold, or nil.
local function live(id)
  local score = redis.call('ZSCORE', KEYS[3], id)
  if not score or tonumber(score) <= now then
    return nil
  end
  return redis.call('HGET', KEYS[2], id) or nil
end

local count = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local raw = live(id)
  if not raw then
    redis.call('SREM', KEYS[1], id)
  elseif cjson.decode(raw).appointmentTypeId == ARGV[6] then
    count = count + 1
  end
end
if count >= tonumber(ARGV[7]) then
  return {'quota'}
end

if network ~= '' and addrQuota > 0 then
  count = 0
  for _, id in ipairs(redis.call('SMEMBERS', KEYS[5])) do
    if live(id) then
      count = count + 1
    else
      redis.call('SREM', KEYS[5], id)
    end
  end
  if count >= addrQuota then
    return {'addrquota'}
  end
end

-- When a hold of this slot, claimed from this network, not yet swept,
-- lapsed at the end of its longest life; or nil.
local function lapsedHere(id)
  local raw = redis.call('HGET', KEYS[2], id)
  local score = redis.call('ZSCORE', KEYS[3], id)
  if not raw or not score then
    return nil
  end
  local p = cjson.decode(raw)
  if p.addrNet ~= network or p.appointmentTypeId ~= ARGV[6] or p.slotStartDate ~= ARGV[15] then
    return nil
  end
  -- Only a hold kept to the end of its longest life (its expiry is its
  -- keepUntil, both written from the same millisecond) starts a cool-off.
  if not p.holdKeepUntil or p.holdExpiresAt ~= p.holdKeepUntil then
    return nil
  end
  return tonumber(score)
end

local indexTTL = tonumber(ARGV[12])
local occEnd = tonumber(ARGV[9])

-- What stands in the way of candidate c: nil, or 'held' with the other
-- hold's payload and remaining ms, or 'reclaim' with the remaining ms.
local function blocked(c, holdKey, index, reclaim)
  if existing[c] then
    return 'held', existing[c], redis.call('PTTL', holdKey)
  end
  local lapsedAt = nil
  redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. (now - indexTTL))
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', index, '(' .. ARGV[8], ARGV[10])) do
    local id, from = string.match(m, '^([^:]+):(%d+):')
    local raw = live(id)
    if not raw then
      if network ~= '' then
        local at = lapsedHere(id)
        if at and (not lapsedAt or at > lapsedAt) then
          lapsedAt = at
        end
      end
      redis.call('ZREM', index, m)
    elseif tonumber(from) < occEnd and cjson.decode(raw).clientId ~= ARGV[5] then
      return 'held', raw, tonumber(redis.call('ZSCORE', KEYS[3], id)) - now
    end
  end
  if network ~= '' then
    if lapsedAt then
      coolOff(reclaim, lapsedAt + tonumber(ARGV[13]), now)
    end
    local untilMs = tonumber(redis.call('GET', reclaim) or 0) or 0
    if untilMs > now then
      return 'reclaim', nil, untilMs - now
    end
  end
  return nil
end

local held, heldMs, reclaimMs = nil, -1, -1
for c = 1, n do
  local holdKey, index, reclaim = KEYS[3 * c + 4], KEYS[3 * c + 5], KEYS[3 * c + 6]
  local why, other, ms = blocked(c, holdKey, index, reclaim)
  if why == 'held' then
    if ms > heldMs then
      held, heldMs = other, ms
    end
  elseif why == 'reclaim' then
    reclaimMs = math.max(reclaimMs, ms)
  else
    local payload = ARGV[18 + channels + 2 * c - 1]
    local event = ARGV[18 + channels + 2 * c]
    local registered = redis.call('EXISTS', KEYS[6])
    if registered == 0 then
      redis.call('SET', KEYS[6], '1', 'EX', 3600)
    end
    redis.call('SET', holdKey, payload, 'PX', ARGV[2])
    redis.call('HSET', KEYS[2], ARGV[4], payload)
    redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
    redis.call('SADD', KEYS[1], ARGV[4])
    extendTTL(KEYS[1], tonumber(ARGV[2]))
    redis.call('ZADD', index, ARGV[9], ARGV[4] .. ':' .. ARGV[8] .. ':' .. ARGV[9])
    extendTTL(index, indexTTL)
    if network ~= '' and addrQuota > 0 then
      redis.call('SADD', KEYS[5], ARGV[4])
      extendTTL(KEYS[5], indexTTL)
    end
    for i = 19, 18 + channels do
      redis.call('PUBLISH', ARGV[i], event)
    end
    return {'ok', c, registered}
  end
end
if held then
  return {'held', held, math.max(heldMs, 0)}
end
return {'reclaim', math.max(reclaimMs, 0)}
`)

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
