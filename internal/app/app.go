// Package app builds the program from its configuration: the services
// over the PostgreSQL and Redis pools, the job queue that sends e-mails
// and runs the waitlist, the booking's transaction hooks and observers,
// the rate limiters, the metrics registry and the background work every
// instance runs. main and the end-to-end tests build it the same way; web
// only serves what Build hands it.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"github.com/riverqueue/river/rivertype"

	"github.com/clinic/booking/internal/availability"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/checkout"
	"github.com/clinic/booking/internal/clinics"
	"github.com/clinic/booking/internal/desk"
	"github.com/clinic/booking/internal/events"
	"github.com/clinic/booking/internal/feeds"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/holds"
	"github.com/clinic/booking/internal/idempotency"
	"github.com/clinic/booking/internal/liveview"
	"github.com/clinic/booking/internal/mail"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/platform/postgres"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/secret"
	"github.com/clinic/booking/internal/series"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/web"
	"github.com/clinic/booking/web/httpx"
)

// Options are the tunables of Build.
type Options struct {
	HoldTTL          time.Duration // 0: 30 s
	TimeslotCacheTTL time.Duration // 0: 300 s
	NoTimeslotCache  bool
	SecureCookies    bool
	// PublicURL is the address people reach the server at, when the
	// operator set one; "" builds links from each request's scheme and host.
	PublicURL       string
	HoldsPerMinute  int // per IP on the pages; 0: 30
	LoginsPerMinute int // sign-in attempts per account from unknown devices; per IP four times that, per known device twice; 0: 5
	// CodeTriesPerHour: second-factor codes per account per hour from
	// unknown devices; 0: 10.
	CodeTriesPerHour int
	WarnHeapMB       int // 0: 500
	WarnStreams      int // 0: 20000
	MovesPerMinute   int // moves of a booking by its manage link, per IP, pages and API together; 0: 60
	// MovesPerLinkPerHour is how many moves one manage link may make in an
	// hour, pages and API together (each sends an e-mail); 0: 6.
	MovesPerLinkPerHour int
	// LimitScope prefixes the names of the rate-limit counters in Redis:
	// "" in production, where every instance must share them. Test servers
	// all come from 127.0.0.1 and share one Redis, so each gets its own.
	LimitScope string
	// Staff changes (every POST, PATCH, PUT, DELETE signed in) per account; 0: 120.
	StaffWritesPerMinute int
	// POST /v1/holds per IP; 0: not limited (only MaxHoldsPerClient and
	// the cooldown then, both per client id, which an API client chooses).
	// The server sets it (API_HOLDS_PER_MINUTE, 120 by default); tests that
	// are not about it leave it off, since they all share 127.0.0.1.
	APIHoldsPerMinute int
	// HoldsPerAddress is the most live holds of a clinic from one client
	// address (HOLDS_PER_ADDRESS, 4 by default in the server); 0: no
	// address limit (tests, which all come from 127.0.0.1).
	HoldsPerAddress int
	// BookingsPerAddress is how many online bookings without a verified
	// e-mail address one client address network may make at one clinic
	// per hour (BOOKINGS_PER_ADDRESS); 0: 3. Past it the clinic asks for a
	// code, or refuses. Tests that book many times from 127.0.0.1 raise it.
	BookingsPerAddress int
	// CodesPerRecipient is how many verification codes one e-mail address
	// may be sent per hour (CODES_PER_RECIPIENT); 0: 5.
	CodesPerRecipient int
	// CodesPerAddress is how many codes one client address network's
	// requests may have e-mailed per hour, to anyone (CODES_PER_ADDRESS);
	// 0: 10. CodeGuessesPerAddress is how many codes it may type per hour
	// (CODE_GUESSES_PER_ADDRESS); 0: 30.
	CodesPerAddress, CodeGuessesPerAddress int
	// HoldMaxLife is the longest heartbeats keep a hold, from its claim
	// (HOLD_MAX_SECONDS); 0: 10 min.
	HoldMaxLife time.Duration
	// HeartbeatsPerMinute per client address, pages and API together
	// (HEARTBEATS_PER_MINUTE); 0: 120. Per hold it is always 12.
	HeartbeatsPerMinute int
	// FeedRefresh is how old a served calendar feed may be
	// (FEED_REFRESH_SECONDS); 0: a minute.
	FeedRefresh time.Duration
	// FeedRequestsPerMinute per client address, and per feed address
	// (FEED_REQUESTS_PER_MINUTE); 0: 30.
	FeedRequestsPerMinute int

	// SecretKey signs the sign-in form's CSRF token and device cookies
	// (SECRET_KEY). Empty: the key kept in PostgreSQL (secret.Load; main
	// loads it first, so a failure stops the start).
	SecretKey []byte
	// MetricsAddr serves /metrics on a listener of its own (METRICS_ADDR).
	MetricsAddr string
	// MetricsPublic also serves /metrics on the public address
	// (METRICS_PUBLIC); without it the public address answers 404 there.
	MetricsPublic bool
	// StreamsPerAddress is how many public event streams one client
	// address network may keep open on this process
	// (STREAMS_PER_ADDRESS); 0: 50.
	StreamsPerAddress int

	// TrustedProxies are the load balancers whose X-Forwarded-For names the
	// client the rate limits count (TRUSTED_PROXIES); none: the peer is.
	TrustedProxies []netip.Prefix

	// Mail is how patients' e-mails go out.
	Mail MailOptions
	// WaitlistOfferFor is how long a waitlist offer stands
	// (WAITLIST_OFFER_MINUTES); 0: 15 min.
	WaitlistOfferFor time.Duration
	// MailRetentionDays is how long the queue's finished jobs of messages
	// no clinic holds any more are kept (MAIL_RETENTION_DAYS); 0: 30.
	MailRetentionDays int

	// The http.Server's timeouts (tests shorten them).
	ReadHeaderTimeout time.Duration // 0: 5 s
	ReadTimeout       time.Duration // 0: 15 s
	WriteTimeout      time.Duration // 0: 30 s; streams clear their own deadlines

	// ErasureLedger is the file of the ledger of erasures
	// (ERASURE_LEDGER); "": the database's table only, which a restore
	// of the database takes back with it.
	ErasureLedger string

	// HashCost is the bcrypt cost of new staff password hashes; 0:
	// staff.DefaultHashCost. Test servers lower it.
	HashCost int

	// Failover follows the PostgreSQL server the pool reaches (see
	// postgres.ConnectFollowing); nil: a server change is not noticed.
	Failover *postgres.Failover
}

// MailOptions is how the outbox sends patients' e-mails.
type MailOptions struct {
	// Sender delivers over SMTP (SMTP_URL); nil keeps every message for
	// the staff's outbox page instead.
	Sender mail.Sender
	// LinkBase starts the links in e-mails: PUBLIC_URL, or the default
	// address of a local run.
	LinkBase string
	// From is MAIL_FROM, for the messages kept without a mail server.
	From string
	// Workers is how many messages this process sends at once
	// (MAIL_WORKERS); 0: it only enqueues them (most tests).
	Workers int
	// Queue names the job queue; "" is the one every server shares, or,
	// with a LimitScope (test servers sharing a database), one of the
	// scope's own, so that no test server sends another's messages.
	Queue string
	Retry outbox.Retry
	// Cap is how many e-mails public requests may cause to one address a
	// day (MAILS_PER_RECIPIENT, MAILS_PER_RECIPIENT_SERVER); zero fields
	// take the defaults (6, and three times that across the server).
	Cap outbox.Cap
	// Clock, when set, is the queue's time (tests move it to make a
	// reminder due).
	Clock rivertype.TimeGenerator
}

// App is the built program: what web serves, and what the background
// work of RunBackground needs besides.
type App struct {
	// Deps is everything web.New serves with.
	Deps web.Deps
	// Retention is the daily removal of what is past the clinics'
	// periods, which the job queue runs.
	Retention *privacy.Retention
	// The thresholds of the load warnings (see watchLoad).
	warnHeap    uint64
	warnStreams int
}

// Build builds every service and connects the observers: each committed
// booking change updates the slot cache and bitmap, and is published. main
// and the end-to-end tests share it, so tests run what production runs.
func Build(pool *pgxpool.Pool, rdb redis.UniversalClient, logger *slog.Logger, o Options) *App {
	if o.HoldTTL <= 0 {
		o.HoldTTL = 30 * time.Second
	}
	holdStore := holds.NewStore(rdb, o.HoldTTL, logger)
	holdStore.SetMaxLife(o.HoldMaxLife)
	slotSvc := slots.New(pool, rdb, slots.Options{Holds: holdStore, CacheTTL: o.TimeslotCacheTTL, NoCache: o.NoTimeslotCache, Logger: logger,
		Server: o.Failover.Server})
	ob := newOutbox(pool, logger, o)
	openings := waitlist.NewOpenings(pool, holdStore, waitlist.Config{
		Outbox: ob, OfferFor: o.WaitlistOfferFor, Log: logger,
		Bookable: func(ctx context.Context, b booking.Booking) (bool, error) { return bookable(ctx, slotSvc, b) },
	})
	// Inside each booking change's transaction, in this order: its
	// e-mails, then the waitlist's part (an opening for a freed time, the
	// end of an offer taken up).
	bookings := booking.New(pool, booking.Options{TxHooks: []booking.TxHook{
		{Name: "e-mails", After: ob.Enqueue, Queue: ob.Queue},
		{Name: "waitlist", After: openings.Enqueue, Queue: openings.Queue},
	}})
	wl := waitlist.New(openings, bookings)
	co := checkout.New(pool, holdStore, slotSvc, bookings, logger, checkout.Limits{HoldsPerAddress: o.HoldsPerAddress})
	// The slots' step, then the spent hold's: one round trip to Redis
	// for a booking from a hold.
	bookings.Observe(co.FollowBooking)
	feedSvc := feeds.New(pool, rdb, feeds.Options{Refresh: o.FeedRefresh, Logger: logger})
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerPoolMetrics(reg, pool, rdb, holdStore)
	registerWaitlistMetrics(reg, wl)
	retention, access := newPrivacyRecords(pool, reg, logger, o)
	metrics := events.NewMetrics(reg)
	hub := events.NewHub(rdb, logger, metrics)
	liveViews := liveview.New(hub, reg, liveview.Options{})
	metrics.RedisConnected = liveViews.WatchConnected(metrics.RedisConnected)
	keepViewsCurrent(o.Failover, bookings, slotSvc, liveViews, hub)
	// Every committed calendar change invalidates the slot cache and tells
	// the open pages of the clinic to refresh.
	setupChanges := slots.SetupChanges{Slots: slotSvc, Views: liveViews, Holds: holdStore, Logger: logger}
	changed := calendarChanged(setupChanges, feedSvc, wl, logger)
	serverSecret := serverKey(pool, logger, o.SecretKey)
	staffOpts := []staff.Option{staff.WithKey(serverSecret)}
	if o.HashCost > 0 {
		staffOpts = append(staffOpts, staff.WithHashCost(o.HashCost))
	}
	staffSvc := staff.New(pool, changed, logger, staffOpts...)
	staffBookings := desk.NewBookings(pool, changed, bookings, holdStore)
	d := web.Deps{
		SetupChanges:      setupChanges,
		TrustedProxies:    o.TrustedProxies,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		Staff:             staffSvc,
		Practice:          practice.New(pool, changed),
		StaffBookings:     staffBookings,
		Desk:              desk.NewDesk(staffBookings, co, slotSvc),
		Secret:            serverSecret,
		MetricsAddr:       o.MetricsAddr,
		MetricsPublic:     o.MetricsPublic,
		StreamsPerAddress: o.StreamsPerAddress,
		PublicURL:         o.PublicURL,
		Sessions:          httpx.NewSessions(pool, o.SecureCookies),
		Grid:              grid.New(slotSvc, holdStore),
		Assets:            httpx.NewAssets(),
		Hub:               hub,
		Views:             liveViews,
		StreamMetrics:     metrics,
		Registry:          reg,
		Logger:            logger,
		PingDB:            pool.Ping,
		Idempotency:       idempotency.NewCleaner(pool),
		Redis:             rdb,
		Bookings:          bookings,
		Clinics:           clinics.NewService(pool),
		Slots:             slotSvc,
		Holds:             holdStore,
		Checkout:          co,
		Outbox:            ob,
		Waitlist:          wl,
		Access:            access,
		PatientExport:     privacy.NewExporter(pool),
		Feeds:             feedSvc,
		Series:            series.New(pool, slotSvc, holdStore, bookings),
	}
	d.Privacy = privacy.New(privacy.Config{Pool: pool, Redis: rdb, Bookings: bookings, Holds: holdStore, Outbox: ob,
		Ledger: privacy.NewLedger(o.ErasureLedger, d.Secret), Changed: changed, LimitScope: o.LimitScope, Log: logger})
	setLimiters(&d, rdb, logger, o)
	d.Verify = newVerification(rdb, reg, logger, o, d.Secret)
	co.SetVerification(d.Verify)
	return &App{
		Deps:        d,
		Retention:   retention,
		warnHeap:    uint64(cmp.Or(o.WarnHeapMB, 500)) << 20,
		warnStreams: cmp.Or(o.WarnStreams, 20000),
	}
}

// calendarChanged is the hook told of every committed calendar change of
// a clinic: its slot caches and live views, and its calendar feeds (which
// say the set-up's names and the attendance marks), are dropped; then a
// standing waitlist offer of a time the change closed (a closure over its
// day) is withdrawn.
func calendarChanged(setup slots.SetupChanges, feedSvc *feeds.Service, wl *waitlist.Service, logger *slog.Logger) staff.Notifier {
	return func(ctx context.Context, clinicID uuid.UUID) {
		setup.Changed(ctx, clinicID)
		feedSvc.ClinicChanged(ctx, clinicID)
		if _, err := wl.SetupChanged(context.WithoutCancel(ctx), clinicID); err != nil {
			logger.Warn("waitlist: check offers after a set-up change", "err", err)
		}
	}
}

// keepViewsCurrent applies every committed booking change to the live
// views, and after a switch of PostgreSQL server forgets what this process
// derived from the old one.
func keepViewsCurrent(failover *postgres.Failover, bookings *booking.Service, slotSvc *slots.Service, liveViews *liveview.Store, hub *events.Hub) {
	if failover != nil {
		// What this process derived from the old server may miss a commit
		// whose answer was lost with it: the slot lists (those in Redis
		// carry the server's name, see slots.Options.Server), the live
		// views, and what the open streams were sent.
		failover.OnSwitch(func() {
			slotSvc.Retire()
			liveViews.DropAll(liveview.DropFailover)
			hub.Resync()
		})
	}
	bookings.Observe(func(_ context.Context, ch booking.Change) {
		if ch.Kind != booking.ChangeConfirm {
			liveViews.Changed(ch.Booking.ClinicID)
			return
		}
		b := ch.Booking
		liveViews.Applied(holds.Event{Type: holds.EventConfirm, Hold: holds.Hold{HoldID: ch.HoldID, ClinicID: b.ClinicID,
			AppointmentTypeID: b.AppointmentTypeID, SpecialistID: b.SpecialistID, Start: b.Start, End: b.End}})
	})
}

// newPrivacyRecords builds the daily retention run and the record of who
// looked at which bookings, with their metrics.
func newPrivacyRecords(pool *pgxpool.Pool, reg *prometheus.Registry, logger *slog.Logger, o Options) (*privacy.Retention, *privacy.Recorder) {
	retention := privacy.NewRetention(pool, privacy.RetentionConfig{
		OrphanJobsAfter: time.Duration(cmp.Or(o.MailRetentionDays, 30)) * 24 * time.Hour, Log: logger,
	})
	registerRetentionMetrics(reg, retention)
	access := privacy.NewRecorder(pool)
	registerAccessMetrics(reg, access)
	return retention, access
}

// newOutbox builds the e-mail outbox of o. Its queue also works the
// waitlist's jobs, which RunBackground gives it when it starts.
func newOutbox(pool *pgxpool.Pool, logger *slog.Logger, o Options) *outbox.Outbox {
	ob, err := outbox.New(pool, outbox.Config{
		Sender: o.Mail.Sender, PublicURL: cmp.Or(o.Mail.LinkBase, o.PublicURL, "http://localhost:8080"),
		From: o.Mail.From, Workers: o.Mail.Workers, Queue: mailQueue(o), Retry: o.Mail.Retry, Clock: o.Mail.Clock, Log: logger,
		Cap: o.Mail.Cap,
	})
	if err != nil {
		// Only a client the queue refuses gets here: a programming error.
		panic(err)
	}
	return ob
}

// serverKey is the key the server signs with: the configured one, else
// the one kept in PostgreSQL.
func serverKey(pool *pgxpool.Pool, logger *slog.Logger, configured []byte) []byte {
	if len(configured) > 0 {
		return configured
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key, err := secret.Load(ctx, pool, nil)
	if err != nil {
		// Sign-in still works on this instance; its forms and device
		// cookies are worth nothing on another.
		logger.Error("server secret unavailable; using a key of this process", "err", err)
		key = []byte(randomHex(32))
	}
	return key
}

// mailQueue is the job queue of o's e-mails (see MailOptions.Queue).
func mailQueue(o Options) string {
	if o.Mail.Queue != "" || o.LimitScope == "" {
		return o.Mail.Queue
	}
	q := "mail_" + strings.Trim(nonQueueName.ReplaceAllString(strings.ToLower(o.LimitScope), "_"), "_")
	return q[:min(len(q), 64)]
}

var nonQueueName = regexp.MustCompile(`[^a-z0-9]+`)

// bookable says whether b's time is among its type's bookable times with
// its specialist (hours, closures, notice, window), bookings counted from
// PostgreSQL and holds left out: whether the waitlist may still offer it.
func bookable(ctx context.Context, slotSvc *slots.Service, b booking.Booking) (bool, error) {
	loc, err := slotSvc.Zone(ctx, b.ClinicID)
	if err != nil {
		return false, err
	}
	day := availability.DateOf(b.Start, loc)
	res, err := slotSvc.Free(ctx, slots.Request{AppointmentTypeID: b.AppointmentTypeID, From: day, To: day,
		SpecialistID: b.SpecialistID, NoCache: true, NoHolds: true})
	if err != nil {
		return false, err
	}
	for _, sl := range res.Slots {
		if sl.Start.Equal(b.Start) && slices.Contains(sl.SpecialistIDs, b.SpecialistID) {
			return true, nil
		}
	}
	return false, nil
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
