package web

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/outbox"
)

// outboxBacklogTimeout bounds the query a scrape makes of the queue: a
// slow database leaves the two backlog gauges out rather than the scrape
// hanging.
const outboxBacklogTimeout = 2 * time.Second

// outboxCollector exposes the e-mails: this process's attempts by kind and
// outcome, and the queue's backlog (every instance's), read on each
// scrape. Its labels name kinds and outcomes only, never a patient.
type outboxCollector struct {
	ob       *outbox.Outbox
	attempts *prometheus.Desc
	held     *prometheus.Desc
	depth    *prometheus.Desc
	oldest   *prometheus.Desc
}

func newOutboxCollector(ob *outbox.Outbox) *outboxCollector {
	return &outboxCollector{
		ob: ob,
		attempts: prometheus.NewDesc("clinic_mail_messages_total",
			"E-mail send attempts of this process by kind and outcome (sent, retried, failed, cancelled, held).",
			[]string{"kind", "outcome"}, nil),
		held: prometheus.NewDesc("clinic_mail_held_back_total",
			"E-mails this process held back because public requests had caused too many to one address in a day, by the cap met (clinic: MAILS_PER_RECIPIENT, server: MAILS_PER_RECIPIENT_SERVER).",
			[]string{"cap"}, nil),
		depth: prometheus.NewDesc("clinic_mail_queue_depth",
			"E-mails due and not yet sent or given up, in the whole queue.", nil, nil),
		oldest: prometheus.NewDesc("clinic_mail_oldest_waiting_seconds",
			"How long the oldest e-mail due has waited (0 with none waiting): growing, the mail server is down or the workers too few.", nil, nil),
	}
}

func (oc *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- oc.attempts
	ch <- oc.held
	ch <- oc.depth
	ch <- oc.oldest
}

func (oc *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	counts := oc.ob.Counts()
	for _, kind := range outbox.Kinds {
		for _, outcome := range outbox.Outcomes {
			n := counts[[2]string{kind, outcome}]
			ch <- prometheus.MustNewConstMetric(oc.attempts, prometheus.CounterValue, float64(n), kind, outcome)
		}
	}
	held := oc.ob.HeldCounts()
	for _, scope := range outbox.Scopes {
		ch <- prometheus.MustNewConstMetric(oc.held, prometheus.CounterValue, float64(held[scope]), scope)
	}
	ctx, cancel := context.WithTimeout(context.Background(), outboxBacklogTimeout)
	defer cancel()
	waiting, oldest, err := oc.ob.Backlog(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(oc.depth, prometheus.GaugeValue, float64(waiting))
	ch <- prometheus.MustNewConstMetric(oc.oldest, prometheus.GaugeValue, oldest.Seconds())
}
