package privacy_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// The retention run deletes the clinic's records of who looked that are
// older than its retention period for patient details (12 months by
// default), keeps the younger ones, reports the count, and a second run
// deletes nothing.
func TestRetentionDeletesOldAccessRecords(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	ctx := context.Background()
	c := testkit.NewClinic(t, pool, testkit.ClinicOptions{Specialists: 1})
	u := testkit.StaffUser(t, pool, c.ID, staff.RoleStaff)
	q := db.New(pool)
	for _, page := range []string{privacy.PageSearch, privacy.PageBooking} {
		if err := privacy.RecordAccess(ctx, q, privacy.Access{ClinicID: c.ID, StaffID: u.ID, Page: page, Bookings: []uuid.UUID{uuid.New()}}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if _, err := pool.Exec(ctx, `UPDATE access_records SET at = $2 WHERE staff_id = $1 AND page = 'search'`, u.ID, now.AddDate(-1, 0, -2)); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE access_records SET at = $2 WHERE staff_id = $1 AND page = 'booking'`, u.ID, now.AddDate(0, -11, 0)); err != nil {
		t.Fatal(err)
	}
	r := privacy.NewRetention(pool, privacy.RetentionConfig{Now: func() time.Time { return now }})
	rep, err := r.Run(ctx, c.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Clinics) != 1 || rep.Clinics[0].Access != 1 {
		t.Fatalf("report %+v, want 1 access record deleted", rep.Clinics)
	}
	if got := records(t, pool, u.ID); len(got) != 1 || got[0].Page != "booking" {
		t.Errorf("left %+v, want the 11-month-old record", got)
	}
	again, err := r.Run(ctx, c.Slug)
	if err != nil || again.Clinics[0].Access != 0 {
		t.Errorf("a second run deleted %d, %v", again.Clinics[0].Access, err)
	}
}
