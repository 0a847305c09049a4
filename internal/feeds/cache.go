// The cache of built feeds in Redis (see the package doc for its keys).

package feeds

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/google/uuid"
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

// store keeps b as k's body. The hash lives a minute past the refresh
// interval after its last write, so a clinic whose feeds nobody reads any
// more leaves nothing behind.
func (s *Service) store(ctx context.Context, k cacheKey, b Body) {
	v := make([]byte, 8, 8+len(b.ETag)+len(b.Text))
	binary.BigEndian.PutUint64(v, uint64(s.now().UnixNano()))
	v = append(append(v, b.ETag...), b.Text...)
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, hashOf(k.clinic), k.field(), v)
	pipe.PExpire(ctx, hashOf(k.clinic), s.refresh+time.Minute)
	if _, err := pipe.Exec(ctx); err != nil {
		s.log.Debug("feeds: cache write failed", "err", err)
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
