// Package slots answers "which slots are free?" for the pages, the API and
// the booking path: it loads one appointment type's calendar from
// PostgreSQL (one query per kind of data for the whole range), runs the
// pure engine in internal/availability, caches the result in Redis under a
// generation that every change bumps, and overlays the live holds at read
// time so a hold never needs an invalidation.
package slots

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/clinics"
)

// MaxRangeDays is the longest range one request may ask for, both ends included.
const MaxRangeDays = 62

// HoldSource lists the live holds on a clinic's specialists, of any type.
// The holds package implements it; nil means "no holds".
type HoldSource interface {
	ActiveHolds(ctx context.Context, clinicID uuid.UUID) ([]availability.Busy, error)
}

// Service computes free slots.
type Service struct {
	pool       *pgxpool.Pool
	rdb        redis.UniversalClient
	ttl        time.Duration
	noCache    bool
	holds      HoldSource
	logger     *slog.Logger
	now        func() time.Time
	zones      sync.Map // clinic id -> zoneEntry
	typeClinic sync.Map // appointment type id -> clinic id
	typeRows   sync.Map // appointment type id -> typeRowAt
	skeletons  sync.Map // appointment type id -> *skeleton
	memo       memo
	server     func() string
	flight     singleflight.Group
	Bitmap     *Bitmap
}

// Options for New.
type Options struct {
	// Holds are the live holds overlaid on every read (see NoHolds);
	// nil: none.
	Holds    HoldSource
	CacheTTL time.Duration // 0: 300 s
	NoCache  bool          // compute every request from PostgreSQL
	Logger   *slog.Logger
	Now      func() time.Time // default time.Now
	// Server names the PostgreSQL server the lists are computed from
	// (postgres.Failover.Server); every cached list carries it, so a
	// failover retires them all. nil: not named.
	Server func() string
}

func New(pool *pgxpool.Pool, rdb redis.UniversalClient, o Options) *Service {
	if o.CacheTTL <= 0 {
		o.CacheTTL = 300 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Server == nil {
		o.Server = func() string { return "" }
	}
	s := &Service{pool: pool, rdb: rdb, holds: o.Holds, ttl: o.CacheTTL, noCache: o.NoCache, logger: o.Logger, now: o.Now, server: o.Server}
	s.Bitmap = &Bitmap{pool: pool, rdb: rdb, logger: o.Logger}
	return s
}

// Request asks for the free slots of one type.
type Request struct {
	AppointmentTypeID uuid.UUID
	From, To          availability.Date // local to the clinic, both included
	SpecialistID      uuid.UUID         // uuid.Nil: any specialist (pooled)
	// NoCache skips the Redis cache (tests, and the booking path's exact check).
	NoCache bool
	// NoHolds leaves live holds out, for callers that handle them themselves.
	NoHolds bool
	// Ignore is a booking to treat as free (a reschedule's own); it implies NoCache.
	Ignore *Interval
	// NoBookings gives the grid of slot positions from hours alone: where
	// slots would be if nothing were booked (the pages' cells).
	NoBookings bool
}

// Result is the free slots in the clinic's zone.
type Result struct {
	Timezone string
	Location *time.Location
	ClinicID uuid.UUID
	Type     availability.AppointmentType
	// Stored is the type as the clinic keeps it, as of the same
	// generation as the slots.
	Stored clinics.Type
	Slots  []availability.Slot
	// Priority of each specialist who performs the type.
	Priority map[uuid.UUID]int
	// Generations are the cache counters the slots were read at (none
	// when they were computed without the cache).
	Generations Generations
	// NeedsRoom: the type needs a room or device; a booking of another
	// type may take a slot's last free room.
	NeedsRoom bool
}

// Free computes the free slots. A cache hit costs two Redis reads and no
// database query.
//
// Errors: NOT_FOUND (unknown type), INVALID_ARGUMENT naming from, to or
// specialistId.
func (s *Service) Free(ctx context.Context, req Request) (Result, error) {
	rs, err := s.FreeEach(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// FreeEach is Free for several requests of one appointment type (a page's
// grid and its free slots), read together: their generations in one Redis
// read, their cached lists in another, the live holds once.
//
// Errors: those of Free.
func (s *Service) FreeEach(ctx context.Context, reqs ...Request) ([]Result, error) {
	return s.FreeEachReading(ctx, nil, reqs...)
}

// CounterReader reads cache counters of a clinic (keys with its hash tag)
// as MGET reads them, "" for a missing key, and whatever else of the
// clinic's its caller wants in the same step.
type CounterReader func(ctx context.Context, clinicID uuid.UUID, keys []string) ([]string, error)

// FreeEachReading is FreeEach whose cache counters are read by read
// instead of an MGET of their own (nil read: MGET), so that a caller that
// needs more of the clinic's keys (its live holds) reads them in the
// same round trip. read is not called when nothing is read from the
// cache (the cache off, no request that can be cached), and its failure
// is a cache that cannot be read: the lists are computed afresh.
//
// Errors: those of Free.
func (s *Service) FreeEachReading(ctx context.Context, read CounterReader, reqs ...Request) ([]Result, error) {
	for _, req := range reqs {
		if req.To.Before(req.From) {
			return nil, apperr.Invalidf("to", "to (%s) is before from (%s).", req.To, req.From)
		}
		if n := availability.DaysBetween(req.From, req.To) + 1; n > MaxRangeDays {
			return nil, apperr.Invalidf("to", "The range is %d days; at most %d days can be asked for at once.", n, MaxRangeDays)
		}
	}
	now := s.now()
	refs, es, err := s.lookup(ctx, read, reqs, now)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(reqs))
	var holds []availability.Busy
	holdsRead := false
	// The lists computed here are stored together, after the loop.
	var fresh storeCall
	defer func() { s.storeAll(context.WithoutCancel(ctx), &fresh) }()
	for i, req := range reqs {
		e := es[i]
		if e == nil {
			if refs[i] == nil {
				e, err = s.compute(ctx, req, now, nil, nil)
			} else {
				// One computation per key at a time: a rush on one day (a hot
				// slot's patients, a generation bump under load) costs one set
				// of queries, not one per request.
				ref := refs[i]
				var v any
				v, err, _ = s.flight.Do(ref.key, func() (any, error) {
					return s.compute(context.WithoutCancel(ctx), req, now, ref, &fresh)
				})
				e, _ = v.(*entry)
			}
			if err != nil {
				return nil, err
			}
		}
		loc, err := loadZone(e.Zone)
		if err != nil {
			return nil, fmt.Errorf("clinic zone %q: %w", e.Zone, err)
		}
		slots := trim(e.Slots, now, e.Type)
		if s.holds != nil && !req.NoHolds {
			if !holdsRead {
				holdsRead = true
				if holds, err = s.holds.ActiveHolds(ctx, e.ClinicID); err != nil {
					// Without Redis there are no holds to show; the booking path still
					// refuses a held slot, because its claim fails closed.
					s.logger.Warn("list holds for slots", "err", err)
					holds = nil
				}
			}
			if len(holds) > 0 {
				slots = availability.ApplyHolds(e.Type, slots, holds)
			}
		}
		out[i] = Result{Timezone: e.Zone, Location: loc, ClinicID: e.ClinicID, Type: e.Type, Stored: clinics.TypeFromRow(e.Row), Slots: slots, Priority: e.Priority, NeedsRoom: e.NeedsRoom}
		if ref := refs[i]; ref != nil {
			out[i].Generations = Generations{Keys: ref.genKeys, Values: ref.genVals, server: ref.server}
		}
	}
	return out, nil
}

// lookup names the cached list of each request that may be cached (nil
// ref: computed afresh) and finds the lists in the memo or Redis (nil
// entry: not cached).
func (s *Service) lookup(ctx context.Context, read CounterReader, reqs []Request, now time.Time) ([]*cacheRef, []*entry, error) {
	refs := make([]*cacheRef, len(reqs))
	es := make([]*entry, len(reqs))
	if s.noCache || s.rdb == nil {
		return refs, es, nil
	}
	var ask []int
	for i, req := range reqs {
		if !req.NoCache && req.Ignore == nil {
			ask = append(ask, i)
		}
	}
	if len(ask) == 0 {
		return refs, es, nil
	}
	clinicID, err := s.ClinicOfType(ctx, reqs[ask[0]].AppointmentTypeID)
	if err != nil {
		return nil, nil, err
	}
	for _, i := range ask[1:] {
		if reqs[i].AppointmentTypeID != reqs[ask[0]].AppointmentTypeID {
			return nil, nil, fmt.Errorf("slots: FreeEach of more than one type")
		}
	}
	asked := make([]Request, len(ask))
	for j, i := range ask {
		asked[j] = reqs[i]
	}
	named, along := s.cacheKeys(ctx, read, clinicID, asked, now)
	var missing []string
	for j, i := range ask {
		if refs[i] = named[j]; refs[i] == nil {
			continue
		}
		if es[i] = s.memo.get(refs[i].key, now); es[i] != nil {
			continue
		}
		if e, read := along[refs[i].key]; read {
			if es[i] = e; e != nil {
				s.memo.put(refs[i], e, now, s.ttl)
			}
			continue
		}
		missing = append(missing, refs[i].key)
	}
	if len(missing) == 0 {
		return refs, es, nil
	}
	found := s.cached(ctx, missing)
	for _, i := range ask {
		if refs[i] != nil && es[i] == nil {
			if e := found[refs[i].key]; e != nil {
				es[i] = e
				s.memo.put(refs[i], e, now, s.ttl)
			}
		}
	}
	return refs, es, nil
}

// compute reads the calendar from PostgreSQL and runs the engine; with a
// ref, it keeps the result in the memo and adds it to the lists to store
// in Redis (batch) when its slots touch only the days [ref.first,
// ref.last] the key's generations cover.
func (s *Service) compute(ctx context.Context, req Request, now time.Time, ref *cacheRef, batch *storeCall) (*entry, error) {
	setup := ""
	if ref != nil {
		setup = cmp.Or(ref.genVals[0], "0") // the clinic's set-up generation
	}
	cal, err := s.load(ctx, req, setup)
	if err != nil {
		return nil, err
	}
	if !req.NoBookings {
		if err := s.loadBusy(ctx, cal, req.Ignore); err != nil {
			return nil, err
		}
	}
	// Cached lists are computed with the window stretched by the cache's
	// lifetime and trimmed on every read, so a slot that comes into the
	// window while the entry lives is not missing.
	q := cal.q
	q.Now = now
	if q.Type.MaxAdvance > 0 {
		q.Type.MaxAdvance += s.ttl
	}
	e := &entry{entryMeta: entryMeta{Zone: cal.zoneName, ClinicID: cal.clinicID, Type: cal.q.Type, Row: cal.typeRow,
		Priority: make(map[uuid.UUID]int, len(q.Specialists)), Expires: now.Add(s.ttl), NeedsRoom: q.NeedsResource}, Slots: availability.Compute(q)}
	for _, sp := range q.Specialists {
		e.Priority[sp.ID] = sp.Priority
	}
	e.withMeta()
	s.typeRows.Store(cal.typeRow.ID, typeRowAt{row: clinics.TypeFromRow(cal.typeRow), at: now})
	if ref != nil && (req.NoBookings || covered(e.Slots, e.Type, cal.q.Zone, ref.first, ref.last)) {
		batch.add(ref.key, e, now)
		s.memo.put(ref, e, now, s.ttl)
	}
	return e, nil
}

// Interval is a specialist's booked time.
type Interval struct {
	SpecialistID uuid.UUID
	Start, End   time.Time
}
