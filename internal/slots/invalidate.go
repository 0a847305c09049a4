package slots

// Keeping the cache in step with changes: set-up changes retire a
// clinic's lists, booking changes bump the counters of the days they touch
// and carry this instance's lists over a new booking.

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
)

// Retire forgets the lists this instance keeps decoded in memory. Called
// when the PostgreSQL server changed (a failover): the lists in Redis are
// retired by the server's name in their keys (see Options.Server).
func (s *Service) Retire() {
	s.memo.clear()
}

// Invalidate bumps a clinic's set-up generation, retiring every cached list
// of the clinic, and forgets the clinic's zone on this instance (others
// read it again within zoneMemory). Called after every committed change of
// hours, overrides, types, specialists or the clinic's zone.
func (s *Service) Invalidate(ctx context.Context, clinicID uuid.UUID) {
	s.zones.Delete(clinicID)
	if s.rdb == nil {
		return
	}
	if err := s.rdb.Incr(ctx, GenerationKey(clinicID)).Err(); err != nil {
		// The entry under the old generation lives at most the cache's TTL.
		s.logger.Warn("bump timeslot generation", "err", err)
	}
}

// invalidateBooking bumps the generations of the local dates a booking
// touches with its type's buffers (the clinic's set-up generation when the
// type cannot be found, which retires everything: never too little). It
// returns the day counters it moved, with their new values, and the
// booking's type (nil when it retired everything or could not tell). With
// mark, the booking's minutes are set in the bitmap in the same round
// trip, ahead of the counters.
func (s *Service) invalidateBooking(ctx context.Context, loc *time.Location, b booking.Booking, mark bool) (map[string]int64, availability.AppointmentType) {
	if s.rdb == nil {
		if mark {
			s.Bitmap.Mark(ctx, loc, b.SpecialistID, b.Start, b.End)
		}
		return nil, availability.AppointmentType{}
	}
	pipe := s.rdb.Pipeline()
	var marks []*redis.Cmd
	if mark {
		marks = s.Bitmap.queueMark(ctx, pipe, loc, b.SpecialistID, b.Start, b.End)
	}
	row, err := s.StoredType(ctx, b.AppointmentTypeID)
	if err != nil {
		s.logger.Warn("booking's type for the cache; retiring the clinic's lists", "err", err)
		s.Bitmap.exec(ctx, pipe, marks)
		s.Invalidate(ctx, b.ClinicID)
		return nil, availability.AppointmentType{}
	}
	t := TypeOf(row)
	from := availability.DateOf(b.Start.Add(-t.BufferBefore), loc)
	to := availability.DateOf(b.End.Add(t.BufferAfter-time.Nanosecond), loc)
	var days []string
	for d := from; !to.Before(d); d = d.AddDays(1) {
		days = append(days, dayGenerationKey(b.ClinicID, d))
	}
	bump := bumpScript.EvalSha(ctx, pipe, days, int64(dayGenerationTTL/time.Second))
	s.Bitmap.exec(ctx, pipe, marks)
	if bump.Err() != nil && redis.HasErrorPrefix(bump.Err(), "NOSCRIPT") {
		bump = bumpScript.Run(ctx, s.rdb, days, int64(dayGenerationTTL/time.Second))
	}
	vals, err := bump.Int64Slice()
	if err != nil || len(vals) != len(days) {
		// The entries under the old generations live at most the cache's TTL.
		s.logger.Warn("bump timeslot day generations", "err", err)
		return nil, t
	}
	bumped := make(map[string]int64, len(days))
	texts := make([]string, len(days))
	for i, k := range days {
		bumped[k] = vals[i]
		texts[i] = strconv.FormatInt(vals[i], 10)
	}
	s.memo.saw(days, texts)
	return bumped, t
}

// patchAfterBooking carries the lists this instance holds over a new
// booking instead of letting the next read recompute them: a booking is
// one more busy interval, which takes its specialist out of the slots it
// blocks exactly as a hold does (availability.ApplyHolds, whose invariant
// the engine's tests check). A patched list is stored under the name the
// bumped counters give it and keeps its computation's expiry. Only lists
// read at the counters just before this booking's are patched, so none
// can miss a booking; any other list is recomputed when next read, as
// before.
func (s *Service) patchAfterBooking(ctx context.Context, b booking.Booking, bt availability.AppointmentType, bumped map[string]int64) {
	busy := []availability.Busy{{SpecialistID: b.SpecialistID, Start: b.Start, End: b.End,
		BufferBefore: bt.BufferBefore, BufferAfter: bt.BufferAfter}}
	now := s.now()
	// The patched lists are written with one script call per type (a
	// type's lists share its hash tag): one command however many lists
	// this instance holds for the clinic.
	byType := map[uuid.UUID]*storeCall{}
	// A list of a type that needs a room also loses the slots whose last
	// free room the booking took, which a busy specialist does not say:
	// such lists are recomputed when next read, unless the booking's type
	// is known to need no room.
	roomy := s.roomBound(b.AppointmentTypeID)
	for _, me := range s.memo.following(b.ClinicID, bumped, now) {
		if roomy && me.e.NeedsRoom {
			continue
		}
		ref := *me.ref
		ref.genVals = slices.Clone(ref.genVals)
		for i, k := range ref.genKeys {
			if n, ok := bumped[k]; ok {
				ref.genVals[i] = strconv.FormatInt(n, 10)
			}
		}
		ref.key = listKey(ref.req, ref.server, ref.genVals)
		e := *me.e
		e.Slots = availability.ApplyHolds(e.Type, me.e.Slots, busy)
		s.memo.put(&ref, &e, now, s.ttl)
		call := byType[ref.req.AppointmentTypeID]
		if call == nil {
			call = &storeCall{}
			byType[ref.req.AppointmentTypeID] = call
		}
		call.add(ref.key, &e, now)
	}
	if len(byType) == 0 {
		return
	}
	pipe := s.rdb.Pipeline()
	var calls []*storeCall
	var cmds []*redis.Cmd
	for _, c := range byType {
		if len(c.keys) > 0 {
			calls = append(calls, c)
			cmds = append(cmds, storeScript.EvalSha(ctx, pipe, c.keys, c.args...))
		}
	}
	if len(cmds) == 0 {
		return
	}
	_, _ = pipe.Exec(ctx) // each command's error is its own
	for i, c := range cmds {
		err := c.Err()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// Redis forgot the script (a restart): load it with this call.
			err = storeScript.Run(ctx, s.rdb, calls[i].keys, calls[i].args...).Err()
		}
		if err != nil {
			s.logger.Warn("timeslot cache write", "err", err)
		}
	}
}

// storeCall is one type's patched lists, as storeScript takes them.
type storeCall struct {
	keys []string
	args []any // per key: the encoded list and its TTL in milliseconds
}

func (c *storeCall) add(key string, e *entry, now time.Time) {
	ttl := e.Expires.Sub(now)
	if ttl < time.Millisecond {
		return
	}
	if raw, err := e.encode(); err == nil {
		c.keys = append(c.keys, key)
		c.args = append(c.args, raw, ttl.Milliseconds())
	}
}

// storeScript sets each KEYS[i] to ARGV[2i-1] for ARGV[2i-1] ms.
var storeScript = redis.NewScript(`
for i, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[2 * i - 1], 'PX', ARGV[2 * i])
end
return #KEYS
`)

// bumpScript moves each day counter KEYS[i] on by one and lets it live
// ARGV[1] seconds from now; it returns the new values in KEYS' order.
var bumpScript = redis.NewScript(`
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = redis.call('INCR', key)
  redis.call('EXPIRE', key, ARGV[1])
end
return out
`)

// dayGenerationTTL: a day's counter is dropped a while after its last
// booking change. A list cached under the counter it had is at most the
// cache TTL old, far less, so a counter reset cannot resurrect it.
const dayGenerationTTL = 7 * 24 * time.Hour

// OnBookingChange keeps the cache and the bitmap in step with a committed
// booking change; main wires it with booking.Service.Observe.
func (s *Service) OnBookingChange(ctx context.Context, ch booking.Change) {
	b := ch.Booking
	loc, err := s.Zone(ctx, b.ClinicID)
	if err != nil {
		s.logger.Warn("booking change: clinic zone; retiring the clinic's lists", "err", err)
		s.Invalidate(ctx, b.ClinicID)
		return
	}
	if p := ch.Previous; p != nil {
		s.invalidateBooking(ctx, loc, *p, false)
		s.Bitmap.Clear(ctx, loc, p.SpecialistID, p.Start, p.End)
	}
	if ch.Kind == booking.ChangeCancel {
		s.invalidateBooking(ctx, loc, b, false)
		s.Bitmap.Clear(ctx, loc, b.SpecialistID, b.Start, b.End)
		return
	}
	// The bitmap is marked in the round trip that moves the counters (ahead
	// of them on one Redis; on a cluster the two may run side by side), so
	// before any carried list leaves the slot out: a patient still asking
	// for it is told "taken" by the bitmap, without a database round trip.
	bumped, bt := s.invalidateBooking(ctx, loc, b, true)
	if ch.Kind == booking.ChangeConfirm && ch.Previous == nil && bumped != nil {
		s.patchAfterBooking(ctx, b, bt, bumped)
	}
}
