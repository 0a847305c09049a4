// Package feeds is the calendar subscriptions phones read: a specialist's
// bookings, and a staff account's own ("my appointments": the bookings of
// the specialist an admin linked the account to), each from a secret
// address whose token only the SHA-256 of is kept.
//
// A feed carries each booking that still takes its time: its type in the
// clinic's language, its time, and its state (booked, arrived, attended,
// no-show). Cancelled bookings, and the old time of a moved one, are left
// out rather than sent as STATUS:CANCELLED: a subscription is replaced
// whole on every refresh, so every reader removes them, while readers
// differ in what they do with a cancelled event (some hide it, some show
// it as if it were still on). Patients' names are in it only when the
// clinic turns them on.
//
// Bodies are cached in Redis, one hash per clinic (key "feeds:{<clinic>}",
// field "<specialist>:<0|1 names>", value: the build time, the ETag and
// the body). A change of the clinic's set-up or an erasure drops the
// clinic's hash (ClinicChanged), and any body older than the refresh
// interval is built again: whatever changed, a reader sees it within that
// interval. A booking change drops nothing: that would add a Redis
// command to every booking for readers that poll every quarter of an
// hour at best, and the refresh interval bounds the delay anyway. Without
// Redis a feed is built on each request.
package feeds

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/clinic/booking/internal/db"
)

// DefaultRefresh is how old a cached feed may be when Options.Refresh is
// not set.
const DefaultRefresh = time.Minute

// The span of bookings a feed carries, around now: enough for a phone's
// past weeks and the months ahead, small enough to stay cheap.
const (
	spanBack  = 60 * 24 * time.Hour
	spanAhead = 366 * 24 * time.Hour
)

// Options shape the Service.
type Options struct {
	// Refresh is how old a cached body may be, and the interval readers
	// are asked to refresh at (FEED_REFRESH_SECONDS); 0: DefaultRefresh.
	Refresh time.Duration
	Logger  *slog.Logger
}

// Service makes, revokes and serves calendar feeds.
type Service struct {
	pool    *pgxpool.Pool
	rdb     redis.UniversalClient
	refresh time.Duration
	log     *slog.Logger
	now     func() time.Time
}

// New makes the Service.
func New(pool *pgxpool.Pool, rdb redis.UniversalClient, o Options) *Service {
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{pool: pool, rdb: rdb, refresh: o.Refresh, log: o.Logger, now: time.Now}
}

// Refresh is how old a served feed may be.
func (s *Service) Refresh() time.Duration { return s.refresh }

// tx runs f in one transaction.
func (s *Service) tx(ctx context.Context, f func(q *db.Queries) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return f(db.New(tx)) })
}
