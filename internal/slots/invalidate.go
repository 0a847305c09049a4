package slots

// Keeping the cache in step with changes: set-up changes retire a
// clinic's lists, booking changes bump the counters of the days they touch
// and carry this instance's lists over a new booking.

import (
	"context"
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
// type cannot be found, which retires everything: never too little): the
// lists that could show the booking's time as it was are not read again.
func (s *Service) invalidateBooking(ctx context.Context, loc *time.Location, b booking.Booking) {
	if s.rdb == nil {
		return
	}
	days, _, ok := s.bookingDays(ctx, loc, b)
	if !ok {
		return
	}
	vals, err := bumpScript.Run(ctx, s.rdb, days, int64(dayGenerationTTL/time.Second)).Int64Slice()
	if err != nil || len(vals) != len(days) {
		// The entries under the old generations live at most the cache's TTL.
		s.logger.Warn("bump timeslot day generations", "err", err)
		return
	}
	texts := make([]string, len(days))
	for i, n := range vals {
		texts[i] = strconv.FormatInt(n, 10)
	}
	s.memo.saw(days, texts)
}

// bookingDays names the day counters of the local dates b touches with
// its type's buffers, and returns the type. When the type cannot be read
// it retires the clinic's lists instead and answers false.
func (s *Service) bookingDays(ctx context.Context, loc *time.Location, b booking.Booking) ([]string, availability.AppointmentType, bool) {
	row, err := s.StoredType(ctx, b.AppointmentTypeID)
	if err != nil {
		s.logger.Warn("booking's type for the cache; retiring the clinic's lists", "err", err)
		s.Invalidate(ctx, b.ClinicID)
		return nil, availability.AppointmentType{}, false
	}
	t := TypeOf(row)
	from := availability.DateOf(b.Start.Add(-t.BufferBefore), loc)
	to := availability.DateOf(b.End.Add(t.BufferAfter-time.Nanosecond), loc)
	var days []string
	for d := from; !to.Before(d); d = d.AddDays(1) {
		days = append(days, dayGenerationKey(b.ClinicID, d))
	}
	return days, t, true
}

// storeCall is lists to store, as storeScript takes them.
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
	_ = s.OnBookingChangeThen(ctx, ch, nil)
}

// OnBookingChangeThen is OnBookingChange with then, another package's
// step in Redis, queued after this package's script for a new booking
// and sent with it in one round trip (Redis runs the script first).
// sent reports whether then was sent: if not (another change, no script
// to send), the caller sends it after this returns. then may be nil.
func (s *Service) OnBookingChangeThen(ctx context.Context, ch booking.Change, then Then) (sent bool) {
	b := ch.Booking
	loc, err := s.Zone(ctx, b.ClinicID)
	if err != nil {
		s.logger.Warn("booking change: clinic zone; retiring the clinic's lists", "err", err)
		s.Invalidate(ctx, b.ClinicID)
		return false
	}
	if p := ch.Previous; p != nil {
		s.invalidateBooking(ctx, loc, *p)
		s.Bitmap.Clear(ctx, loc, p.ClinicID, p.SpecialistID, p.Start, p.End)
	}
	if ch.Kind == booking.ChangeCancel {
		s.invalidateBooking(ctx, loc, b)
		s.Bitmap.Clear(ctx, loc, b.ClinicID, b.SpecialistID, b.Start, b.End)
		return false
	}
	// The bitmap is marked in the step that moves the counters, so before
	// any carried list leaves the slot out: a patient still asking for it
	// is told "taken" by the bitmap, without a database round trip.
	return s.booked(ctx, loc, b, ch.Kind == booking.ChangeConfirm && ch.Previous == nil, then)
}
