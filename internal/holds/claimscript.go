package holds

import "github.com/redis/go-redis/v9"

// claimScript takes a slot with the first of one or more specialists
// that can have it, and a room when the type needs one, enforcing the
// quotas, each specialist's other holds and the rooms' other holds, in
// one step: a request for "any specialist" is one round trip however many
// there are.
//
//	KEYS[1] the client set  KEYS[2] holds:meta  KEYS[3] holds:expiry
//	KEYS[4] the client's booking cooldown for the type  KEYS[5] the address set
//	KEYS[6] the clinic's mark of being registered for the sweeper
//	per candidate c (1-based), from KEYS[7]: KEYS[3c+4] the hold key,
//	KEYS[3c+5] the specialist index, KEYS[3c+6] the slot's re-claim key
//	for the address's network
//	per room j (1-based): KEYS[3n+6+j] the room index
//	ARGV[1] now  ARGV[2] ttl  ARGV[3] expiry (now+ttl)  ARGV[4] holdId
//	ARGV[5] clientId  ARGV[6] appointmentTypeId  ARGV[7] quota
//	ARGV[8] occupied start  ARGV[9] occupied end
//	ARGV[10] how far the specialist index is read  ARGV[11] address quota
//	ARGV[12] the indexes' TTL (the longest a hold can live)
//	ARGV[13] the re-claim cool-off  ARGV[14] the address's network, or ''
//	ARGV[15] the slot start as payloads write it
//	ARGV[16] '1' to refuse while the cooldown runs, else '0'
//	ARGV[17] the number of candidates n  ARGV[18] the number of channels m
//	ARGV[19] the number of rooms r (0: the type needs none)
//	ARGV[20...19+m] the channels to publish the event on
//	then per candidate c: its payload and its "hold" event (naming the
//	first room, if any)
//	then the slot's start and end (no buffers) and how far a room index
//	is read, then the r room ids in the order to try them
//	then the watched counters: KEYS[3n+7+r...] and the values they must
//	have, after the room ids
//	last, the rate limits the claim counts against (countTail)
//
// Replies: {'ok', c, registered (0|1), room j (0: none)} | {'moved'} |
// {'limited', j} | {'own', payload} | {'quota'} |
// {'addrquota'} | {'held', payload, remaining ms} | {'reclaim', remaining
// ms} | {'cooldown', remaining ms}. 'ok' names the candidate and room taken and says
// whether the clinic's mark was there; if not (a new clinic, an hour
// since the last mark, a Redis that lost its data), the script sets it and
// the caller registers the clinic for the sweeper. 'held' is the refusal when
// another client's hold stands in the way of at least one candidate (the
// one that lasts longest is named), or of every room, 'reclaim' when only
// cool-offs do.
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
// Then the room, when the type needs one: the first of the rooms that no
// other client's live hold has for an overlapping time (the slots alone:
// the gate keeps bookings of one room apart by their times, without
// buffers). Each room index is a sorted set of "holdId:start:end" scored
// by the end, read as the specialist index is (below); when every room is
// held the claim is refused as a held slot, before any specialist is
// looked at. The room found is the hold's, whichever specialist takes it:
// any room the caller passed serves every candidate.
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
local rooms = tonumber(ARGV[19])
local roomBase = 19 + channels + 2 * n
local network = ARGV[14]
local addrQuota = tonumber(ARGV[11])
for i = 3 * n + 7 + rooms, lastKey do
  if (redis.call('GET', KEYS[i]) or '') ~= ARGV[i + 16 + channels - n] then
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

-- The place of the first room no other client's live hold has for an
-- overlapping time; or nil, with the payload and remaining ms of the
-- room hold in the way that lasts longest.
local function freeRoom()
  local slotEnd = tonumber(ARGV[roomBase + 2])
  local other, otherMs = nil, -1
  for j = 1, rooms do
    local index = KEYS[3 * n + 6 + j]
    local held = false
    redis.call('ZREMRANGEBYSCORE', index, '-inf', '(' .. (now - indexTTL))
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', index, '(' .. ARGV[roomBase + 1], ARGV[roomBase + 3])) do
      local id, from = string.match(m, '^([^:]+):(%d+):')
      local raw = live(id)
      if not raw then
        redis.call('ZREM', index, m)
      elseif tonumber(from) < slotEnd and cjson.decode(raw).clientId ~= ARGV[5] then
        held = true
        local ms = tonumber(redis.call('ZSCORE', KEYS[3], id)) - now
        if ms > otherMs then
          other, otherMs = raw, ms
        end
      end
    end
    if not held then
      return j
    end
  end
  return nil, other, otherMs
end

-- s with the first plain occurrence of from replaced by to.
local function swap(s, from, to)
  local i, j = string.find(s, from, 1, true)
  if not i then
    return s
  end
  return string.sub(s, 1, i - 1) .. to .. string.sub(s, j + 1)
end

local room = 0
if rooms > 0 then
  local j, other, ms = freeRoom()
  if not j then
    return {'held', other, math.max(ms, 0)}
  end
  room = j
end

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
    local payload = ARGV[19 + channels + 2 * c - 1]
    local event = ARGV[19 + channels + 2 * c]
    if room > 1 then
      local from = '"resourceId":"' .. ARGV[roomBase + 4] .. '"'
      local to = '"resourceId":"' .. ARGV[roomBase + 3 + room] .. '"'
      payload, event = swap(payload, from, to), swap(event, from, to)
    end
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
    if room > 0 then
      local roomIndex = KEYS[3 * n + 6 + room]
      redis.call('ZADD', roomIndex, ARGV[roomBase + 2], ARGV[4] .. ':' .. ARGV[roomBase + 1] .. ':' .. ARGV[roomBase + 2])
      extendTTL(roomIndex, indexTTL)
    end
    if network ~= '' and addrQuota > 0 then
      redis.call('SADD', KEYS[5], ARGV[4])
      extendTTL(KEYS[5], indexTTL)
    end
    for i = 20, 19 + channels do
      redis.call('PUBLISH', ARGV[i], event)
    end
    return {'ok', c, registered, room}
  end
end
if held then
  return {'held', held, math.max(heldMs, 0)}
end
return {'reclaim', math.max(reclaimMs, 0)}
`)
