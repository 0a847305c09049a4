package slots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/db"
)

// Bitmap is the availability bitmap: per specialist
// and local date, one bit per minute from the day's first instant, 1 where
// a confirmed booking is. It is a fast path only: it can say "surely taken"
// (no database round trip for a hot slot's losers) or "ask the database",
// never "surely free"; the database's constraints decide.
type Bitmap struct {
	pool   *pgxpool.Pool
	rdb    redis.UniversalClient
	logger *slog.Logger
	flight singleflight.Group // one rebuild per day's bitmap at a time
}

// BitmapTTL bounds how long a day's bitmap lives; a missing one is rebuilt.
const BitmapTTL = 6 * time.Hour

// A day's bitmap and its epoch carry the clinic's hash tag, as its cache
// generations and lists do: on Redis Cluster one script marks a new
// booking's minutes and moves the counters of its days in one step.
func bitmapKey(clinicID, specialistID uuid.UUID, d availability.Date) string {
	return fmt.Sprintf("availability:{%s}:%s:%s", clinicID, specialistID, d)
}

// The epoch changes whenever bits are cleared, so a rebuild that read the
// database before a cancel cannot write the cancelled booking back.
func epochKey(clinicID, specialistID uuid.UUID, d availability.Date) string {
	return fmt.Sprintf("availability:epoch:{%s}:%s:%s", clinicID, specialistID, d)
}

// segment is the part of [start, end) that falls on one local date, in
// minutes from that date's first instant.
type segment struct {
	date     availability.Date
	from, to int64 // bit indexes, to exclusive
}

func segments(loc *time.Location, start, end time.Time) []segment {
	var out []segment
	for t := start; t.Before(end); {
		d := availability.DateOf(t, loc)
		dayStart := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
		next := d.AddDays(1)
		dayEnd := time.Date(next.Year, next.Month, next.Day, 0, 0, 0, 0, loc)
		segEnd := end
		if dayEnd.Before(segEnd) {
			segEnd = dayEnd
		}
		from := int64(t.Sub(dayStart) / time.Minute)
		to := int64((segEnd.Sub(dayStart) + time.Minute - 1) / time.Minute)
		if from < 0 {
			from = 0
		}
		if to > from {
			out = append(out, segment{date: d, from: from, to: to})
		}
		if !dayEnd.After(t) { // a zone whose midnight does not move time on; never loop
			break
		}
		t = dayEnd
	}
	return out
}

// takenScript: -1 when the day's bitmap is missing (unknown), else the
// number of taken minutes in [from, to].
var takenScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('BITCOUNT', KEYS[1], ARGV[1], ARGV[2], 'BIT')
`)

// markScript sets the bits of a new booking, only in a bitmap that exists:
// a missing one is rebuilt whole from the database when next needed.
var markScript = redis.NewScript(setRange + markExisting + `
markExisting(KEYS[1], ARGV[1], ARGV[2])
return 1
`)

// markExisting is shared Lua: markScript's step, which the script that
// follows a booking (bookedScript) takes too.
const markExisting = `
local function markExisting(key, from, to)
  if redis.call('EXISTS', key) == 1 then
    setRange(key, tonumber(from), tonumber(to))
  end
end
`

// setRange sets bits from..to (inclusive) to 1 with one BITFIELD write per
// 48 bits (exact in Lua's doubles) instead of a SETBIT per minute.
const setRange = `
local function setRange(key, from, to)
  local b = from
  while b <= to do
    local n = math.min(to - b + 1, 48)
    redis.call('BITFIELD', key, 'SET', 'u' .. n, b, string.format('%.0f', 2 ^ n - 1))
    b = b + n
  end
end
`

// rebuildScript writes a day's bitmap from the database's bookings, unless
// bits were cleared since the database was read (the epoch moved) or
// someone else rebuilt it first. ARGV: epoch, ttl ms, then from/to pairs.
var rebuildScript = redis.NewScript(setRange + `
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SETBIT', KEYS[1], 1500, 0)
for i = 3, #ARGV, 2 do
  setRange(KEYS[1], tonumber(ARGV[i]), tonumber(ARGV[i + 1]))
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// clearScript forgets a day's bitmap and moves its epoch.
var clearScript = redis.NewScript(`
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[1])
return 1
`)

// Taken reports whether [start, end) surely overlaps a confirmed booking of
// the specialist. known is false when the bitmap could not answer (missing
// and not rebuildable, or Redis down): then ask the database.
func (b *Bitmap) Taken(ctx context.Context, loc *time.Location, clinicID, specialistID uuid.UUID, start, end time.Time) (taken, known bool) {
	if b.rdb == nil {
		return false, false
	}
	for _, sg := range segments(loc, start, end) {
		n, err := b.count(ctx, clinicID, specialistID, sg)
		if errors.Is(err, errMissing) {
			_, rerr, _ := b.flight.Do(bitmapKey(clinicID, specialistID, sg.date), func() (any, error) {
				return nil, b.rebuild(context.WithoutCancel(ctx), loc, clinicID, specialistID, sg.date)
			})
			if rerr != nil {
				b.logger.Warn("rebuild availability bitmap", "err", rerr)
				return false, false
			}
			n, err = b.count(ctx, clinicID, specialistID, sg)
		}
		if err != nil {
			return false, false
		}
		if n > 0 {
			return true, true
		}
	}
	return false, true
}

var errMissing = errors.New("bitmap missing")

func (b *Bitmap) count(ctx context.Context, clinicID, specialistID uuid.UUID, sg segment) (int64, error) {
	n, err := takenScript.Run(ctx, b.rdb, []string{bitmapKey(clinicID, specialistID, sg.date)}, sg.from, sg.to-1).Int64()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, errMissing
	}
	return n, nil
}

func (b *Bitmap) rebuild(ctx context.Context, loc *time.Location, clinicID, specialistID uuid.UUID, d availability.Date) error {
	keys := []string{bitmapKey(clinicID, specialistID, d), epochKey(clinicID, specialistID, d)}
	epoch, err := b.rdb.Get(ctx, keys[1]).Result()
	if errors.Is(err, redis.Nil) {
		epoch, err = "0", nil
	}
	if err != nil {
		return err
	}
	dayStart := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
	next := d.AddDays(1)
	dayEnd := time.Date(next.Year, next.Month, next.Day, 0, 0, 0, 0, loc)
	rows, err := db.New(b.pool).BookingListConfirmedBySpecialistRange(ctx, db.BookingListConfirmedBySpecialistRangeParams{
		SpecialistID: specialistID, RangeStart: dayStart, RangeEnd: dayEnd,
	})
	if err != nil {
		return fmt.Errorf("load bookings for bitmap: %w", err)
	}
	args := []any{epoch, BitmapTTL.Milliseconds()}
	for _, r := range rows {
		for _, sg := range segments(loc, r.SlotStart, r.SlotEnd) {
			if sg.date == d {
				args = append(args, sg.from, sg.to-1)
			}
		}
	}
	return rebuildScript.Run(ctx, b.rdb, keys, args...).Err()
}

// Mark sets a new booking's minutes, after its commit. (A booking's
// observer marks them in the step that moves its days' counters; see
// Service.booked.)
func (b *Bitmap) Mark(ctx context.Context, loc *time.Location, clinicID, specialistID uuid.UUID, start, end time.Time) {
	if b.rdb == nil {
		return
	}
	for _, sg := range segments(loc, start, end) {
		if err := markScript.Run(ctx, b.rdb, []string{bitmapKey(clinicID, specialistID, sg.date)}, sg.from, sg.to-1).Err(); err != nil {
			b.logger.Warn("mark availability bitmap", "err", err)
		}
	}
}

// Clear forgets the bitmaps a cancelled booking was on, after its commit;
// they are rebuilt from the database when next needed.
func (b *Bitmap) Clear(ctx context.Context, loc *time.Location, clinicID, specialistID uuid.UUID, start, end time.Time) {
	if b.rdb == nil {
		return
	}
	for _, sg := range segments(loc, start, end) {
		keys := []string{bitmapKey(clinicID, specialistID, sg.date), epochKey(clinicID, specialistID, sg.date)}
		if err := clearScript.Run(ctx, b.rdb, keys, (2 * BitmapTTL).Milliseconds()).Err(); err != nil {
			// The bitmap may now say "taken" for a free slot until it expires;
			// log loudly, since patients would be refused a free slot.
			b.logger.Error("clear availability bitmap", "err", err)
		}
	}
}
