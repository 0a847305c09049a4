package privacy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/apperr"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// Erasures of one patient at once, the address spelled otherwise in
// each: one erases, the others find nothing left (NOT_FOUND), and there
// is one audit row and one ledger entry.
func TestEraseOnePatientAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{})
	ob, err := outbox.New(pool, outbox.Config{PublicURL: "http://clinic.test", Queue: "mail_" + strings.ReplaceAll(uuid.NewString(), "-", "")})
	if err != nil {
		t.Fatal(err)
	}
	bookings := booking.New(pool, booking.Options{TxHooks: []booking.TxHook{{Name: "e-mails", After: ob.Enqueue}}})
	ledgerFile := filepath.Join(t.TempDir(), "ledger")
	svc := privacy.New(privacy.Config{Pool: pool, Bookings: bookings, Outbox: ob, Ledger: privacy.NewLedger(ledgerFile, []byte(strings.Repeat("k", 32)))})
	local := "ida." + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	loc := testkit.Zone(t, c.Timezone)
	start := testkit.NextWeekday(time.Now(), loc, time.Wednesday, 9, 0)
	for i := range 4 {
		if _, err := bookings.Book(ctx, booking.BookRequest{AppointmentTypeID: c.Types[0].ID, SpecialistID: c.Specialists[i%2].ID,
			Start: start.Add(time.Duration(i/2) * time.Hour), Patient: booking.Patient{Name: "Ida Gleichzeitig", Email: local + "@example.org"},
			Actor: "staff:x"}); err != nil {
			t.Fatal(err)
		}
	}
	admin := testkit.StaffUser(t, pool, c.ID, staff.RoleAdmin)
	spellings := []string{local + "@example.org", strings.ToUpper(local) + "@EXAMPLE.org", local + "+x@example.org", " " + local + "@example.org"}
	counts := make([]privacy.Erased, len(spellings))
	errs := testkit.Race(len(spellings), func(i int) error {
		var err error
		counts[i], err = svc.Erase(ctx, admin, spellings[i], "")
		return err
	})
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
			if counts[i].Bookings != 4 || counts[i].Cancelled != 4 {
				t.Errorf("the erasure that ran: %v", counts[i])
			}
		case apperr.CodeOf(err) != apperr.CodeNotFound:
			t.Errorf("erasure %d: %v, want NOT_FOUND", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d erasures ran, want 1", won)
	}
	var audits int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE clinic_id = $1 AND action = 'patient.erase'`, c.ID).Scan(&audits); err != nil || audits != 1 {
		t.Errorf("%d audit rows (%v), want 1", audits, err)
	}
	if b, err := os.ReadFile(ledgerFile); err != nil || strings.Count(string(b), "\n") != 1 {
		t.Errorf("ledger %q (%v), want one entry", b, err)
	}
}
