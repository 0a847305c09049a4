package privacy_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/privacy"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// One view's record: the statement alone, naming 1, 32 and 200 bookings
// (a dialog, a day grid, a busy week).
//
//	go test -run '^$' -bench BenchmarkRecordAccess ./internal/privacy/
func BenchmarkRecordAccess(b *testing.B) {
	pool := testkit.DB(b)
	c := testkit.NewClinic(b, pool, testkit.ClinicOptions{Specialists: 1})
	u := testkit.StaffUser(b, pool, c.ID, staff.RoleStaff)
	q := db.New(pool)
	for _, n := range []int{1, 32, 200} {
		ids := make([]uuid.UUID, n)
		for i := range ids {
			ids[i] = uuid.New()
		}
		b.Run(strconv.Itoa(n)+"-bookings", func(b *testing.B) {
			for b.Loop() {
				if err := privacy.RecordAccess(context.Background(), q, privacy.Access{ClinicID: c.ID, StaffID: u.ID, Page: privacy.PageDayGrid, Bookings: ids}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
