package web_test

// Tests of offering a waiting patient a time by hand: the page lists the
// free times of their type on one of their days, per specialist; a time
// chosen there is offered (the offer stands, its e-mail is written, the
// audit names it); a time outside their days, a booked one or a
// specialist not of the clinic is refused naming why.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/staff"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// wlOfferPath is the page of times to offer the entry.
func wlOfferPath(e waitlist.Entry) string { return "/staff/waitlist/" + e.ID.String() + "/offer" }

// wlTimes are the times a specialist's group of the offer page lists, as
// the buttons send them.
func wlTimes(r *response, sp uuid.UUID) []string {
	return r.Doc().Find(`[data-testid="wl-group"][data-specialist="` + sp.String() + `"] [data-testid="wl-time"]`).
		Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") })
}

// wlRefused posts an offer of start with specialist sp (as given) and
// wants the page of times again with status and the error naming field.
func wlRefused(t *testing.T, cl *client, e waitlist.Entry, sp, start string, status int, field string) *response {
	t.Helper()
	r := cl.Post(wlOfferPath(e), url.Values{"specialist": {sp}, "start": {start}})
	if r.Status != status {
		t.Fatalf("offer %s with %s: %d, want %d\n%s", start, sp, r.Status, status, clip(r.Body, 1500))
	}
	if got := r.Doc().Find(`[data-testid="wl-error"]`).AttrOr("data-field", ""); got != field || r.Text(`[data-testid="wl-error"]`) == "" {
		t.Errorf("offer %s with %s: the error %q names %q, want %q", start, sp, r.Text(`[data-testid="wl-error"]`), got, field)
	}
	return r
}

// The page lists the entry's type's free times on its day, per active
// specialist; one of them, offered, stands as an offer to the entry, with
// its e-mail and an audit row; the list and the page then say a time is
// offered, and another cannot be offered until it is answered.
func TestStaffWaitlistOfferByHand(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{Mail: program.MailOptions{Workers: 2, Retry: fastRetry, Queue: ownQueue()}}))
	c := a.deskClinic(t)
	sp := c.Specialists[1]
	wed := c.Next(time.Wednesday, 9, 0)
	e := a.wlJoin(t, c, c.Types[0], wed, wed, "Jana Waiting")
	acc := a.newAccount(t, c.ID, staff.RoleReception)
	cl := a.signIn(t, acc)

	page := cl.Get(wlOfferPath(e)).Want(http.StatusOK)
	if n := page.Doc().Find(`[data-testid="wl-group"]`).Length(); n != len(c.Specialists) {
		t.Fatalf("the page has %d specialists' groups, want %d", n, len(c.Specialists))
	}
	times := wlTimes(page, sp.ID)
	if len(times) == 0 {
		t.Fatalf("no free time of %s on %s:\n%s", sp.Name, wed.Format(time.DateOnly), clip(page.Body, 3000))
	}
	for _, s := range times {
		if at, err := time.Parse(time.RFC3339, s); err != nil || at.In(c.Loc).Format(time.DateOnly) != wed.Format(time.DateOnly) {
			t.Fatalf("a time of the page is %q, not on the entry's day", s)
		}
	}
	f := page.Form(`[data-testid="wl-group"][data-specialist="` + sp.ID.String() + `"] form`)
	f.Values.Set("start", times[0])
	start, _ := time.Parse(time.RFC3339, times[0])
	cl.Post(f.Action, f.Values).WantRedirect("/staff/waitlist")
	list := cl.Get("/staff/waitlist").Want(http.StatusOK)
	if n := list.Text(`[data-testid="notice"]`); !strings.Contains(n, "Offered "+start.In(c.Loc).Format("Mon 2 Jan 2006 15:04")) || !strings.Contains(n, sp.Name) {
		t.Errorf("the notice reads %q", n)
	}

	var offerStart time.Time
	testkit.WaitFor(t, mailWait, "the offer to stand", func() bool {
		err := a.Pool.QueryRow(context.Background(), `SELECT op.slot_start FROM waitlist_offers o
			JOIN waitlist_openings op ON op.id = o.opening_id WHERE o.entry_id = $1 AND o.state = 'open'`, e.ID).Scan(&offerStart)
		return err == nil
	})
	if !offerStart.Equal(start) {
		t.Errorf("the offer is of %s, want %s", offerStart, start)
	}
	var mails int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE entry_id = $1 AND kind = 'waitlist_offer' AND offer_id IS NOT NULL`, e.ID).Scan(&mails); err != nil || mails != 1 {
		t.Errorf("%d offer e-mails written (%v), want 1", mails, err)
	}
	row := a.wlAudit(t, c.ID, e.ID, "waitlist.offer")
	var after map[string]any
	if err := json.Unmarshal(row.After, &after); err != nil || row.Actor != acc.Actor() || after["specialistId"] != sp.ID.String() {
		t.Errorf("the audit row: %s by %s (%v)", row.After, row.Actor, err)
	}
	wantNoPatientData(t, row, e)

	list = cl.Get("/staff/waitlist").Want(http.StatusOK)
	rowSel := list.Doc().Find(`[data-entry="` + e.ID.String() + `"]`)
	if st := text(rowSel.Find(`[data-testid="wl-state"]`)); !strings.HasPrefix(st, "Offered") || rowSel.Find(`[data-testid="wl-offer"]`).Length() != 0 {
		t.Errorf("the offered entry's row reads %q with %d offer links", st, rowSel.Find(`[data-testid="wl-offer"]`).Length())
	}
	again := cl.Get(wlOfferPath(e)).Want(http.StatusOK)
	if msg := again.Text(`[data-testid="wl-offered"]`); !strings.Contains(msg, "already") || len(wlTimes(again, sp.ID)) != 0 {
		t.Errorf("the page of an entry with an offer reads %q", msg)
	}
	second := cl.Post(wlOfferPath(e), url.Values{"specialist": {sp.ID.String()}, "start": {times[len(times)-1]}})
	if second.Status != http.StatusConflict || second.Text(`[data-testid="wl-offered"]`) == "" {
		t.Errorf("a second offer: %d %q", second.Status, second.Text(`[data-testid="wl-error"]`))
	}
}

// A time outside the entry's days, a booked time, a specialist not of the
// clinic and a start that does not read are refused on the page of times,
// naming the field, and offer nothing.
func TestStaffWaitlistOfferRefusals(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.deskClinic(t)
	other := a.clinic(t, testkit.ClinicOptions{Specialists: 1})
	sp := c.Specialists[0]
	wed := c.Next(time.Wednesday, 9, 0)
	e := a.wlJoin(t, c, c.Types[0], wed, wed, "Kai Waiting")
	booked := wed.Add(2 * time.Hour)
	a.bookDirect(t, c, c.Type0(), sp.ID, booked, "Lea Booked")
	cl := a.signIn(t, c.Staff)
	cl.Get(wlOfferPath(e)).Want(http.StatusOK)
	before := a.auditCount(t, c.ID)

	r := wlRefused(t, cl, e, sp.ID.String(), rfc(wed.AddDate(0, 0, 1).Add(time.Hour)), http.StatusBadRequest, "start")
	if len(wlTimes(r, sp.ID)) == 0 {
		t.Errorf("the refusal does not list the day's times again:\n%s", clip(r.Body, 2000))
	}
	wlRefused(t, cl, e, sp.ID.String(), rfc(time.Now().Add(-time.Hour)), http.StatusBadRequest, "start")
	wlRefused(t, cl, e, sp.ID.String(), "next wednesday", http.StatusBadRequest, "start")
	wlRefused(t, cl, e, sp.ID.String(), rfc(booked), http.StatusConflict, "")
	wlRefused(t, cl, e, "nope", rfc(wed.Add(time.Hour)), http.StatusBadRequest, "specialistId")
	wlRefused(t, cl, e, other.Specialists[0].ID.String(), rfc(wed.Add(time.Hour)), http.StatusBadRequest, "specialistId")
	cl.Post("/staff/waitlist/"+uuid.NewString()+"/offer", url.Values{"specialist": {sp.ID.String()}, "start": {rfc(wed.Add(time.Hour))}}).
		Want(http.StatusNotFound)
	cl.Get("/staff/waitlist/" + uuid.NewString() + "/offer").Want(http.StatusNotFound)
	cl.Get(wlOfferPath(e) + "?day=" + wed.AddDate(0, 0, 1).Format(time.DateOnly)).Want(http.StatusBadRequest)
	// Another clinic's staff cannot offer the clinic's patients a time.
	a.signIn(t, other.Admin).Post(wlOfferPath(e), url.Values{"specialist": {other.Specialists[0].ID.String()}, "start": {rfc(wed.Add(time.Hour))}}).
		Want(http.StatusNotFound)

	var openings int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM waitlist_openings WHERE clinic_id = $1`, c.ID).Scan(&openings); err != nil {
		t.Fatal(err)
	}
	if openings != 0 || a.auditCount(t, c.ID) != before || a.wlState(t, e.ID) != waitlist.StateWaiting {
		t.Errorf("refused offers made %d openings and %d audit rows; the entry is %s", openings, a.auditCount(t, c.ID)-before, a.wlState(t, e.ID))
	}
}
