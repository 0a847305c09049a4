package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
)

// runWith runs the command as main does, with the test's database and
// Redis and more settings.
func (c cli) runWith(env map[string]string, args ...string) (string, error) {
	c.t.Helper()
	all := map[string]string{"DATABASE_URL": c.pool.Config().ConnString()}
	for k, v := range env {
		all[k] = v
	}
	return runEnv(all, args...)
}

func TestPatientEraseCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	cl := testkit.NewClinic(t, c.pool, testkit.ClinicOptions{})
	email := "hanna." + strings.ReplaceAll(uuid.NewString(), "-", "")[:10] + "@example.org"
	p := booking.Patient{Name: "Hanna Zeitlos", Email: email, Phone: "+49 40 998877"}
	loc, _ := time.LoadLocation(cl.Timezone)
	bk, err := booking.NewService(c.pool).Book(context.Background(), booking.BookRequest{
		AppointmentTypeID: cl.Types[0].ID, SpecialistID: cl.Specialists[0].ID,
		Start: testkit.NextWeekday(time.Now(), loc, time.Tuesday, 10, 0), Patient: p, Actor: "staff:desk@example.org",
	})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ERASURE_LEDGER": filepath.Join(t.TempDir(), "erasures.ledger")}

	for _, args := range [][]string{
		{"patient", "erase", "--clinic", cl.Slug, "--email", email},
		{"patient", "erase", "--clinic", cl.Slug, "--yes"},
		{"patient", "erase", "--email", email, "--yes"},
		{"patient", "erase", "--clinic", "no-such-clinic-here", "--email", email, "--yes"},
		{"patient", "forget"},
	} {
		if out, err := c.runWith(env, args...); err == nil {
			t.Errorf("%v: no error:\n%s", args, out)
		}
	}
	out, err := c.runWith(env, "patient", "erase", "--clinic", cl.Slug, "--email", strings.ToUpper(email), "--yes")
	if err != nil {
		t.Fatalf("erase: %v\n%s", err, out)
	}
	if !strings.Contains(out, "1 bookings (1 future ones cancelled)") || strings.Contains(out, p.Name) || strings.Contains(out, p.Phone) {
		t.Errorf("the command printed:\n%s", out)
	}
	var name, status string
	var erased int
	err = c.pool.QueryRow(context.Background(), `SELECT patient_name, status,
		(SELECT count(*) FROM audit_log WHERE clinic_id = $2 AND action = 'patient.erase' AND actor = 'cli')
		FROM bookings WHERE id = $1`, bk.Booking.ID, cl.ID).Scan(&name, &status, &erased)
	if err != nil || name != "anonymised" || status != "cancelled" || erased != 1 {
		t.Errorf("after the command: %q %q, %d audit rows (%v)", name, status, erased, err)
	}
	ledger, err := os.ReadFile(env["ERASURE_LEDGER"])
	if err != nil || strings.Count(string(ledger), "\n") != 1 || strings.Contains(strings.ToLower(string(ledger)), "hanna") {
		t.Errorf("the ledger: %q (%v)", ledger, err)
	}
	if out, err := c.runWith(env, "patient", "erase", "--clinic", cl.Slug, "--email", email, "--yes"); err == nil {
		t.Errorf("erasing again found something:\n%s", out)
	}

	out, err = c.runWith(env, "patient", "erase", "--replay")
	if err != nil || !strings.Contains(out, ": 1 entries, 0 found something") {
		t.Errorf("replay: %v\n%s", err, out)
	}
}
