package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/identity"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// `clinic patient export` prints the patient's JSON on stdout, and on
// stderr only counts; the export is audited as the command line's, and
// another patient of the clinic is not in it.
func TestPatientExport(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	cl := testkit.NewClinic(t, c.pool, testkit.ClinicOptions{})
	tag := strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	mine, theirs := "cli-mine-"+tag+"@example.org", "cli-theirs-"+tag+"@example.org"
	start := testkit.NextWeekday(time.Now(), time.UTC, time.Tuesday, 9, 0)
	for i, p := range []struct{ name, email, phone string }{{"Mina Cli", mine, "+49 30 1111"}, {"Theo Other", theirs, "+49 30 2222"}} {
		if _, err := c.pool.Exec(ctx, `INSERT INTO bookings (clinic_id, appointment_type_id, specialist_id, slot_start, slot_end,
			patient_name, patient_email, patient_phone, patient_email_key, patient_phone_key)
			VALUES ($1, $2, $3, $4::timestamptz, $4::timestamptz + interval '30 minutes', $5, $6, $7, $8, $9)`,
			cl.ID, cl.Types[0].ID, cl.Specialists[i].ID, start, p.name, p.email, p.phone,
			identity.EmailKey(p.email), identity.PhoneKey(p.phone, "DE")); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"DATABASE_URL": c.pool.Config().ConnString()}
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"patient", "export", "--clinic", cl.Slug, "--email", strings.ToUpper(mine)},
		func(k string) string { return env[k] }, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var x privacy.Export
	if err := json.Unmarshal(stdout.Bytes(), &x); err != nil {
		t.Fatalf("stdout is no JSON: %v\n%s", err, stdout.String())
	}
	if len(x.Bookings) != 1 || x.Bookings[0].Patient.Name != "Mina Cli" || x.ExportedBy.Kind != staff.ActorCLI {
		t.Errorf("the export: %+v by %+v", x.Bookings, x.ExportedBy)
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, "Theo") || strings.Contains(out, theirs) {
		t.Errorf("the other patient is printed:\n%s", out)
	}
	if s := stderr.String(); !strings.Contains(s, "1 bookings") || strings.Contains(s, "Mina") || strings.Contains(strings.ToLower(s), mine) {
		t.Errorf("stderr says %q, want counts and no patient details", s)
	}
	rows := testkit.AuditRows(t, c.pool, "export", x.ID.String())
	if len(rows) != 1 || rows[0].Actor != staff.ActorCLI || rows[0].Action != privacy.ActionExport {
		t.Errorf("the export's audit rows: %+v", rows)
	}

	for name, args := range map[string][]string{
		"NoClinic":      {"--email", mine},
		"UnknownClinic": {"--clinic", "not-" + cl.Slug, "--email", mine},
		"NoPatient":     {"--clinic", cl.Slug},
		"Nobody":        {"--clinic", cl.Slug, "--email", "nobody-" + mine},
		"BadPhone":      {"--clinic", cl.Slug, "--phone", "none"},
	} {
		stdout.Reset()
		err := run(ctx, append([]string{"patient", "export"}, args...), func(k string) string { return env[k] }, &stdout, &stderr)
		if err == nil || stdout.Len() != 0 {
			t.Errorf("%s: %v, printed %q; want an error and nothing on stdout", name, err, stdout.String())
		}
	}
	var n int64
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE clinic_id = $1 AND action = $2`, cl.ID, privacy.ActionExport).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d export audit rows after the refusals (%v), want 1", n, err)
	}
}
