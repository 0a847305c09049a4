package app

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/testkit"
)

// A retention run's counts show in the metrics by kind, anonymised apart
// from deleted, with no label but the kind.
func TestRetentionMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	if _, err := pool.Exec(ctx, `INSERT INTO bookings
		(clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, patient_name, patient_email)
		VALUES ($1, $2, $3, now() - interval '2 years', now() - interval '2 years' + interval '30 minutes', 'Mia Metric', 'mia@example.org')`,
		c.ID, c.Types[0].ID, c.Specialists[0].ID); err != nil {
		t.Fatal(err)
	}
	r := privacy.NewRetention(pool, privacy.RetentionConfig{Now: time.Now})
	reg := prometheus.NewRegistry()
	registerRetentionMetrics(reg, r)
	registerRetentionMetrics(reg, r)
	if _, err := r.Run(ctx, c.Slug); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "kind" {
				t.Errorf("%s has labels %v, want only kind", f.GetName(), m.GetLabel())
			}
			got[f.GetName()+"/"+m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if got["clinic_retention_anonymised_rows_total/bookings"] != 1 {
		t.Errorf("metrics %v, want 1 booking anonymised", got)
	}
	if _, ok := got["clinic_retention_deleted_rows_total/waitlist_places"]; !ok {
		t.Errorf("metrics %v lack the deleted kinds", got)
	}
}
