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
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
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
	zones      sync.Map // clinic id -> *time.Location
	typeClinic sync.Map // appointment type id -> clinic id
	typeRows   sync.Map // appointment type id -> typeRowAt
	skeletons  sync.Map // appointment type id -> *skeleton
	memo       memo
	flight     singleflight.Group
	Bitmap     *Bitmap
}

// Options for New.
type Options struct {
	CacheTTL time.Duration // 0: 300 s
	NoCache  bool          // compute every request from PostgreSQL
	Logger   *slog.Logger
	Now      func() time.Time // default time.Now
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
	s := &Service{pool: pool, rdb: rdb, ttl: o.CacheTTL, noCache: o.NoCache, logger: o.Logger, now: o.Now}
	s.Bitmap = &Bitmap{pool: pool, rdb: rdb, logger: o.Logger}
	return s
}

// SetHoldSource wires the live holds in; call it while wiring, before serving.
func (s *Service) SetHoldSource(h HoldSource) { s.holds = h }

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
	// Row is the type as stored, as of the same generation as the slots.
	Row   db.AppointmentType
	Slots []availability.Slot
	// Priority of each specialist who performs the type.
	Priority map[uuid.UUID]int
}

// Free computes the free slots. A cache hit costs two Redis reads and no
// database query.
//
// Errors: NOT_FOUND (unknown type), INVALID_ARGUMENT naming from, to or
// specialistId.
func (s *Service) Free(ctx context.Context, req Request) (Result, error) {
	if req.To.Before(req.From) {
		return Result{}, apperr.Invalidf("to", "to (%s) is before from (%s).", req.To, req.From)
	}
	if n := availability.DaysBetween(req.From, req.To) + 1; n > MaxRangeDays {
		return Result{}, apperr.Invalidf("to", "The range is %d days; at most %d days can be asked for at once.", n, MaxRangeDays)
	}
	now := s.now()
	var ref *cacheRef
	var e *entry
	if !req.NoCache && req.Ignore == nil && !s.noCache && s.rdb != nil {
		clinicID, err := s.ClinicOfType(ctx, req.AppointmentTypeID)
		if err != nil {
			return Result{}, err
		}
		if ref = s.cacheKey(ctx, clinicID, req); ref != nil {
			if e = s.memo.get(ref.key, now); e == nil {
				if e = s.cached(ctx, ref.key); e != nil {
					s.memo.put(ref, e, now, s.ttl)
				}
			}
		}
	}
	if e == nil {
		var err error
		if ref == nil {
			e, err = s.compute(ctx, req, now, nil)
		} else {
			// One computation per key at a time: a rush on one day (a hot
			// slot's patients, a generation bump under load) costs one set
			// of queries, not one per request.
			var v any
			v, err, _ = s.flight.Do(ref.key, func() (any, error) {
				return s.compute(context.WithoutCancel(ctx), req, now, ref)
			})
			e, _ = v.(*entry)
		}
		if err != nil {
			return Result{}, err
		}
	}
	loc, err := loadZone(e.Zone)
	if err != nil {
		return Result{}, fmt.Errorf("clinic zone %q: %w", e.Zone, err)
	}
	slots := trim(e.Slots, now, e.Type)
	if s.holds != nil && !req.NoHolds {
		holds, err := s.holds.ActiveHolds(ctx, e.ClinicID)
		if err != nil {
			// Without Redis there are no holds to show; the booking path still
			// refuses a held slot, because its claim fails closed.
			s.logger.Warn("list holds for slots", "err", err)
		} else if len(holds) > 0 {
			slots = availability.ApplyHolds(e.Type, slots, holds)
		}
	}
	return Result{Timezone: e.Zone, Location: loc, ClinicID: e.ClinicID, Type: e.Type, Row: e.Row, Slots: slots, Priority: e.Priority}, nil
}

// compute reads the calendar from PostgreSQL and runs the engine; with a
// ref, it stores the result in Redis and the memo when its slots touch only
// the days [ref.first, ref.last] the key's generations cover.
func (s *Service) compute(ctx context.Context, req Request, now time.Time, ref *cacheRef) (*entry, error) {
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
		Priority: make(map[uuid.UUID]int, len(q.Specialists)), Expires: now.Add(s.ttl)}, Slots: availability.Compute(q)}
	for _, sp := range q.Specialists {
		e.Priority[sp.ID] = sp.Priority
	}
	e.withMeta()
	s.typeRows.Store(cal.typeRow.ID, typeRowAt{row: cal.typeRow, at: now})
	if ref != nil && (req.NoBookings || covered(e.Slots, e.Type, cal.q.Zone, ref.first, ref.last)) {
		s.store(ctx, ref.key, e, now)
		s.memo.put(ref, e, now, s.ttl)
	}
	return e, nil
}

// ClinicOfType maps a type to its clinic, which never changes, from memory.
//
// Errors: NOT_FOUND naming "id".
func (s *Service) ClinicOfType(ctx context.Context, typeID uuid.UUID) (uuid.UUID, error) {
	if id, ok := s.typeClinic.Load(typeID); ok {
		return id.(uuid.UUID), nil
	}
	t, err := db.New(s.pool).AppointmentTypeGet(ctx, typeID)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, apperr.NotFoundf("id", "No such appointment type.")
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("load appointment type: %w", err)
	}
	s.typeClinic.Store(typeID, t.ClinicID)
	return t.ClinicID, nil
}

type typeRowAt struct {
	row db.AppointmentType
	at  time.Time
}

// typeRowMaxAge bounds how old a remembered type row may be for TypeRow.
const typeRowMaxAge = 10 * time.Second

// TypeRow is a type's row from memory when it was read in the last few
// seconds (every computation refreshes it), else from PostgreSQL. Only for
// what tolerates a few seconds of staleness: which days' generations a
// cache key reads and a booking bumps (covered catches a list computed
// with newer buffers), a cooldown's length.
func (s *Service) TypeRow(ctx context.Context, typeID uuid.UUID) (db.AppointmentType, error) {
	if v, ok := s.typeRows.Load(typeID); ok && s.now().Sub(v.(typeRowAt).at) < typeRowMaxAge {
		return v.(typeRowAt).row, nil
	}
	t, err := db.New(s.pool).AppointmentTypeGet(ctx, typeID)
	if err != nil {
		return db.AppointmentType{}, err
	}
	s.typeRows.Store(typeID, typeRowAt{row: t, at: s.now()})
	return t, nil
}

// trim applies the minimum notice and window to a list computed earlier.
func trim(slots []availability.Slot, now time.Time, t availability.AppointmentType) []availability.Slot {
	earliest := now.Add(t.MinNotice)
	out := make([]availability.Slot, 0, len(slots))
	for _, sl := range slots {
		if sl.Start.Before(earliest) {
			continue
		}
		if t.MaxAdvance > 0 && sl.Start.After(now.Add(t.MaxAdvance)) {
			continue
		}
		out = append(out, sl)
	}
	return out
}

// calendar is one type's data for one request.
type calendar struct {
	clinicID   uuid.UUID
	zoneName   string
	typeRow    db.AppointmentType
	q          availability.Query
	rangeStart time.Time
	rangeEnd   time.Time
}

// skeleton is the part of a type's calendar that only set-up changes
// alter: the type, its clinic's zone, its specialists and their weekly
// hours. It is kept in memory under the clinic's set-up generation, so a
// recomputation after a booking reads only overrides and bookings.
type skeleton struct {
	gen         string    // the set-up generation it was read under; "" never matches
	expires     time.Time // like the memo's entries: a Redis that lost its counters cannot make it live on
	row         db.AppointmentTypeGetWithClinicRow
	loc         *time.Location
	specialists []availability.Specialist // Weekly filled, Overrides empty
}

// loadSkeleton reads a skeleton: three queries.
func (s *Service) loadSkeleton(ctx context.Context, typeID uuid.UUID) (*skeleton, error) {
	q := db.New(s.pool)
	row, err := q.AppointmentTypeGetWithClinic(ctx, typeID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, apperr.NotFoundf("id", "No such appointment type.")
	}
	if err != nil {
		return nil, fmt.Errorf("load appointment type: %w", err)
	}
	loc, err := loadZone(row.Timezone)
	if err != nil {
		return nil, fmt.Errorf("clinic zone %q: %w", row.Timezone, err)
	}
	s.zones.Store(row.AppointmentType.ClinicID, loc)
	sk := &skeleton{row: row, loc: loc}
	specialists, err := q.SpecialistListByType(ctx, typeID)
	if err != nil {
		return nil, fmt.Errorf("load specialists: %w", err)
	}
	index := make(map[uuid.UUID]int, len(specialists))
	sk.specialists = make([]availability.Specialist, len(specialists))
	for i, sp := range specialists {
		sk.specialists[i] = availability.Specialist{ID: sp.ID, Priority: int(sp.Priority), Active: sp.Active}
		index[sp.ID] = i
	}
	hours, err := q.WeeklyHoursListByType(ctx, typeID)
	if err != nil {
		return nil, fmt.Errorf("load weekly hours: %w", err)
	}
	for _, h := range hours {
		if i, ok := index[h.SpecialistID]; ok {
			sk.specialists[i].Weekly = append(sk.specialists[i].Weekly, availability.WeeklyRange{
				Weekday: time.Weekday(h.Weekday),
				Range:   availability.Range{Start: int(h.StartMin), End: int(h.EndMin)},
			})
		}
	}
	return sk, nil
}

// skeletonOf is the type's skeleton from memory when it was read under
// gen, else from PostgreSQL (and remembered when gen is known).
func (s *Service) skeletonOf(ctx context.Context, typeID uuid.UUID, gen string) (*skeleton, error) {
	if gen != "" {
		if v, ok := s.skeletons.Load(typeID); ok && v.(*skeleton).gen == gen && s.now().Before(v.(*skeleton).expires) {
			return v.(*skeleton), nil
		}
	}
	sk, err := s.loadSkeleton(ctx, typeID)
	if err != nil {
		return nil, err
	}
	if gen != "" {
		sk.gen, sk.expires = gen, s.now().Add(s.ttl)
		s.skeletons.Store(typeID, sk)
	}
	return sk, nil
}

// load builds one request's calendar: the skeleton (see skeletonOf; gen is
// the clinic's set-up generation, "" when unknown) and the range's
// overrides.
func (s *Service) load(ctx context.Context, req Request, gen string) (*calendar, error) {
	sk, err := s.skeletonOf(ctx, req.AppointmentTypeID, gen)
	if err != nil {
		return nil, err
	}
	q := db.New(s.pool)
	row, loc := sk.row, sk.loc
	t := row.AppointmentType
	cal := &calendar{
		clinicID: t.ClinicID,
		zoneName: row.Timezone,
		typeRow:  t,
		q: availability.Query{
			Zone:         loc,
			Type:         TypeOf(t),
			From:         req.From,
			To:           req.To,
			SpecialistID: req.SpecialistID,
		},
	}
	// The skeleton is shared: copy the specialists (their weekly hours
	// are only read) so this request's overrides go on its own copy.
	cal.q.Specialists = slices.Clone(sk.specialists)
	byID := make(map[uuid.UUID]*availability.Specialist, len(cal.q.Specialists))
	for i := range cal.q.Specialists {
		byID[cal.q.Specialists[i].ID] = &cal.q.Specialists[i]
	}
	if req.SpecialistID != uuid.Nil {
		if _, ok := byID[req.SpecialistID]; !ok {
			return nil, apperr.Invalidf("specialistId", "That specialist does not perform %s.", t.Name)
		}
	}

	overrides, err := q.OverrideListByType(ctx, db.OverrideListByTypeParams{
		AppointmentTypeID: t.ID, FromDay: dateTime(req.From), ToDay: dateTime(req.To),
	})
	if err != nil {
		return nil, fmt.Errorf("load overrides: %w", err)
	}
	for _, o := range overrides {
		sp := byID[o.SpecialistID]
		if sp == nil {
			continue
		}
		d := availability.Date{Year: o.Day.Year(), Month: o.Day.Month(), Day: o.Day.Day()}
		n := len(sp.Overrides)
		if n == 0 || sp.Overrides[n-1].Date != d {
			sp.Overrides = append(sp.Overrides, availability.Override{Date: d})
			n++
		}
		ov := &sp.Overrides[n-1]
		if o.Closed {
			ov.Closed = true
		} else {
			ov.Ranges = append(ov.Ranges, availability.Range{Start: int(o.StartMin), End: int(o.EndMin)})
		}
	}

	// Bookings are read for the range with a day of margin on each side:
	// buffers and long appointments reach across midnight.
	cal.rangeStart = time.Date(req.From.Year, req.From.Month, req.From.Day, 0, 0, 0, 0, loc).AddDate(0, 0, -1)
	cal.rangeEnd = time.Date(req.To.Year, req.To.Month, req.To.Day, 0, 0, 0, 0, loc).AddDate(0, 0, 2)
	return cal, nil
}

// loadBusy reads the confirmed bookings, only when the cache missed.
func (s *Service) loadBusy(ctx context.Context, cal *calendar, ignore *Interval) error {
	rows, err := db.New(s.pool).BookingListConfirmedByType(ctx, db.BookingListConfirmedByTypeParams{
		AppointmentTypeID: cal.typeRow.ID, RangeStart: cal.rangeStart, RangeEnd: cal.rangeEnd,
	})
	if err != nil {
		return fmt.Errorf("load bookings: %w", err)
	}
	cal.q.Bookings = make([]availability.Busy, 0, len(rows))
	for _, r := range rows {
		if ignore != nil && r.SpecialistID == ignore.SpecialistID && r.SlotStart.Equal(ignore.Start) && r.SlotEnd.Equal(ignore.End) {
			continue
		}
		cal.q.Bookings = append(cal.q.Bookings, availability.Busy{
			SpecialistID: r.SpecialistID,
			Start:        r.SlotStart,
			End:          r.SlotEnd,
			BufferBefore: time.Duration(r.BufferBeforeMin) * time.Minute,
			BufferAfter:  time.Duration(r.BufferAfterMin) * time.Minute,
		})
	}
	return nil
}

// TypeOf is the engine's view of an appointment type row.
func TypeOf(t db.AppointmentType) availability.AppointmentType {
	return availability.AppointmentType{
		Duration:     time.Duration(t.DurationMin) * time.Minute,
		Step:         time.Duration(t.SlotStepMin) * time.Minute,
		BufferBefore: time.Duration(t.BufferBeforeMin) * time.Minute,
		BufferAfter:  time.Duration(t.BufferAfterMin) * time.Minute,
		MinNotice:    time.Duration(t.MinNoticeMin) * time.Minute,
		MaxAdvance:   time.Duration(t.MaxAdvanceDays) * 24 * time.Hour,
	}
}

func dateTime(d availability.Date) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

// Zone is a clinic's location, from memory once any request has loaded it.
func (s *Service) Zone(ctx context.Context, clinicID uuid.UUID) (*time.Location, error) {
	if loc, ok := s.zones.Load(clinicID); ok {
		return loc.(*time.Location), nil
	}
	name, err := db.New(s.pool).ClinicTimezone(ctx, clinicID)
	if err != nil {
		return nil, fmt.Errorf("clinic zone: %w", err)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	s.zones.Store(clinicID, loc)
	return loc, nil
}

// Window is the range of local dates a type can be booked in now: from
// yesterday (a client west of the clinic may still be on it) to the last
// day of the type's booking window.
//
// Errors: NOT_FOUND naming "id".
func (s *Service) Window(ctx context.Context, typeID uuid.UUID) (first, last availability.Date, err error) {
	clinicID, err := s.ClinicOfType(ctx, typeID)
	if err != nil {
		return first, last, err
	}
	loc, err := s.Zone(ctx, clinicID)
	if err != nil {
		return first, last, err
	}
	row, err := s.TypeRow(ctx, typeID)
	if err != nil {
		return first, last, fmt.Errorf("load appointment type: %w", err)
	}
	today := availability.DateOf(s.now(), loc)
	return today.AddDays(-1), today.AddDays(int(row.MaxAdvanceDays)), nil
}

// CheckRange refuses, before any slot is computed or cached, a range no
// patient can book in: backwards, longer than MaxRangeDays, or reaching
// outside the type's Window. Free itself accepts any range up to
// MaxRangeDays, for the staff calendar's past and far weeks.
//
// Errors: NOT_FOUND naming "id", INVALID_ARGUMENT naming from or to.
func (s *Service) CheckRange(ctx context.Context, typeID uuid.UUID, from, to availability.Date) error {
	if to.Before(from) {
		return apperr.Invalidf("to", "to (%s) is before from (%s).", to, from)
	}
	if n := availability.DaysBetween(from, to) + 1; n > MaxRangeDays {
		return apperr.Invalidf("to", "The range is %d days; at most %d days can be asked for at once.", n, MaxRangeDays)
	}
	first, last, err := s.Window(ctx, typeID)
	if err != nil {
		return err
	}
	if from.Before(first) {
		return apperr.Invalidf("from", "from (%s) is in the past; the earliest is %s.", from, first)
	}
	if last.Before(to) {
		return apperr.Invalidf("to", "to (%s) is past the booking window; the latest is %s.", to, last)
	}
	return nil
}

// --- the cache ---

// GenerationKey counts the changes of a clinic's set-up: hours, overrides,
// types, specialists. Every cached list carries it, so a bump retires them
// all at once; the old entries are never read again and expire on their
// own: no SCAN.
func GenerationKey(clinicID uuid.UUID) string { return "timeslots:gen:{" + clinicID.String() + "}" }

// dayGenerationKey counts the booking changes that touch one local date of
// a clinic (with the booking's buffers). A booking retires only the cached
// lists whose days it can reach, so under a booking rush the other days
// stay cached. It shares the clinic's hash tag: one MGET reads them all.
func dayGenerationKey(clinicID uuid.UUID, d availability.Date) string {
	return GenerationKey(clinicID) + ":" + d.String()
}

// keyDays are the local dates whose booking generations a cached list of
// [From, To] depends on: every date its slots can touch with the type's
// buffers, from the first instant of From less the buffer before to the
// end of To plus the buffer after (a slot lies within its day's working
// hours). A booking that blocks one of its slots overlaps that span, so it
// bumps one of these dates.
func (s *Service) keyDays(ctx context.Context, clinicID uuid.UUID, req Request) (first, last availability.Date, ok bool) {
	first, last = req.From.AddDays(-1), req.To.AddDays(1)
	loc, err := s.Zone(ctx, clinicID)
	if err != nil {
		return first, last, false
	}
	row, err := s.TypeRow(ctx, req.AppointmentTypeID)
	if err != nil {
		return first, last, false
	}
	t := TypeOf(row)
	after := req.To.AddDays(1)
	first = availability.DateOf(time.Date(req.From.Year, req.From.Month, req.From.Day, 0, 0, 0, 0, loc).Add(-t.BufferBefore), loc)
	last = availability.DateOf(time.Date(after.Year, after.Month, after.Day, 0, 0, 0, 0, loc).Add(t.BufferAfter-time.Nanosecond), loc)
	return first, last, true
}

// covered reports whether every slot, with the type's buffers, touches
// only dates in [first, last]: a list that reaches further (a zone whose
// clocks change at midnight, a type edited a moment ago) is not cached.
func covered(slots []availability.Slot, t availability.AppointmentType, loc *time.Location, first, last availability.Date) bool {
	for _, sl := range slots {
		if availability.DateOf(sl.Start.Add(-t.BufferBefore), loc).Before(first) ||
			last.Before(availability.DateOf(sl.End.Add(t.BufferAfter-time.Nanosecond), loc)) {
			return false
		}
	}
	return true
}

// cacheRef names a cached list, with what the name is made of: a booking
// that moves one of its generations by one can name the list that follows
// (see patchAfterBooking).
type cacheRef struct {
	key         string
	first, last availability.Date
	clinicID    uuid.UUID
	req         Request
	genKeys     []string // the clinic's set-up generation, then each key day's
	genVals     []string // as read; "" for a counter that does not exist
}

// cacheKey names a cached list: the type, who, kind and range, and a hash
// of the generations it depends on: the clinic's set-up, and for free
// slots the booking changes of each of its keyDays. One Redis round trip.
// It is nil when the list cannot be cached now.
func (s *Service) cacheKey(ctx context.Context, clinicID uuid.UUID, req Request) *cacheRef {
	keys := []string{GenerationKey(clinicID)}
	first, last, ok := s.keyDays(ctx, clinicID, req)
	if !ok {
		return nil
	}
	if !req.NoBookings {
		for d := first; !last.Before(d); d = d.AddDays(1) {
			keys = append(keys, dayGenerationKey(clinicID, d))
		}
	}
	gens, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		s.logger.Warn("timeslot cache unavailable", "err", err)
		return nil
	}
	vals := make([]string, len(gens))
	for i, g := range gens {
		vals[i], _ = g.(string)
	}
	ref := &cacheRef{first: first, last: last, clinicID: clinicID,
		req:     Request{AppointmentTypeID: req.AppointmentTypeID, From: req.From, To: req.To, SpecialistID: req.SpecialistID, NoBookings: req.NoBookings},
		genKeys: keys, genVals: vals}
	ref.key = listKey(ref.req, vals)
	return ref
}

// listKey is the Redis key of a list of req under generations vals.
func listKey(req Request, vals []string) string {
	h := fnv.New64a()
	for _, v := range vals {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	who := "pooled"
	if req.SpecialistID != uuid.Nil {
		who = req.SpecialistID.String()
	}
	kind := "free"
	if req.NoBookings {
		kind = "grid"
	}
	return fmt.Sprintf("timeslots:{%s}:%s:%s:%x:%s:%s", req.AppointmentTypeID, who, kind, h.Sum64(), req.From, req.To)
}

// entry is a cached computation: the slots without holds, and what a read
// needs to trim them and lay the holds over them.
type entry struct {
	entryMeta
	Slots slotList `json:"slots"`
	// meta is entryMeta as encode writes it, set when the entry is made
	// (computed or read back) and shared by the lists carried over from it.
	meta []byte
}

// entryMeta is what an entry says besides its slots: the same for a list
// and every list carried over from it.
type entryMeta struct {
	Zone     string                       `json:"zone"`
	ClinicID uuid.UUID                    `json:"clinic"`
	Type     availability.AppointmentType `json:"type"`
	Row      db.AppointmentType           `json:"row"`
	Priority map[uuid.UUID]int            `json:"priority"`
	// Expires is when the computation's window runs out (it was computed
	// for a window stretched by the cache's lifetime); a list patched
	// after a booking keeps the time of the computation it came from.
	Expires time.Time `json:"exp"`
}

// withMeta encodes the entry's meta once, before the entry is shared.
func (e *entry) withMeta() *entry {
	e.meta, _ = json.Marshal(e.entryMeta) // plain data: cannot fail
	return e
}

// encode is the entry as stored in Redis, a JSON object json.Unmarshal
// reads back. It is written by hand around the meta encoded once and the
// slots' own encoding: json.Marshal would encode the meta for every list a
// booking carries over and then re-read the slots' encoding to check it
// (8% of the server's CPU under booking load).
func (e *entry) encode() ([]byte, error) {
	meta := e.meta
	if meta == nil { // an entry made without withMeta
		meta, _ = json.Marshal(e.entryMeta)
	}
	slots, err := e.Slots.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(slots)+len(meta)+16)
	b = append(b, `{"slots":`...)
	b = append(b, slots...)
	b = append(b, ',')
	return append(b, meta[1:]...), nil // meta's fields and its closing brace
}

// slotList is a cached entry's slots. In Redis each specialist's ID is
// written once and each slot as [start, end, specialist indexes...] in
// Unix seconds: a pooled day of 20 specialists is a tenth of the size of
// the slots as structs, and encoding it was a tenth of the server's CPU
// under booking load.
type slotList []availability.Slot

type packedSlots struct {
	IDs   []uuid.UUID `json:"ids"`
	Slots [][]int64   `json:"s"`
}

func (l slotList) MarshalJSON() ([]byte, error) {
	// By hand: this runs for every list a booking carries over.
	var ids []uuid.UUID
	var last []int // by position in a slot: the index written there last
	index := map[uuid.UUID]int{}
	rows := make([]byte, 0, 64*len(l))
	for i, sl := range l {
		if i > 0 {
			rows = append(rows, ',')
		}
		rows = append(rows, '[')
		rows = strconv.AppendInt(rows, sl.Start.Unix(), 10)
		rows = append(rows, ',')
		rows = strconv.AppendInt(rows, sl.End.Unix(), 10)
		for j, id := range sl.SpecialistIDs {
			// Neighbouring slots mostly list the same specialists in the
			// same order: try the index this position had last time.
			var n int
			if j < len(last) && ids[last[j]] == id {
				n = last[j]
			} else {
				var ok bool
				if n, ok = index[id]; !ok {
					n = len(ids)
					index[id] = n
					ids = append(ids, id)
				}
				if j < len(last) {
					last[j] = n
				} else {
					last = append(last, n)
				}
			}
			rows = append(rows, ',')
			rows = strconv.AppendInt(rows, int64(n), 10)
		}
		rows = append(rows, ']')
	}
	b := make([]byte, 0, len(rows)+40*len(ids)+16)
	b = append(b, `{"ids":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, id.String()...)
		b = append(b, '"')
	}
	b = append(b, `],"s":[`...)
	b = append(b, rows...)
	return append(b, "]}"...), nil
}

func (l *slotList) UnmarshalJSON(b []byte) error {
	var p packedSlots
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	out := make(slotList, len(p.Slots))
	for i, row := range p.Slots {
		if len(row) < 2 {
			return fmt.Errorf("cached slot %d: %d numbers", i, len(row))
		}
		sl := availability.Slot{Start: time.Unix(row[0], 0).UTC(), End: time.Unix(row[1], 0).UTC(),
			SpecialistIDs: make([]uuid.UUID, len(row)-2)}
		for j, n := range row[2:] {
			if n < 0 || n >= int64(len(p.IDs)) {
				return fmt.Errorf("cached slot %d: specialist %d of %d", i, n, len(p.IDs))
			}
			sl.SpecialistIDs[j] = p.IDs[n]
		}
		out[i] = sl
	}
	*l = out
	return nil
}

func (s *Service) cached(ctx context.Context, key string) *entry {
	raw, err := s.rdb.Get(ctx, key).Bytes()
	if err != nil {
		if !errors.Is(err, redis.Nil) {
			s.logger.Warn("timeslot cache read", "err", err)
		}
		return nil
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil
	}
	return e.withMeta()
}

func (s *Service) store(ctx context.Context, key string, e *entry, now time.Time) {
	ttl := e.Expires.Sub(now)
	if ttl < time.Millisecond {
		return
	}
	raw, err := e.encode()
	if err != nil {
		return
	}
	if err := s.rdb.Set(ctx, key, raw, ttl).Err(); err != nil {
		s.logger.Warn("timeslot cache write", "err", err)
	}
}

// Invalidate bumps a clinic's set-up generation, retiring every cached list
// of the clinic. Called after every committed change of hours, overrides,
// types or specialists.
func (s *Service) Invalidate(ctx context.Context, clinicID uuid.UUID) {
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
		s.store(ctx, ref.key, &e, now)
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

var zoneCache sync.Map // name -> *time.Location

// loadZone is time.LoadLocation without reading the zone database on every
// request.
func loadZone(name string) (*time.Location, error) {
	if loc, ok := zoneCache.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zoneCache.Store(name, loc)
	return loc, nil
}

// memo keeps decoded cache entries in process. Its keys carry the
// generation read from Redis on every request, so an instance never serves
// an entry another instance has invalidated; it only skips fetching and
// decoding the same entry again.
type memo struct {
	mu      sync.Mutex
	entries map[string]memoEntry
	byDay   map[string][]string // day generation key -> keys of entries that name it
}

type memoEntry struct {
	e       *entry
	ref     *cacheRef
	expires time.Time
}

const memoSize = 2048

func (m *memo) get(key string, now time.Time) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	me, ok := m.entries[key]
	if !ok || now.After(me.expires) {
		return nil
	}
	return me.e
}

// put keeps e until its window runs out (ttl from now for an entry that
// does not say).
func (m *memo) put(ref *cacheRef, e *entry, now time.Time, ttl time.Duration) {
	expires := e.Expires
	if expires.IsZero() {
		expires = now.Add(ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = make(map[string]memoEntry)
		m.byDay = make(map[string][]string)
	}
	if len(m.entries) >= memoSize {
		// Old generations are dead weight: drop everything and start over;
		// the next reads refill it from Redis.
		clear(m.entries)
		clear(m.byDay)
	}
	if _, again := m.entries[ref.key]; !again && !ref.req.NoBookings {
		for _, k := range ref.genKeys[1:] {
			m.byDay[k] = append(m.byDay[k], ref.key)
		}
	}
	m.entries[ref.key] = memoEntry{e: e, ref: ref, expires: expires}
}

// following are the live free-slot lists of a clinic that a booking which
// moved the day counters to bumped (key -> new value) had seen: each of
// those counters it names stood just before the booking's value. Lists
// that name none of them are not the booking's business.
func (m *memo) following(clinicID uuid.UUID, bumped map[string]int64, now time.Time) []memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var out []memoEntry
	for day := range bumped {
		for _, key := range m.byDay[day] {
			if seen[key] {
				continue
			}
			seen[key] = true
			if me := m.entries[key]; m.carries(me, clinicID, bumped, now) {
				out = append(out, me)
			}
		}
	}
	return out
}

// carries reports whether me is a live list of the clinic read at the
// counters just before bumped: each counter it names stood one below the
// booking's value ("" when the booking made it 1).
func (m *memo) carries(me memoEntry, clinicID uuid.UUID, bumped map[string]int64, now time.Time) bool {
	if me.e == nil || me.ref.clinicID != clinicID || me.ref.req.NoBookings || now.After(me.expires) {
		return false
	}
	named := 0
	for i, k := range me.ref.genKeys {
		n, hit := bumped[k]
		if !hit {
			continue
		}
		named++
		before := ""
		if n > 1 {
			before = strconv.FormatInt(n-1, 10)
		}
		if me.ref.genVals[i] != before {
			return false
		}
	}
	return named > 0
}

// Interval is a specialist's booked time.
type Interval struct {
	SpecialistID uuid.UUID
	Start, End   time.Time
}
