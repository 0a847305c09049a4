package slots

// What follows a new booking in Redis, in one step: its minutes marked in
// the bitmap, the counters of its days moved on, and the lists this
// instance holds carried over it.

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
)

// bookedScript follows a new booking: it marks the booking's minutes in
// the day bitmaps that exist, moves each day counter on by one (living
// ARGV[1] seconds from now), and stores each carried-over list whose
// counters moved to exactly the values its name was made from. Its keys
// all carry the clinic's hash tag: one step on Redis Cluster too. The
// counters move first: a script that fails half-way (a bitmap key of
// another type, say) has still retired every list showing the time free.
//
//	KEYS: n day counters, then m bitmaps, then k lists
//	ARGV[1] the counters' TTL (s)  ARGV[2] n  ARGV[3] m  ARGV[4] k
//	then per bitmap: the first and last minute
//	then per list: the encoded list, its TTL (ms), c, and c pairs
//	(counter index 1..n, the value the list's name was made from)
//
// Replies {the counters' new values, per list 1 (stored) or 0}.
var bookedScript = redis.NewScript(setRange + markExisting + `
local n, m, k = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local vals = {}
for i = 1, n do
  vals[i] = redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[1])
end
local a = 5
for i = 1, m do
  markExisting(KEYS[n + i], ARGV[a], ARGV[a + 1])
  a = a + 2
end
local stored = {}
for i = 1, k do
  local list, ttl, c = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2])
  a = a + 3
  local named = true
  for j = 1, c do
    if vals[tonumber(ARGV[a])] ~= tonumber(ARGV[a + 1]) then
      named = false
    end
    a = a + 2
  end
  stored[i] = 0
  if named then
    redis.call('SET', KEYS[n + m + i], list, 'PX', ttl)
    stored[i] = 1
  end
end
return {vals, stored}
`)

// booked follows a new booking b (committed) in one script call: its
// minutes in the bitmap, its days' counters moved on (retiring the lists
// that could show its time free), and, with carry, the lists this
// instance holds of those days carried over it (see carried). then,
// when set, queues another step on the same pipeline, sent after the
// script in one round trip (Redis runs them in order); its done is
// called once the pipeline is sent. sent reports whether then was.
func (s *Service) booked(ctx context.Context, loc *time.Location, b booking.Booking, carry bool, then Then) (sent bool) {
	if s.rdb == nil {
		return false
	}
	days, t, ok := s.bookingDays(ctx, loc, b)
	if !ok {
		s.Bitmap.Mark(ctx, loc, b.ClinicID, b.SpecialistID, b.Start, b.End)
		return false
	}
	sgs := segments(loc, b.Start, b.End)
	var lists []carriedList
	if carry {
		lists = s.carried(b, t, days)
	}
	keys := slices.Clone(days)
	args := []any{int64(dayGenerationTTL / time.Second), len(days), len(sgs), len(lists)}
	for _, sg := range sgs {
		keys = append(keys, bitmapKey(b.ClinicID, b.SpecialistID, sg.date))
		args = append(args, sg.from, sg.to-1)
	}
	for _, l := range lists {
		keys = append(keys, l.ref.key)
		args = append(args, l.raw, l.ttl.Milliseconds(), len(l.named))
		for _, nv := range l.named {
			args = append(args, nv[0], nv[1])
		}
	}
	var cmd *redis.Cmd
	if then == nil {
		cmd = bookedScript.Run(ctx, s.rdb, keys, args...)
	} else {
		// The script's whole text: a script Redis no longer knows must
		// not be run after the step that follows it.
		pipe := s.rdb.Pipeline()
		cmd = bookedScript.Eval(ctx, pipe, keys, args...)
		done := then(pipe)
		_, _ = pipe.Exec(ctx)
		defer done()
		sent = true
	}
	res, err := cmd.Slice()
	if err != nil || len(res) != 2 {
		// The entries under the old generations live at most the cache's
		// TTL; a bitmap left unmarked says "ask the database".
		s.logger.Warn("mark the bitmap and bump timeslot day generations", "err", err)
		return sent
	}
	vals, _ := res[0].([]any)
	stored, _ := res[1].([]any)
	if len(vals) != len(days) || len(stored) != len(lists) {
		s.logger.Warn("mark the bitmap and bump timeslot day generations", "reply", res)
		return sent
	}
	texts := make([]string, len(days))
	for i, v := range vals {
		n, _ := v.(int64)
		texts[i] = strconv.FormatInt(n, 10)
	}
	s.memo.saw(days, texts)
	now := s.now()
	for i, l := range lists {
		if n, _ := stored[i].(int64); n == 1 {
			s.memo.put(l.ref, l.e, now, s.ttl)
		}
	}
	return sent
}

// Then is another package's step in Redis that follows a new booking
// after this package's, sent with it in one round trip
// (OnBookingChangeThen): it queues its commands on pipe and returns what
// reads their replies once pipe is sent.
type Then func(pipe redis.Pipeliner) (done func())

// carriedList is a list carried over a booking: its new name and
// entry, encoded, and the counters its name was made from, as pairs of
// the counter's index in the booking's days (1-based) and its value.
type carriedList struct {
	ref   *cacheRef
	e     *entry
	raw   []byte
	ttl   time.Duration
	named [][2]int64
}

// carried carries the lists this instance holds over a new booking
// instead of letting the next read recompute them: a booking is one more
// busy interval, which takes its specialist out of the slots it blocks
// exactly as a hold does (availability.ApplyHolds, whose invariant the
// engine's tests check). A carried list is named by the counters of its
// days as the booking will have moved them (each by one from the value
// the list was read at) and keeps its computation's expiry; the script
// stores it only if the counters did move to those values, so none can
// miss a booking. Any other list is recomputed when next read.
func (s *Service) carried(b booking.Booking, bt availability.AppointmentType, days []string) []carriedList {
	busy := []availability.Busy{{SpecialistID: b.SpecialistID, Start: b.Start, End: b.End,
		BufferBefore: bt.BufferBefore, BufferAfter: bt.BufferAfter}}
	index := make(map[string]int64, len(days))
	for i, k := range days {
		index[k] = int64(i + 1)
	}
	now := s.now()
	var out []carriedList
	// A list of a type that needs a room also loses the slots whose last
	// free room the booking took, which a busy specialist does not say:
	// such lists are recomputed when next read, unless the booking's type
	// is known to need no room under the set-up the list was read under.
	for _, me := range s.memo.carriable(b.ClinicID, days, now) {
		if me.e.NeedsRoom && s.roomBound(b.AppointmentTypeID, me.ref.genVals[0]) {
			continue
		}
		ref := *me.ref
		ref.genVals = slices.Clone(ref.genVals)
		var named [][2]int64
		for i, k := range ref.genKeys {
			at, ok := index[k]
			if !ok {
				continue
			}
			before, _ := strconv.ParseInt(ref.genVals[i], 10, 64) // "" (no counter yet): 0
			named = append(named, [2]int64{at, before + 1})
			ref.genVals[i] = strconv.FormatInt(before+1, 10)
		}
		ref.key = listKey(ref.clinicID, ref.req, ref.server, ref.genVals)
		e := *me.e
		e.Slots = availability.ApplyHolds(e.Type, me.e.Slots, busy)
		ttl := e.Expires.Sub(now)
		if ttl < time.Millisecond {
			continue
		}
		raw, err := e.encode()
		if err != nil {
			continue
		}
		out = append(out, carriedList{ref: &ref, e: &e, raw: raw, ttl: ttl, named: named})
	}
	return out
}
