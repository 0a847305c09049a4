package app

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/privacy"
)

// retentionCollector exposes what the retention runs of this process
// changed: rows anonymised and rows deleted, by kind of row. The labels
// name kinds only, never a patient or a clinic.
type retentionCollector struct {
	stats      *privacy.RetentionStats
	anonymised *prometheus.Desc
	deleted    *prometheus.Desc
}

// registerRetentionMetrics adds the retention's metrics to reg, once: a
// second call on the same registry is no error.
func registerRetentionMetrics(reg *prometheus.Registry, r *privacy.Retention) {
	if reg == nil || r == nil {
		return
	}
	err := reg.Register(&retentionCollector{
		stats: r.Stats(),
		anonymised: prometheus.NewDesc("clinic_retention_anonymised_rows_total",
			"Rows the retention runs of this process kept without the patient's details, by kind (bookings, audit_rows, mail_errors).", []string{"kind"}, nil),
		deleted: prometheus.NewDesc("clinic_retention_deleted_rows_total",
			"Rows the retention runs of this process deleted, by kind (messages, stored e-mails, jobs, manage links, waitlist places, sessions, ...).", []string{"kind"}, nil),
	})
	if are := (prometheus.AlreadyRegisteredError{}); err != nil && !errors.As(err, &are) {
		panic(err)
	}
}

func (rc *retentionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- rc.anonymised
	ch <- rc.deleted
}

func (rc *retentionCollector) Collect(ch chan<- prometheus.Metric) {
	rc.stats.Each(func(c privacy.Count) {
		d := rc.deleted
		if c.Anonymised {
			d = rc.anonymised
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(c.N), c.Kind)
	})
}
