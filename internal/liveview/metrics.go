package liveview

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Drop reasons, counted in clinic_liveview_drops_total.
const (
	DropEvicted  = "evicted"  // least recently used past the cap
	DropExpired  = "expired"  // its time ran out (notice, window, age)
	DropEvent    = "event"    // an event it could not apply exactly (cancel, calendar)
	DropResync   = "resync"   // the subscription came back: events may be lost
	DropLost     = "lost"     // the subscription went down
	DropLagging  = "lagging"  // its clinic's subscription fell behind and was cut
	DropReplaced = "replaced" // a newer reading of the same view took its place
	DropWrite    = "write"    // this process changed its clinic (see Store.Changed)
	DropFailover = "failover" // the PostgreSQL server changed (see Store.DropAll)
)

// metrics are the store's counters. A nil *metrics counts nothing.
type metrics struct {
	live   prometheus.Gauge
	bytes  prometheus.Gauge
	reads  *prometheus.CounterVec
	drops  *prometheus.CounterVec
	builds *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		live: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clinic_liveviews", Help: "Live views of slot grids kept in this process.",
		}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "clinic_liveview_bytes", Help: "Approximate memory of the live views: their slots, holds and rendered answers.",
		}),
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clinic_liveview_reads_total", Help: "Grid pages, timeslot reads and clinic pages, by kind and whether a live view or kept answer answered (hit) or not (miss).",
		}, []string{"kind", "result"}),
		drops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clinic_liveview_drops_total", Help: "Live views dropped, by reason.",
		}, []string{"reason"}),
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clinic_liveview_builds_total", Help: "Live views built from a fresh reading (kept), or not kept because events got in the way (raced).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.live, m.bytes, m.reads, m.drops, m.builds)
	return m
}

func (m *metrics) read(kind, result string) {
	if m != nil {
		m.reads.WithLabelValues(kind, result).Inc()
	}
}

func (m *metrics) dropped(reason string) {
	if m != nil {
		m.drops.WithLabelValues(reason).Inc()
	}
}

func (m *metrics) built(result string) {
	if m != nil {
		m.builds.WithLabelValues(result).Inc()
	}
}

func (m *metrics) setLive(n int) {
	if m != nil {
		m.live.Set(float64(n))
	}
}

func (m *metrics) addBytes(n int) {
	if m != nil && n != 0 {
		m.bytes.Add(float64(n))
	}
}

// connGauge is the hub's "subscription up" gauge, watched: the store
// follows every change of it.
type connGauge struct {
	prometheus.Gauge
	s *Store
}

func (g *connGauge) Set(v float64) {
	g.Gauge.Set(v)
	g.s.connected(v == 1)
}
