// Package web is the HTTP server: the Echo app and the http.Server around
// it, with its start, graceful shutdown, health checks and the metrics
// endpoint. It builds each audience's handlers from Deps (handlers.go) and
// mounts every route of every package in one place (routes.go). The
// handlers themselves live in the packages below: api (the JSON API),
// patient and waitpage (the patients' pages and waitlist pages), kiosk,
// desk and setup (the staff's pages), stream (server-sent events), public
// (what the API and the patient pages share) and httpx (the plumbing they
// all use).
package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

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
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/practice"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/ratelimit"
	"github.com/clinic/booking/internal/series"
	"github.com/clinic/booking/internal/slots"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/verify"
	"github.com/clinic/booking/internal/waitlist"
	"github.com/clinic/booking/web/httpx"
)

// Deps is everything the handlers use; internal/app builds it.
type Deps struct {
	Logger *slog.Logger
	// PingDB says whether PostgreSQL answers (readiness).
	PingDB      func(context.Context) error
	Idempotency *idempotency.Cleaner
	Redis       redis.UniversalClient
	Bookings    *booking.Service
	Clinics     *clinics.Service
	Slots       *slots.Service
	// SetupChanges retires a clinic's caches after a change of its set-up
	// (a new zone).
	SetupChanges slots.SetupChanges
	Holds        *holds.Store
	Checkout     *checkout.Service
	// Verify checks the e-mailed codes and the tokens they earn.
	Verify   *verify.Service
	Outbox   *outbox.Outbox
	Waitlist *waitlist.Service
	// Privacy finds and erases one patient's data.
	Privacy *privacy.Service
	// Access records which staff account saw which patients' bookings.
	Access *privacy.Recorder
	// PatientExport hands admins a patient's data.
	PatientExport *privacy.Exporter

	Staff               *staff.Service
	Practice            *practice.Service
	StaffBookings       *desk.Bookings
	Desk                *desk.Desk
	LoginIPLimiter      *ratelimit.Limiter
	LoginAccountLimiter *ratelimit.Limiter // sign-ins per account from unknown devices
	LoginDeviceLimiter  *ratelimit.Limiter // sign-ins per known device (see knownDevice)
	CodeAccountLimiter  *ratelimit.Limiter // second-factor codes per account per hour from unknown devices
	Sessions            *scs.SessionManager
	HoldLimiter         *ratelimit.Limiter // holds on the pages, per IP
	MoveLimiter         *ratelimit.Limiter // moves by manage link per IP, pages and API
	MoveLinkLimiter     *ratelimit.Limiter // moves made per manage link, pages and API
	FindIPLimiter       *ratelimit.Limiter // "find my booking" requests per IP
	FindEmailLimiter    *ratelimit.Limiter // "find my booking" requests per clinic and e-mail address
	// Waitlist joins per IP (pages and API) and per clinic and e-mail
	// address (each join sends an e-mail); answers to offers and entry
	// pages' actions per IP.
	WaitlistIPLimiter, WaitlistEmailLimiter, OfferLimiter *ratelimit.Limiter
	APIHoldLimiter                                        *ratelimit.Limiter // POST /v1/holds per IP; nil: not limited
	StaffWriteLimiter                                     *ratelimit.Limiter // staff changes per account
	Grid                                                  *grid.Service
	Views                                                 *liveview.Store // nil: every grid read goes to the source
	Assets                                                *httpx.Assets
	Hub                                                   *events.Hub
	StreamMetrics                                         *events.Metrics
	Registry                                              *prometheus.Registry

	// Calendar feeds: the service, and its requests per client address
	// and per feed address.
	Feeds                      *feeds.Service
	Series                     *series.Service
	FeedIPLimiter, FeedLimiter *ratelimit.Limiter

	// Heartbeats (PATCH /v1/holds and the pages'), per hold and per IP.
	HeartbeatHoldLimiter, HeartbeatIPLimiter *ratelimit.Limiter

	// Secret signs the sign-in form's CSRF token, device cookies and
	// client cookies.
	Secret []byte
	// MetricsAddr serves /metrics on a listener of its own ("": none).
	MetricsAddr string
	// MetricsPublic also serves /metrics on the public address; without
	// it the public address answers 404 there (the metrics name clinics
	// and their load).
	MetricsPublic bool
	PublicURL     string // "": links from each request's scheme and host
	// StreamsPerAddress is how many public event streams one address
	// network may keep open on this process (0: 50).
	StreamsPerAddress int
	// TrustedProxies are the load balancers whose X-Forwarded-For names
	// the client (see clientIP); none: the peer is the client.
	TrustedProxies []netip.Prefix

	// The http.Server's timeouts; 0: 5 s, 15 s and 30 s.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout time.Duration
}

// Server is the Echo app and the http.Server around it.
type Server struct {
	deps Deps
	echo *echo.Echo
	http *http.Server
	handlers
}

// clientIP finds the address rate limits count: the peer's, unless the
// peer is one of the trusted proxies; then the nearest address in
// X-Forwarded-For that no trusted proxy wrote (a client can put anything
// at the front of the header, but not past its own proxy). Loopback and
// private ranges are not trusted by default (Echo's defaults would trust
// them): only what TRUSTED_PROXIES names.
//
// Without trusted proxies a request that carries X-Forwarded-For is logged
// once: a load balancer nobody named makes every patient one address, and
// the per-address limits (HOLDS_PER_ADDRESS above all) then bind the
// whole clinic.
func clientIP(trusted []netip.Prefix, logger *slog.Logger) echo.IPExtractor {
	if len(trusted) == 0 {
		direct := echo.ExtractIPDirect()
		var once sync.Once
		return func(req *http.Request) string {
			if req.Header.Get(echo.HeaderXForwardedFor) != "" {
				once.Do(func() {
					logger.Warn("a request came with X-Forwarded-For, but TRUSTED_PROXIES is empty: every client behind a proxy counts as the proxy's one address; name your load balancer in TRUSTED_PROXIES")
				})
			}
			return direct(req)
		}
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// New builds the app with every route (see routes.go).
func New(deps Deps, addr string) *Server {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	s := &Server{deps: deps, echo: e, handlers: newHandlers(deps)}
	if deps.Outbox != nil {
		// The e-mails, read at each scrape (metrics_outbox.go).
		deps.Registry.MustRegister(newOutboxCollector(deps.Outbox))
	}
	e.HTTPErrorHandler = s.kit.HandleError
	// Rate limits key on the client's address (see clientIP).
	e.IPExtractor = clientIP(deps.TrustedProxies, deps.Logger)
	s.routes()
	s.http = &http.Server{
		Addr:              addr,
		Handler:           e,
		ReadHeaderTimeout: cmp.Or(deps.ReadHeaderTimeout, 5*time.Second),
		ReadTimeout:       cmp.Or(deps.ReadTimeout, 15*time.Second),
		// Streams set their own write deadlines (net/http lifts the read
		// deadline once a request is read); everything else must answer in
		// time.
		WriteTimeout: cmp.Or(deps.WriteTimeout, 30*time.Second),
		IdleTimeout:  120 * time.Second,
		ErrorLog:     slog.NewLogLogger(deps.Logger.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler is the app as an http.Handler, for httptest servers.
func (s *Server) Handler() http.Handler { return s.echo }

// ListenAndServe listens on the server's address and serves there until ctx
// is cancelled, as Serve does.
func (s *Server) ListenAndServe(ctx context.Context, shutdownTimeout time.Duration) error {
	ln, err := net.Listen("tcp", s.http.Addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln, shutdownTimeout)
}

// Serve serves on ln until ctx is cancelled, then shuts down gracefully,
// waiting at most shutdownTimeout for requests in flight. It closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener, shutdownTimeout time.Duration) error {
	metrics, err := s.listenMetrics()
	if err != nil {
		ln.Close()
		return fmt.Errorf("metrics address: %w", err)
	}
	if metrics != nil {
		defer metrics.Close()
	}
	errc := make(chan error, 1)
	go func() {
		s.deps.Logger.Info("listening", "addr", ln.Addr().String())
		errc <- s.http.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.deps.Logger.Info("shutting down")
	// Shutdown never sees a stream go idle: end the streams first (each
	// sends "end" with "server-shutdown"), then drain the requests.
	s.deps.Hub.Shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.http.Shutdown(sctx); err != nil {
		return err
	}
	if !s.live.Wait(sctx) {
		return fmt.Errorf("streams still open after %s", shutdownTimeout)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
