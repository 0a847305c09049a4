// The cache of built feeds in Redis (see the package doc for its keys).

package feeds

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
)

// cacheKey names one cached body.
type cacheKey struct {
	clinic, specialist uuid.UUID
	names              bool
}

// hash is the clinic's Redis key; the braces keep a clinic's feeds in one
// slot of a Redis Cluster.
func hashOf(clinic uuid.UUID) string { return "feeds:{" + clinic.String() + "}" }

func (k cacheKey) field() string { return fieldOf(k.specialist, k.names) }

func fieldOf(specialist uuid.UUID, names bool) string {
	if names {
		return specialist.String() + ":1"
	}
	return specialist.String() + ":0"
}

// etagLen is the length of a quoted ETag (16 bytes in hex).
const etagLen = 2 + 32

// cached is the body of k if one younger than the refresh interval is
// kept. A Redis failure is a miss.
func (s *Service) cached(ctx context.Context, k cacheKey) (Body, bool) {
	v, err := s.rdb.HGet(ctx, hashOf(k.clinic), k.field()).Bytes()
	if err != nil || len(v) < 8+etagLen {
		return Body{}, false
	}
	built := time.Unix(0, int64(binary.BigEndian.Uint64(v[:8])))
	if age := s.now().Sub(built); age < 0 || age >= s.refresh {
		return Body{}, false
	}
	return Body{ETag: string(v[8 : 8+etagLen]), Text: v[8+etagLen:]}, true
}

// store keeps b as k's body. The hash lives twice the refresh interval
// past its last write, so a clinic whose feeds nobody reads any more
// leaves nothing behind.
func (s *Service) store(ctx context.Context, k cacheKey, b Body) {
	v := make([]byte, 8, 8+len(b.ETag)+len(b.Text))
	binary.BigEndian.PutUint64(v, uint64(s.now().UnixNano()))
	v = append(append(v, b.ETag...), b.Text...)
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, hashOf(k.clinic), k.field(), v)
	pipe.PExpire(ctx, hashOf(k.clinic), 2*s.refresh)
	if _, err := pipe.Exec(ctx); err != nil {
		s.log.Debug("feeds: cache write failed", "err", err)
	}
}

// OnBookingChange drops the cached feeds of the specialists a committed
// booking change touches (a move's old and new specialist). It is a
// booking.Service observer.
func (s *Service) OnBookingChange(ctx context.Context, ch booking.Change) {
	fields := []string{fieldOf(ch.Booking.SpecialistID, false), fieldOf(ch.Booking.SpecialistID, true)}
	if p := ch.Previous; p != nil && p.SpecialistID != ch.Booking.SpecialistID {
		fields = append(fields, fieldOf(p.SpecialistID, false), fieldOf(p.SpecialistID, true))
	}
	if err := s.rdb.HDel(context.WithoutCancel(ctx), hashOf(ch.Booking.ClinicID), fields...).Err(); err != nil {
		// The body is rebuilt within the refresh interval anyway.
		s.log.Warn("feeds: dropping cached feeds failed", "err", err)
	}
}

// ClinicChanged drops every cached feed of the clinic: its set-up (a
// type's name, a specialist's, its language), an attendance mark or an
// erasure changed what they say.
func (s *Service) ClinicChanged(ctx context.Context, clinicID uuid.UUID) {
	if err := s.rdb.Del(context.WithoutCancel(ctx), hashOf(clinicID)).Err(); err != nil {
		s.log.Warn("feeds: dropping cached feeds failed", "err", err)
	}
}
