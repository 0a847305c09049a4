package slots

// The Redis cache of computed lists: generation counters, the key a list
// is stored under, and reading and writing entries.

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/availability"
)

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
	row, err := s.StoredType(ctx, req.AppointmentTypeID)
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
// (see Service.carried).
type cacheRef struct {
	key         string
	first, last availability.Date
	clinicID    uuid.UUID
	req         Request
	genKeys     []string // the clinic's set-up generation, then each key day's
	genVals     []string // as read; "" for a counter that does not exist
	server      string   // the PostgreSQL server it was computed from
}

// cacheKeys names the cached lists of reqs (one clinic's): the type, who,
// kind and range, and a hash of the generations each depends on: the
// clinic's set-up, and for free slots the booking changes of each of its
// keyDays. One Redis round trip for them all (read's, when not nil). A
// request's ref is nil when its list cannot be cached now.
//
// The lists are read in the same round trip, under the names the
// counters' values this process saw last give them (a counter it never
// saw as missing), unless the memo has them: when the counters read
// those values, along holds what each of those names holds (nil: no
// list), and the lists need no read of their own.
func (s *Service) cacheKeys(ctx context.Context, read CounterReader, clinicID uuid.UUID, reqs []Request, now time.Time) (refs []*cacheRef, along map[string]*entry) {
	refs = make([]*cacheRef, len(reqs))
	keys := make([][]string, len(reqs))
	index := map[string]int{GenerationKey(clinicID): 0}
	all := []string{GenerationKey(clinicID)}
	for i, req := range reqs {
		first, last, ok := s.keyDays(ctx, clinicID, req)
		if !ok {
			continue
		}
		keys[i] = []string{GenerationKey(clinicID)}
		if !req.NoBookings {
			for d := first; !last.Before(d); d = d.AddDays(1) {
				k := dayGenerationKey(clinicID, d)
				keys[i] = append(keys[i], k)
				if _, seen := index[k]; !seen {
					index[k] = len(all)
					all = append(all, k)
				}
			}
		}
		refs[i] = &cacheRef{first: first, last: last, clinicID: clinicID,
			req: Request{AppointmentTypeID: req.AppointmentTypeID, From: req.From, To: req.To, SpecialistID: req.SpecialistID, NoBookings: req.NoBookings}}
	}
	if read == nil {
		read = s.counters
	}
	server := s.server()
	named := func(vals []string) {
		for i, ref := range refs {
			if ref == nil {
				continue
			}
			ref.genKeys, ref.genVals, ref.server = keys[i], make([]string, len(keys[i])), server
			for j, k := range keys[i] {
				ref.genVals[j] = vals[index[k]]
			}
			ref.key = listKey(clinicID, ref.req, ref.server, ref.genVals)
		}
	}
	guess := s.memo.guess(all)
	named(guess)
	var lists []string
	for _, ref := range refs {
		if ref != nil && s.memo.get(ref.key, now) == nil {
			lists = append(lists, ref.key)
		}
	}
	vals, err := read(ctx, clinicID, append(all[:len(all):len(all)], lists...))
	if err == nil && len(vals) != len(all)+len(lists) {
		err = fmt.Errorf("%d keys read, %d asked for", len(vals), len(all)+len(lists))
	}
	if err != nil {
		s.logger.Warn("timeslot cache unavailable", "err", err)
		return make([]*cacheRef, len(reqs)), nil
	}
	vals, texts := vals[:len(all)], vals[len(all):]
	s.memo.saw(all, vals)
	if !slices.Equal(vals, guess) {
		named(vals)
		return refs, nil
	}
	along = make(map[string]*entry, len(lists))
	for i, k := range lists {
		along[k] = decodeEntry(texts[i])
	}
	return refs, along
}

// decodeEntry is a stored list, or nil for none ("") or one that cannot
// be read.
func decodeEntry(text string) *entry {
	if text == "" {
		return nil
	}
	var e entry
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		return nil
	}
	return e.withMeta()
}

// counters reads keys (counters of one clinic) with one MGET.
func (s *Service) counters(ctx context.Context, _ uuid.UUID, keys []string) ([]string, error) {
	gens, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	vals := make([]string, len(keys))
	for i, g := range gens {
		vals[i], _ = g.(string)
	}
	return vals, nil
}

// listKey is the Redis key of a list of req (a type of the clinic) under
// generations vals, computed from server: after a failover no list of the
// old primary is read again (one may miss a booking whose commit's answer
// was lost). It carries the clinic's hash tag, as the generations and the
// bitmaps do: a booking's observer moves its days' counters and stores
// the lists it carries over in one script.
func listKey(clinicID uuid.UUID, req Request, server string, vals []string) string {
	h := fnv.New64a()
	h.Write([]byte(server))
	h.Write([]byte{0})
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
	return fmt.Sprintf("timeslots:{%s}:%s:%s:%s:%x:%s:%s", clinicID, req.AppointmentTypeID, who, kind, h.Sum64(), req.From, req.To)
}

// cached reads the lists stored under keys (one clinic's, one hash slot):
// one Redis read however many.
func (s *Service) cached(ctx context.Context, keys []string) map[string]*entry {
	raws, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		s.logger.Warn("timeslot cache read", "err", err)
		return nil
	}
	out := make(map[string]*entry, len(keys))
	for i, raw := range raws {
		text, _ := raw.(string)
		if e := decodeEntry(text); e != nil {
			out[keys[i]] = e
		}
	}
	return out
}

// storeAll writes the lists of c (one clinic's, one hash slot): a SET for
// one, one script call for more.
func (s *Service) storeAll(ctx context.Context, c *storeCall) {
	var err error
	switch len(c.keys) {
	case 0:
		return
	case 1:
		err = s.rdb.Set(ctx, c.keys[0], c.args[0], time.Duration(c.args[1].(int64))*time.Millisecond).Err()
	default:
		err = storeScript.Run(ctx, s.rdb, c.keys, c.args...).Err()
	}
	if err != nil {
		s.logger.Warn("timeslot cache write", "err", err)
	}
}
