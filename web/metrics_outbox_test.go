package web_test

// Tests of the e-mail metrics on /metrics: attempts by kind and outcome
// (every pair present, zero or not), the queue's depth and its oldest
// wait, and no patient data.

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/testkit"
)

// metricValue is the value of the series name{labels} in a /metrics text
// (labels as Prometheus writes them, sorted), and whether it is there.
func metricValue(t *testing.T, text, series string) (float64, bool) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", series, m[1], err)
	}
	return v, true
}

func mailSeries(kind, outcome string) string {
	return `clinic_mail_messages_total{kind="` + kind + `",outcome="` + outcome + `"}`
}

// One confirmation, refused once for now and then accepted: one retried
// and one sent, every other pair zero; nothing waits. A message no worker
// takes then shows in the depth and the oldest wait.
func TestMetricsOutbox(t *testing.T) {
	t.Parallel()
	a, srv := smtpApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	email := uniqueEmail("metrics")
	srv.RefuseNext(1, 451, "4.3.0 Try again later")
	a.bookAs(t, c, c.Type0(), c.Specialists[0].ID, c.Next(time.Wednesday, 10, 0), booking.Patient{Name: "Metrics Patient", Email: email})
	srv.WaitFor(t, 1, mailWait)
	waitBacklogEmpty(t, a)

	var text string
	testkit.WaitFor(t, mailWait, "the sent confirmation counted", func() bool {
		text = a.metricsText(t)
		v, _ := metricValue(t, text, mailSeries(outbox.KindConfirmation, "sent"))
		return v == 1
	})
	for _, kind := range outbox.Kinds {
		for _, outcome := range outbox.Outcomes {
			want := 0.0
			if kind == outbox.KindConfirmation && (outcome == "sent" || outcome == "retried") {
				want = 1
			}
			if v, ok := metricValue(t, text, mailSeries(kind, outcome)); !ok || v != want {
				t.Errorf("%s = %v (present %v), want %v", mailSeries(kind, outcome), v, ok, want)
			}
		}
	}
	for _, series := range []string{"clinic_mail_queue_depth", "clinic_mail_oldest_waiting_seconds"} {
		if v, ok := metricValue(t, text, series); !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", series, v, ok)
		}
	}
	if strings.Contains(text, email) || strings.Contains(text, "Metrics Patient") || strings.Contains(text, c.ID.String()) {
		t.Error("/metrics names the patient or the clinic")
	}

	// Another instance on the same database, without workers and on a
	// queue of its own: its message waits.
	idle := newApp(t, withPool(a.Pool), withOptions(program.Options{Mail: program.MailOptions{Queue: ownQueue()}}))
	if err := idle.Deps.Outbox.RequestLookup(context.Background(), c.ID, email, "en"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	text = a.metricsText(t)
	if v, _ := metricValue(t, text, "clinic_mail_queue_depth"); v != 1 {
		t.Errorf("clinic_mail_queue_depth = %v, want 1", v)
	}
	if v, _ := metricValue(t, text, "clinic_mail_oldest_waiting_seconds"); v < 1 || v > 60 {
		t.Errorf("clinic_mail_oldest_waiting_seconds = %v, want about 1", v)
	}
}
