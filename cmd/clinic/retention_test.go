package main

import (
	"context"
	"strings"
	"testing"

	"github.com/clinic/booking/internal/testkit"
)

func TestRetentionRunCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	clinic := testkit.NewClinic(t, c.pool, testkit.ClinicOptions{})
	// Two bookings that ended 13 months ago, one 11 months ago; the
	// clinic keeps details for 12.
	_, err := c.pool.Exec(context.Background(), `INSERT INTO bookings
		(clinic_id, appointment_type_id, specialist_id, slot_start, slot_end, status, patient_name, patient_email)
		SELECT $1, $2, $3, s, s + interval '30 minutes', 'confirmed', 'Olga Old', 'olga@example.org'
		FROM unnest(ARRAY[now() - interval '13 months', now() - interval '13 months' + interval '1 hour', now() - interval '11 months']) AS s`,
		clinic.ID, clinic.Types[0].ID, clinic.Specialists[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.run("retention", "run", "--clinic", clinic.Slug)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, clinic.Slug+": anonymised 2 bookings") || strings.Contains(out, "Olga") || strings.Contains(out, "server:") {
		t.Errorf("the first run printed:\n%s", out)
	}
	if out, err = c.run("retention", "run", "--clinic", clinic.Slug); err != nil || !strings.Contains(out, clinic.Slug+": nothing past its periods") {
		t.Errorf("the second run printed (%v):\n%s", err, out)
	}
	if out, err = c.run("retention", "run", "--clinic", "no-such-clinic"); err == nil || !strings.HasPrefix(err.Error(), "--clinic:") {
		t.Errorf("an unknown clinic: %v\n%s", err, out)
	}
	if _, err = c.run("retention", "forget"); err == nil {
		t.Error("retention forget: no error")
	}
}

func TestClinicCreateTakesRetentionFromConfig(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	slug := uniqueSlug()
	env := map[string]string{"DATABASE_URL": c.pool.Config().ConnString(), "RETENTION_MONTHS": "6", "MAIL_RETENTION_DAYS": "9"}
	var out strings.Builder
	err := run(context.Background(), []string{"clinic", "create", "--slug", slug, "--name", "Kurz", "--timezone", "Europe/Berlin",
		"--admin-email", slug + "@example.org"}, func(k string) string { return env[k] }, &out, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var months, days int
	if err := c.pool.QueryRow(context.Background(), `SELECT retention_months, mail_retention_days FROM clinics WHERE slug = $1`, slug).Scan(&months, &days); err != nil {
		t.Fatal(err)
	}
	if months != 6 || days != 9 {
		t.Errorf("the new clinic keeps details %d months, e-mails %d days; want the server's 6 and 9", months, days)
	}
}
