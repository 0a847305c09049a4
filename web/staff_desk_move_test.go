package web_test

// Tests of the move dialog: it lists only the free times where the
// booking's type fits (its own time counted free, its current start left
// out), its specialist first, and a button moves the booking there.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/staff"
)

// moveButton is one time the move dialog offers.
type moveButton struct {
	Specialist, Start, URL string
	Vals                   map[string]string
}

// moveButtons are the dialog's time buttons, in order.
func moveButtons(t *testing.T, doc *goquery.Document) []moveButton {
	t.Helper()
	var out []moveButton
	doc.Find(`button.move-time`).Each(func(_ int, b *goquery.Selection) {
		var mb moveButton
		mb.Specialist, _ = b.Attr("data-specialist")
		mb.Start, _ = b.Attr("data-start")
		mb.URL, _ = b.Attr("hx-post")
		vals, _ := b.Attr("hx-vals")
		if err := json.Unmarshal([]byte(vals), &mb.Vals); err != nil {
			t.Fatalf("hx-vals %q: %v", vals, err)
		}
		if label, _ := b.Attr("aria-label"); !strings.HasPrefix(label, "Move to ") {
			t.Errorf("a time button is labelled %q", label)
		}
		out = append(out, mb)
	})
	return out
}

func TestMoveListsFittingTimesAndMovesByAButton(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp, other := c.Specialists[0], c.Specialists[1]
	checkup := c.Types[1] // 60 minutes on a 30-minute step
	bk := a.bookAs(t, c, checkup, sp.ID, c.Next(time.Wednesday, 10, 0), booking.Patient{Name: "Moving Patient", Email: "moving@example.org"}).Booking
	a.bookDirect(t, c, c.Types[0], sp.ID, c.Next(time.Wednesday, 12, 0), "Next Patient")
	rec := a.signIn(t, a.newAccount(t, c.ID, staff.RoleReception))

	r := rec.do(http.MethodGet, "/staff/bookings/"+bk.ID.String()+"/move", nil, http.Header{"Hx-Request": {"true"}}).Want(http.StatusOK)
	doc := r.Doc()
	if title := text(doc.Find("#move-title")); !strings.Contains(title, "Moving Patient") || !strings.Contains(title, "Check-up") {
		t.Errorf("the dialog's title reads %q", title)
	}
	var groups []string
	doc.Find(`[data-testid="move-group"]`).Each(func(_ int, g *goquery.Selection) {
		id, _ := g.Attr("data-specialist")
		groups = append(groups, id)
	})
	if !slices.Equal(groups, []string{sp.ID.String(), other.ID.String()}) {
		t.Errorf("groups %v, want the booking's specialist first, then the other", groups)
	}
	day := bk.Start.In(c.Loc).Format("2006-01-02")
	mine := map[string]bool{}
	for _, b := range moveButtons(t, doc) {
		if b.Specialist == sp.ID.String() && strings.HasPrefix(b.Start, day) {
			mine[b.Start[11:]] = true
		}
		if b.Vals["start"] != b.Start || b.Vals["specialist"] != b.Specialist {
			t.Errorf("button %+v posts other values", b)
		}
	}
	// 09:00-16:00 starts fit an hour; 10:00 is where it is; an hour from
	// 11:30 or 12:00 meets the 12:00 booking, from 11:00 it ends at 12:00.
	for hm, want := range map[string]bool{"09:00": true, "09:30": true, "10:00": false, "10:30": true, "11:00": true, "11:30": false, "12:00": false, "12:30": true, "16:00": true, "16:30": false} {
		if mine[hm] != want {
			t.Errorf("%s offered %v, want %v (offered: %v)", hm, mine[hm], want, mine)
		}
	}

	// The 11:00 button, as htmx sends it: the form with the button's values.
	var pick moveButton
	for _, b := range moveButtons(t, doc) {
		if b.Specialist == sp.ID.String() && b.Start == day+"T11:00" {
			pick = b
		}
	}
	f := r.Form(`[data-testid="move-form"]`).Values
	for k, v := range pick.Vals {
		f.Set(k, v)
	}
	res := rec.HXPost(pick.URL, withCSRF(rec, f)).Want(http.StatusOK)
	if loc := res.Header.Get("HX-Redirect"); !strings.Contains(loc, "date="+day) {
		t.Errorf("after the move htmx is sent to %q", loc)
	}
	moved := a.booking(t, bk.ID)
	if moved.Status != booking.StatusRescheduled {
		t.Fatalf("the booking is %s after the move", moved.Status)
	}
	r = rec.do(http.MethodGet, "/staff/bookings/"+bk.ID.String()+"/move", nil, http.Header{"Hx-Request": {"true"}}).Want(http.StatusConflict)
	if msg := r.Text(`[data-testid="move-error"]`); msg == "" {
		t.Error("the moved booking's dialog does not say it cannot be moved")
	}
	if strings.Contains(r.Body, "move-time") {
		t.Error("a moved booking offers times")
	}
}

// A button of another specialist moves the booking to that specialist.
func TestMoveToAnotherSpecialist(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	sp, other := c.Specialists[0], c.Specialists[1]
	bk := a.bookAs(t, c, c.Types[0], sp.ID, c.Next(time.Thursday, 10, 0), booking.Patient{Name: "Switching Patient", Email: "switch@example.org"}).Booking
	admin := a.signIn(t, c.Admin)
	r := admin.Get("/staff/bookings/" + bk.ID.String() + "/move").Want(http.StatusOK)
	var pick moveButton
	for _, b := range moveButtons(t, r.Doc()) {
		if b.Specialist == other.ID.String() && pick.URL == "" {
			pick = b
		}
	}
	if pick.URL == "" {
		t.Fatal("no time of the other specialist is offered")
	}
	f := r.Form(`[data-testid="move-form"]`).Values
	for k, v := range pick.Vals {
		f.Set(k, v)
	}
	admin.HXPost(pick.URL, withCSRF(admin, f)).Want(http.StatusOK)
	rows := a.bookingsOf(t, c, bk.Start.Add(-24*time.Hour), bk.Start.Add(10*24*time.Hour))
	if len(rows) != 1 || rows[0].SpecialistID != other.ID || rows[0].SlotStart.In(c.Loc).Format("2006-01-02T15:04") != pick.Start {
		t.Fatalf("after the move: %+v, want one booking with %s at %s", rows, other.Name, pick.Start)
	}
}
