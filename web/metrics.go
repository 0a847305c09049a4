package web

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/platform/postgres"
)

// httpMetrics are the request metrics on /metrics, by route pattern (never
// the raw path: paths carry ids and manage tokens).
type httpMetrics struct {
	duration *prometheus.HistogramVec
	outcomes *prometheus.CounterVec
	noDB     *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer, ob *outbox.Outbox) *httpMetrics {
	m := &httpMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "clinic_http_request_duration_seconds", Help: "HTTP request latency by route and status class (streams excluded).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route", "status"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clinic_outcomes_total", Help: "Holds and bookings by outcome (created, or the error code).",
		}, []string{"what", "outcome"}),
		noDB: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clinic_outcomes_without_db_total",
			Help: "Holds and bookings answered without a PostgreSQL round trip (a hot slot's losers, refused by the hold and the bitmap), by outcome.",
		}, []string{"what", "outcome"}),
	}
	reg.MustRegister(m.duration, m.outcomes, m.noDB)
	if ob != nil {
		// The e-mails, read at each scrape (metrics_outbox.go).
		reg.MustRegister(newOutboxCollector(ob))
	}
	return m
}

func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.deps.Registry, promhttp.HandlerOpts{})
}

// listenMetrics serves GET /metrics on the private metrics address (the
// metrics name clinics and their load: not for the public address). It
// returns the server to close at shutdown, or nil without METRICS_ADDR.
func (s *Server) listenMetrics() (*http.Server, error) {
	if s.deps.MetricsAddr == "" {
		s.deps.Logger.Warn("metrics are public at /metrics on the main address; set METRICS_ADDR to serve them on a private one")
		return nil, nil
	}
	ln, err := net.Listen("tcp", s.deps.MetricsAddr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metricsHandler())
	srv := &http.Server{
		Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(s.deps.Logger.Handler(), slog.LevelWarn),
	}
	s.deps.Logger.Info("metrics listening", "addr", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != http.ErrServerClosed {
			s.deps.Logger.Error("metrics server", "err", err)
		}
	}()
	return srv, nil
}

func (m *httpMetrics) observe(method, route string, status int, d time.Duration) {
	if m == nil || strings.HasSuffix(route, "/live") || strings.HasSuffix(route, "/stream") {
		return
	}
	m.duration.WithLabelValues(method, route, strconv.Itoa(status/100)+"xx").Observe(d.Seconds())
}

// outcome counts a hold or booking attempt: "created" or its error code,
// and whether it was answered without a database round trip.
func (m *httpMetrics) outcome(ctx context.Context, what string, err error) {
	if m == nil {
		return
	}
	o := "created"
	if err != nil {
		if o = apperr.CodeOf(err); o == "" {
			o = apperr.CodeInternal
		}
	}
	m.outcomes.WithLabelValues(what, o).Inc()
	if postgres.QueriesIn(ctx) == 0 {
		m.noDB.WithLabelValues(what, o).Inc()
	}
}
