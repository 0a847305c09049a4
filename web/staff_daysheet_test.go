package web_test

// The day sheet: one section per specialist (every active one, with their
// bookings of the day in order or "No bookings."), print styles that drop
// the header and start each specialist on a new page, and a Print button.

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
)

func TestDaySheetPerSpecialist(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 3})
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp0, sp1, sp2 := c.Specialists[0].ID, c.Specialists[1].ID, c.Specialists[2].ID
	if _, err := a.Pool.Exec(t.Context(), `UPDATE specialists SET active = false WHERE id = $1`, sp2); err != nil {
		t.Fatal(err)
	}
	day := c.Next(time.Wednesday, 0, 0)
	date := day.Format(time.DateOnly)
	late := a.bookAs(t, c, c.Type0(), sp0, c.Next(time.Wednesday, 14, 0), booking.Patient{Name: "Late Patient", Email: "late@example.org", Phone: "030 111222"}).Booking
	early := a.bookAs(t, c, c.Type0(), sp0, c.Next(time.Wednesday, 9, 0), booking.Patient{Name: "Early Patient", Email: "early@example.org", Phone: "030 333444"}).Booking
	a.bookAs(t, c, c.Type0(), sp1, c.Next(time.Thursday, 9, 0), booking.Patient{Name: "Thursday Patient", Email: "thu@example.org"})
	a.bookAs(t, other, other.Type0(), other.Specialists[0].ID, other.Next(time.Wednesday, 9, 0), booking.Patient{Name: "Their Patient", Email: "x@example.org"})
	if _, err := a.Pool.Exec(t.Context(), `UPDATE bookings SET attendance = 'arrived' WHERE id = $1`, early.ID); err != nil {
		t.Fatal(err)
	}

	desk := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))
	res := desk.Get("/staff/day/sheet?date=" + date).Want(http.StatusOK)
	doc := res.Doc()
	sections := doc.Find(`section[data-testid="sheet-specialist"]`)
	var ids []string
	sections.Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-specialist", "")) })
	if strings.Join(ids, ",") != sp0.String()+","+sp1.String() {
		t.Fatalf("sections %v, want the two active specialists in order", ids)
	}
	if strings.Contains(res.Body, "Thursday Patient") || strings.Contains(res.Body, "Their Patient") {
		t.Error("the sheet shows another day's or another clinic's booking")
	}
	first := sections.Eq(0)
	if !strings.Contains(text(first.Find("h2")), c.Specialists[0].Name) {
		t.Errorf("the first section's heading: %q", text(first.Find("h2")))
	}
	rows := first.Find(`tr[data-testid="sheet-row"]`)
	if rows.Length() != 2 || rows.Eq(0).AttrOr("data-booking", "") != early.ID.String() || rows.Eq(1).AttrOr("data-booking", "") != late.ID.String() {
		t.Fatalf("the first specialist's rows: %s", text(rows))
	}
	if got := cells(rows.Eq(0)); got != "09:00–09:30 Early Patient 030 333444 "+c.Type0().Name+" Arrived" {
		t.Errorf("the first row reads %q", got)
	}
	if got := cells(rows.Eq(1)); !strings.HasSuffix(got, " Booked") || !strings.Contains(got, "030 111222") {
		t.Errorf("the second row reads %q", got)
	}
	if text(sections.Eq(1).Find(`[data-testid="sheet-empty"]`)) != "No bookings." {
		t.Errorf("the second section: %q", text(sections.Eq(1)))
	}
	if b := doc.Find("button[data-print]"); b.Length() != 1 || text(b) != "Print" || b.AttrOr("hidden", "x") == "x" {
		t.Error("no Print button left for the script to show")
	}
	checkPrintStyles(t, a, doc)
	desk.Get("/staff/day/sheet?date=yesterday").Want(http.StatusBadRequest)
	desk.Get("/staff/day/sheet").Want(http.StatusOK)
}

// cells is a table row's cells' text, one space apart.
func cells(tr *goquery.Selection) string {
	var out []string
	tr.Find("td").Each(func(_ int, td *goquery.Selection) { out = append(out, text(td)) })
	return strings.Join(out, " ")
}

// checkPrintStyles fetches the page's style sheet and script: the print
// rules hide the staff header and break the page after each specialist,
// and the script prints on the button.
func checkPrintStyles(t *testing.T, a *app, doc *goquery.Document) {
	t.Helper()
	get := func(sel, attr string) string {
		href, ok := doc.Find(sel).Attr(attr)
		if !ok {
			t.Fatalf("the page has no %s", sel)
		}
		res, err := http.Get(a.URL + href)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	css := get(`link[rel="stylesheet"]`, "href")
	_, rules, ok := strings.Cut(css, "@media print")
	if !ok {
		t.Fatal("the style sheet has no print rules")
	}
	rules, _, _ = strings.Cut(rules, "\n}\n")
	for _, want := range []string{".staff-head", "display: none", ".sheet-specialist { break-after: page"} {
		if !strings.Contains(rules, want) {
			t.Errorf("the print rules lack %q:\n%s", want, rules)
		}
	}
	if js := get(`script[src*="app"]`, "src"); !strings.Contains(js, "[data-print]") || !strings.Contains(js, "window.print()") {
		t.Error("app.js does not print on the Print button")
	}
}
