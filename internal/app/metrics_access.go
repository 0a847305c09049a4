package app

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/privacy"
)

// registerAccessMetrics adds the record of who looked to reg, once:
// clinic_access_records_total{result} counts the views this process
// recorded (written), found repeated within the repeat window (repeat),
// or failed to record (failed, each a page that failed with it). Counts
// only: no page, account or patient is a label.
func registerAccessMetrics(reg *prometheus.Registry, rec *privacy.Recorder) {
	if reg == nil || rec == nil {
		return
	}
	for result, count := range map[string]func(privacy.RecordCounts) uint64{
		"written": func(c privacy.RecordCounts) uint64 { return c.Written },
		"repeat":  func(c privacy.RecordCounts) uint64 { return c.Repeats },
		"failed":  func(c privacy.RecordCounts) uint64 { return c.Failed },
	} {
		err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "clinic_access_records_total",
			Help:        "Staff views of patients' bookings this process recorded (written), found repeated within the repeat window (repeat) or failed to record (failed).",
			ConstLabels: prometheus.Labels{"result": result},
		}, func() float64 { return float64(count(rec.Counts())) }))
		if are := (prometheus.AlreadyRegisteredError{}); err != nil && !errors.As(err, &are) {
			panic(err)
		}
	}
}
