package app

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/waitlist"
)

// waitlistSizeTimeout bounds the query a scrape makes of the list: a slow
// database leaves the size gauges out rather than the scrape hanging.
const waitlistSizeTimeout = 2 * time.Second

// waitlistCollector exposes the waitlist: its size now (every instance's,
// read on each scrape) and what this process did with it. Its labels name
// states and outcomes only, never a patient or a clinic.
type waitlistCollector struct {
	stats    *waitlist.Stats
	wl       *waitlist.Service // reads the list's size at each scrape
	entries  *prometheus.Desc
	openings *prometheus.Desc
	joined   *prometheus.Desc
	offers   *prometheus.Desc
	released *prometheus.Desc
	rebook   *prometheus.Desc
	rebooked *prometheus.Desc
}

// registerWaitlistMetrics adds the waitlist's metrics to reg, once: a
// second call on the same registry is no error.
func registerWaitlistMetrics(reg *prometheus.Registry, wl *waitlist.Service) {
	if reg == nil || wl == nil {
		return
	}
	err := reg.Register(newWaitlistCollector(wl))
	if are := (prometheus.AlreadyRegisteredError{}); err != nil && !errors.As(err, &are) {
		panic(err)
	}
}

func newWaitlistCollector(wl *waitlist.Service) *waitlistCollector {
	wc := &waitlistCollector{
		stats: wl.Stats(), wl: wl,
		entries: prometheus.NewDesc("clinic_waitlist_entries",
			"Patients on the waitlist now, by state (waiting: confirmed, without an offer; unconfirmed: waiting for the patient to confirm the place from its e-mail, offered nothing; offered: a time is offered to them).", []string{"state"}, nil),
		openings: prometheus.NewDesc("clinic_waitlist_openings_open",
			"Freed times being offered from the waitlist now (each held while it is).", nil, nil),
		joined: prometheus.NewDesc("clinic_waitlist_joined_total",
			"Patients this process put on the waitlist.", nil, nil),
		offers: prometheus.NewDesc("clinic_waitlist_offers_total",
			"Waitlist offers of this process by outcome (made, accepted, declined, expired).", []string{"outcome"}, nil),
		released: prometheus.NewDesc("clinic_waitlist_released_total",
			"Freed times this process released to everyone after nobody (more) on the waitlist took them.", nil, nil),
		rebook: prometheus.NewDesc("clinic_waitlist_rebook_seconds_total",
			"Time from a freed time to its booking through a waitlist offer, summed over clinic_waitlist_rebooked_total.", nil, nil),
		rebooked: prometheus.NewDesc("clinic_waitlist_rebooked_total",
			"Freed times booked through a waitlist offer taken in this process.", nil, nil),
	}
	return wc
}

func (wc *waitlistCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{wc.entries, wc.openings, wc.joined, wc.offers, wc.released, wc.rebook, wc.rebooked} {
		ch <- d
	}
}

func (wc *waitlistCollector) Collect(ch chan<- prometheus.Metric) {
	st := wc.stats
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	counter(wc.joined, float64(st.Joined.Load()))
	counter(wc.offers, float64(st.Offered.Load()), "made")
	counter(wc.offers, float64(st.Accepted.Load()), "accepted")
	counter(wc.offers, float64(st.Declined.Load()), "declined")
	counter(wc.offers, float64(st.Expired.Load()), "expired")
	counter(wc.released, float64(st.Released.Load()))
	counter(wc.rebook, float64(st.RebookedMillis.Load())/1000)
	counter(wc.rebooked, float64(st.Accepted.Load()))
	ctx, cancel := context.WithTimeout(context.Background(), waitlistSizeTimeout)
	defer cancel()
	n, err := wc.wl.Sizes(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(wc.entries, prometheus.GaugeValue, float64(n.Waiting), "waiting")
	ch <- prometheus.MustNewConstMetric(wc.entries, prometheus.GaugeValue, float64(n.Unconfirmed), "unconfirmed")
	ch <- prometheus.MustNewConstMetric(wc.entries, prometheus.GaugeValue, float64(n.Offered), "offered")
	ch <- prometheus.MustNewConstMetric(wc.openings, prometheus.GaugeValue, float64(n.Openings))
}
