package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/testkit"
)

// The list calendar shows the closures over its days beside the
// overrides: a specialist's absence with its note on each day it covers,
// the clinic closed, and a public holiday; a calendar of another
// specialist leaves the first one's absence out.
func TestStaffListCalendarShowsClosures(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	admin := a.signIn(t, c.Admin)
	mon := c.Next(time.Monday, 9, 0)
	day := func(n int) time.Time {
		d := mon.AddDate(0, 0, n)
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	}
	q := db.New(a.Pool)
	ctx := context.Background()
	for _, p := range []db.ClosureInsertParams{
		{ClinicID: c.ID, SpecialistID: uuid.NullUUID{UUID: c.Specialists[0].ID, Valid: true}, FirstDay: day(0), LastDay: day(1), Note: "Training course"},
		{ClinicID: c.ID, FirstDay: day(2), LastDay: day(2), Note: "Staff outing"},
		{ClinicID: c.ID, FirstDay: day(3), LastDay: day(3), Holiday: true, Note: "Founders' day"},
	} {
		if _, err := q.ClosureInsert(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	date := func(n int) string { return mon.AddDate(0, 0, n).Format(time.DateOnly) }
	week := admin.Get("/staff?date=" + date(0)).Want(http.StatusOK)
	for n, want := range map[int]string{0: "Training course", 1: "Training course", 2: "Clinic closed (Staff outing)", 3: "Public holiday (Founders' day)"} {
		if got := week.Text(`section#cal-` + date(n)); !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", date(n), got, want)
		}
	}
	if got := week.Text(`section#cal-` + date(4)); strings.Contains(got, "closed") || strings.Contains(got, "holiday") {
		t.Errorf("%s, open: %q", date(4), got)
	}
	other := admin.Get("/staff?date=" + date(0) + "&specialist=" + c.Specialists[1].ID.String()).Want(http.StatusOK)
	if got := other.Text(`section#cal-` + date(0)); strings.Contains(got, "Training course") {
		t.Errorf("another specialist's calendar shows the first one's absence: %q", got)
	}
	if got := other.Text(`section#cal-` + date(2)); !strings.Contains(got, "Staff outing") {
		t.Errorf("another specialist's calendar lacks the clinic's closure: %q", got)
	}
}
