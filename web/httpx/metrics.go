package httpx

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/platform/postgres"
)

// httpMetrics are the request metrics on /metrics, by route pattern (never
// the raw path: paths carry ids and manage tokens).
type Metrics struct {
	duration *prometheus.HistogramVec
	outcomes *prometheus.CounterVec
	noDB     *prometheus.CounterVec
}

// NewMetrics registers the request metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
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
	return m
}

func (m *Metrics) observe(method, route string, status int, d time.Duration) {
	if m == nil || strings.HasSuffix(route, "/live") || strings.HasSuffix(route, "/stream") {
		return
	}
	m.duration.WithLabelValues(method, route, strconv.Itoa(status/100)+"xx").Observe(d.Seconds())
}

// Outcome counts a hold or booking attempt: "created" or its error code,
// and whether it was answered without a database round trip.
func (m *Metrics) Outcome(ctx context.Context, what string, err error) {
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
