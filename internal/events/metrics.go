package events

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the stream counters on /metrics. A nil *Metrics counts nothing.
type Metrics struct {
	Open           *prometheus.GaugeVec   // streams open, by kind and appointment type
	Ended          *prometheus.CounterVec // streams ended, by reason
	Received       *prometheus.CounterVec // events received from Redis, by type
	Delivered      prometheus.Counter     // events handed to subscriptions
	RedisConnected prometheus.Gauge
}

// NewMetrics registers the stream metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "clinic_streams_open", Help: "Open SSE streams by kind (json, html) and appointment type or clinic.",
		}, []string{"kind", "scope"}),
		Ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clinic_streams_ended_total", Help: "SSE streams ended, by reason.",
		}, []string{"reason"}),
		Received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clinic_events_received_total", Help: "Booking events received from Redis pub/sub, by type.",
		}, []string{"type"}),
		Delivered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "clinic_events_delivered_total", Help: "Events handed to stream buffers.",
		}),
		RedisConnected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clinic_events_redis_connected", Help: "1 while the event subscription is up.",
		}),
	}
	reg.MustRegister(m.Open, m.Ended, m.Received, m.Delivered, m.RedisConnected)
	return m
}

func (m *Metrics) delivered() {
	if m != nil {
		m.Delivered.Inc()
	}
}

func (m *Metrics) received(typ string) {
	if m != nil {
		m.Received.WithLabelValues(typ).Inc()
	}
}

func (m *Metrics) setRedisConnected(up bool) {
	if m == nil {
		return
	}
	if up {
		m.RedisConnected.Set(1)
	} else {
		m.RedisConnected.Set(0)
	}
}

// StreamOpened and StreamEnded keep the open gauge and the ended counter.
func (m *Metrics) StreamOpened(kind, scope string) {
	if m != nil {
		m.Open.WithLabelValues(kind, scope).Inc()
	}
}

func (m *Metrics) StreamEnded(kind, scope, reason string) {
	if m != nil {
		m.Open.WithLabelValues(kind, scope).Dec()
		m.Ended.WithLabelValues(reason).Inc()
	}
}
