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
	row, err := s.TypeRow(ctx, b.AppointmentTypeID)
	if err != nil {
		s.logger.Warn("booking's type for the cache; retiring the clinic's lists", "err", err)
		s.Bitmap.exec(ctx, pipe, marks)
		s.Invalidate(ctx, b.ClinicID)
		return nil, availability.AppointmentType{}
	}
	t := TypeOf(row)
	from := availability.DateOf(b.Start.Add(-t.BufferBefore), loc)
	to := availability.DateOf(b.End.Add(t.BufferAfter-time.Nanosecond), loc)
	incrs := map[string]*redis.IntCmd{}
	for d := from; !to.Before(d); d = d.AddDays(1) {
		k := dayGenerationKey(b.ClinicID, d)
		incrs[k] = pipe.Incr(ctx, k)
		pipe.Expire(ctx, k, dayGenerationTTL)
	}
	s.Bitmap.exec(ctx, pipe, marks)
	bumped := make(map[string]int64, len(incrs))
	for k, c := range incrs {
		if err := c.Err(); err != nil {
			// The entries under the old generations live at most the cache's TTL.
			s.logger.Warn("bump timeslot day generations", "err", err)
			return nil, t
		}
		bumped[k] = c.Val()
	}
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
	// Every patched list is written in one pipeline: one round trip however
	// many lists this instance holds for the clinic.
	pipe := s.rdb.Pipeline()
	for _, me := range s.memo.following(b.ClinicID, bumped, now) {
		ref := *me.ref
		ref.genVals = slices.Clone(ref.genVals)
		for i, k := range ref.genKeys {
			if n, ok := bumped[k]; ok {
				ref.genVals[i] = strconv.FormatInt(n, 10)
			}
		}
		ref.key = listKey(ref.req, ref.genVals)
		e := *me.e
		e.Slots = availability.ApplyHolds(e.Type, me.e.Slots, busy)
		s.memo.put(&ref, &e, now, s.ttl)
		queueStore(ctx, pipe, ref.key, &e, now)
	}
	if pipe.Len() == 0 {
		return
	}
	if _, err := pipe.Exec(ctx); err != nil {
		s.logger.Warn("timeslot cache write", "err", err)
	}
}

// queueStore is store's write, queued on a pipeline.
func queueStore(ctx context.Context, pipe redis.Pipeliner, key string, e *entry, now time.Time) {
	ttl := e.Expires.Sub(now)
	if ttl < time.Millisecond {
		return
	}
	if raw, err := e.encode(); err == nil {
		pipe.Set(ctx, key, raw, ttl)
	}
}

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
	if ch.Kind == "cancel" {
		s.invalidateBooking(ctx, loc, b, false)
		s.Bitmap.Clear(ctx, loc, b.SpecialistID, b.Start, b.End)
		return
	}
	// The bitmap is marked in the round trip that moves the counters (ahead
	// of them on one Redis; on a cluster the two may run side by side), so
	// before any carried list leaves the slot out: a patient still asking
	// for it is told "taken" by the bitmap, without a database round trip.
	bumped, bt := s.invalidateBooking(ctx, loc, b, true)
	if ch.Kind == "confirm" && ch.Previous == nil && bumped != nil {
		s.patchAfterBooking(ctx, b, bt, bumped)
	}
}
