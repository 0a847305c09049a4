package web_test

// Tests of the day grid and the week view as HTML: bookings placed by
// their rows and columns, free times as the desk's buttons, holds shown
// as held (never by whom), the rows of the days the clocks change, and
// the refusals of a bad date or another clinic's specialist.

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

// gridBlock is a booking block of the grid as its data attributes place it.
type gridBlock struct{ row, span, col string }

func blockOf(doc *goquery.Document, bookingID uuid.UUID) (gridBlock, *goquery.Selection) {
	s := doc.Find(`button.block.booking[data-booking="` + bookingID.String() + `"]`)
	return gridBlock{s.AttrOr("data-gr", ""), s.AttrOr("data-gs", ""), s.AttrOr("data-gc", "")}, s
}

// outer is s's HTML, for a failure message.
func outer(s *goquery.Selection) string {
	h, _ := goquery.OuterHtml(s)
	return h
}

// gridRows are the time column's labels.
func gridRows(doc *goquery.Document) []string {
	return doc.Find(".grid-time").Map(func(_ int, s *goquery.Selection) string { return text(s) })
}

func TestStaffDayGridPlacesBookings(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	sp1, sp2 := c.Specialists[0], c.Specialists[1]
	day := c.Next(time.Wednesday, 9, 0)
	date := day.Format(time.DateOnly)
	b1 := a.bookDirect(t, c, c.Type0(), sp1.ID, day, "Ada Patient")
	b2 := a.bookDirect(t, c, c.Type0(), sp1.ID, day.Add(2*time.Hour), "Ben Patient")
	b3 := a.bookDirect(t, c, c.Type0(), sp2.ID, day, "Cleo Patient")
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))

	doc := rec.Get("/staff/day?date=" + date).Want(http.StatusOK).Doc()
	rows := gridRows(doc)
	if len(rows) != 16 || rows[0] != "09:00" || rows[15] != "16:30" {
		t.Fatalf("rows %v, want 16 from 09:00 to 16:30", rows)
	}
	for _, w := range []struct {
		id   uuid.UUID
		want gridBlock
		name string
	}{
		{b1.Booking.ID, gridBlock{"2", "1", "2"}, "Ada Patient"},
		{b2.Booking.ID, gridBlock{"6", "1", "2"}, "Ben Patient"},
		{b3.Booking.ID, gridBlock{"2", "1", "3"}, "Cleo Patient"},
	} {
		got, s := blockOf(doc, w.id)
		if got != w.want {
			t.Errorf("%s's block at %+v, want %+v", w.name, got, w.want)
		}
		if s.AttrOr("hx-get", "") != "/staff/bookings/"+w.id.String()+"/dialog" || s.AttrOr("hx-target", "") != "#desk-dialog" {
			t.Errorf("%s's block opens %q into %q", w.name, s.AttrOr("hx-get", ""), s.AttrOr("hx-target", ""))
		}
		if label := s.AttrOr("aria-label", ""); !strings.Contains(label, w.name) || !strings.Contains(label, c.Type0().Name) || !strings.Contains(label, "Booked") {
			t.Errorf("%s's block is named %q", w.name, label)
		}
	}
	if h := doc.Find(`.grid-head[data-gc="2"]`).Text(); !strings.Contains(h, sp1.Name) {
		t.Errorf("column 2 is headed %q, want %s", h, sp1.Name)
	}
	start := day.Add(30 * time.Minute)
	free := doc.Find(`button.cell.free[data-specialist="` + sp1.ID.String() + `"][data-start="` + rfc(start) + `"]`)
	if free.Length() != 1 {
		t.Fatalf("no free button for 09:30 with %s", sp1.Name)
	}
	if free.AttrOr("hx-post", "") != "/staff/desk/new?specialist="+sp1.ID.String()+"&start="+rfc(start) ||
		free.AttrOr("hx-target", "") != "#desk-dialog" || free.AttrOr("hx-swap", "") != "innerHTML" ||
		free.AttrOr("aria-label", "") != "Book 09:30 with "+sp1.Name || free.AttrOr("data-gr", "") != "3" {
		t.Errorf("the free button: %s", clip(outer(free), 300))
	}
	if n := doc.Find(`button.cell.free[data-start="` + rfc(day) + `"]`).Length(); n != 0 {
		t.Errorf("09:00 is booked for both, yet %d free buttons", n)
	}
	if dlg := doc.Find(`div#desk-dialog`); dlg.Length() != 1 || strings.TrimSpace(dlg.Text()) != "" {
		t.Error("the page lacks the empty #desk-dialog container")
	}
	if doc.Find(`[sse-connect="/staff/day/live?date=`+date+`"]`).Length() != 1 {
		t.Error("the grid is not connected to its stream")
	}

	only := rec.Get("/staff/day?date=" + date + "&specialists=" + sp2.ID.String()).Want(http.StatusOK).Doc()
	if n := only.Find(`[data-testid="grid-col"]`).Length(); n != 1 {
		t.Errorf("%d columns with one specialist chosen", n)
	}
	if got, _ := blockOf(only, b3.Booking.ID); got != (gridBlock{"2", "1", "2"}) {
		t.Errorf("Cleo's block alone at %+v", got)
	}

	week := rec.Get("/staff/week?specialist=" + sp1.ID.String() + "&date=" + date).Want(http.StatusOK).Doc()
	if n := week.Find(`[data-testid="grid-col"]`).Length(); n != 7 {
		t.Fatalf("the week has %d columns", n)
	}
	// Wednesday is the week's third day: column 4.
	if got, _ := blockOf(week, b2.Booking.ID); got != (gridBlock{"6", "1", "4"}) {
		t.Errorf("Ben's block on the week at %+v", got)
	}
	if n := week.Find(`button.block.booking`).Length(); n != 2 {
		t.Errorf("the week of %s shows %d bookings, want 2", sp1.Name, n)
	}
}

// A live hold is a block "held online" with its time left, never naming
// who holds it; released, it is gone.
func TestStaffDayGridHold(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0]
	start := c.Next(time.Thursday, 10, 0)
	admin := a.signIn(t, c.Admin)
	client := clientID()
	h := a.holdOf(t, c.Type0().ID, sp.ID, start, client)
	page := admin.Get("/staff/day?date=" + start.Format(time.DateOnly)).Want(http.StatusOK)
	held := page.Doc().Find(`[data-testid="grid-held"]`)
	if held.Length() != 1 || held.AttrOr("data-gr", "") != "4" || !strings.Contains(text(held), "Held online") || !strings.Contains(text(held), "min left") {
		t.Fatalf("the hold: %s", clip(outer(held), 300))
	}
	if strings.Contains(page.Body, client) {
		t.Error("the page names who holds the time")
	}
	a.release(t, h, client)
	if n := admin.Get("/staff/day?date=" + start.Format(time.DateOnly)).Doc().Find(`[data-testid="grid-held"]`).Length(); n != 0 {
		t.Errorf("%d holds shown after the release", n)
	}
}

// The days Berlin's clocks change: on 2027-03-28 a specialist working
// 00:00-06:00 has no rows from 02:00 to 02:59; on 2027-10-31 the rows
// from 02:00 to 02:45 come twice.
func TestStaffDayGridDSTRows(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
		{Name: "Quick", DurationMin: 15, SlotStepMin: 15, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
		{Name: "Long", DurationMin: 60, SlotStepMin: 60, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}})
	sp := c.Specialists[0]
	for _, d := range []time.Time{time.Date(2027, 3, 28, 0, 0, 0, 0, time.UTC), time.Date(2027, 10, 31, 0, 0, 0, 0, time.UTC)} {
		if _, err := db.New(a.Pool).OverrideInsert(context.Background(), db.OverrideInsertParams{
			ClinicID: c.ID, SpecialistID: sp.ID, Day: d, StartMin: 0, EndMin: 6 * 60, Note: "Night shift",
		}); err != nil {
			t.Fatal(err)
		}
	}
	admin := a.signIn(t, c.Admin)

	spring := admin.Get("/staff/day?date=2027-03-28").Want(http.StatusOK).Doc()
	rows := gridRows(spring)
	if len(rows) != 20 || rows[7] != "01:45" || rows[8] != "03:00" {
		t.Errorf("2027-03-28 rows %v, want 20 without 02:00-02:45", rows)
	}
	if got := text(spring.Find(`.grid-head .grid-note`)); got != "Changed hours: Night shift" {
		t.Errorf("the column's note reads %q", got)
	}

	autumn := gridRows(admin.Get("/staff/day?date=2027-10-31").Want(http.StatusOK).Doc())
	if len(autumn) != 28 {
		t.Errorf("2027-10-31 has %d rows, want 28: %v", len(autumn), autumn)
	}
	for _, l := range []string{"02:00", "02:15", "02:30", "02:45"} {
		if n := len(slices.DeleteFunc(slices.Clone(autumn), func(s string) bool { return s != l })); n != 2 {
			t.Errorf("2027-10-31 shows %s %d times, want 2", l, n)
		}
	}

	// The week of 2027-03-28: Sunday (column 8) has 02:00-02:59 greyed,
	// as a time the clock skips.
	week := admin.Get("/staff/week?date=2027-03-28&specialist=" + sp.ID.String()).Want(http.StatusOK).Doc()
	wrows := gridRows(week)
	i := slices.Index(wrows, "02:00")
	if i < 0 || wrows[0] != "00:00" {
		t.Fatalf("week rows %v", wrows)
	}
	gap := week.Find(`#col-2027-03-28 .cell.closed`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.AttrOr("data-gr", "") == strconv.Itoa(i+2)
	})
	if gap.Length() != 1 || gap.AttrOr("data-gs", "") != "4" {
		t.Errorf("Sunday's 02:00-02:59 is not one greyed run of 4 rows: %s", clip(outer(gap), 300))
	}
}

func TestStaffDayGridRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	admin := a.signIn(t, c.Admin)
	for _, p := range []string{"/staff/day?date=2027-02-30", "/staff/week?date=tomorrow", "/staff/day/live?date=x"} {
		r := admin.Get(p)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "date") {
			t.Errorf("%s: %d %s", p, r.Status, clip(r.Body, 300))
		}
	}
	osp := url.QueryEscape(other.Specialists[0].ID.String())
	for _, p := range []string{"/staff/day?specialists=" + osp, "/staff/day?specialists=" + c.Specialists[0].ID.String() + "," + osp,
		"/staff/week?specialist=" + osp, "/staff/week/live?specialist=" + osp, "/staff/day?specialists=nonsense"} {
		if r := admin.Get(p); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.Status)
		}
	}
}
