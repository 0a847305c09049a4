package web

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.deps.Registry, promhttp.HandlerOpts{})
}

// listenMetrics serves GET /metrics on the private metrics address (the
// metrics name clinics and their load: not for the public address unless
// the operator says so with METRICS_PUBLIC). It returns the server to
// close at shutdown, or nil without METRICS_ADDR.
func (s *Server) listenMetrics() (*http.Server, error) {
	if s.deps.MetricsPublic {
		s.deps.Logger.Warn("metrics are public at /metrics on the main address (METRICS_PUBLIC=true): anyone who reaches it sees clinics' bookings, e-mails and staff online")
	}
	if s.deps.MetricsAddr == "" {
		if !s.deps.MetricsPublic {
			s.deps.Logger.Info("metrics are not served; set METRICS_ADDR to serve /metrics on a private address")
		}
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
