package web_test

// Tests of a patient's hold through the pages, without JavaScript (whole
// pages) and with htmx (the panel alone): holding a time, the details form
// with its errors in place, the heartbeat and the release, an expired
// hold, and a time taken meanwhile.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/grid"
	"github.com/clinic/booking/internal/testkit"
)

func TestPageHoldWithoutJavaScriptAnswersTheWholePage(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 10, 0)
	cl := a.newClient(t)

	page := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	// The browser's identity is a signed cookie that script cannot read;
	// a page view stores nothing, so it sets no session.
	sc := page.Header.Get("Set-Cookie")
	if !strings.HasPrefix(sc, "clinic_client=b_") || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") {
		t.Errorf("client cookie %q: want clinic_client, HttpOnly, SameSite=Lax", sc)
	}
	if len(page.Header.Values("Set-Cookie")) != 1 {
		t.Errorf("a page view sets %q: want the client cookie alone", page.Header.Values("Set-Cookie"))
	}
	if !strings.Contains(text(page.Doc().Find("#hold-panel")), "Pick a free time") {
		t.Errorf("empty panel: %q", text(page.Doc().Find("#hold-panel")))
	}
	f := cellForm(t, page.Doc(), grid.CellID(sp.ID, start))
	f.Values.Set("clientId", "b_someone_else") // a page cannot choose its client id
	r := cl.Post(f.Action, f.Values).Want(http.StatusOK)
	wantFullPage(t, r)
	held := r.Doc().Find(`#hold-panel [data-testid="held"]`)
	if held.Length() != 1 {
		t.Fatalf("no held panel in:\n%s", clip(r.Body, 3000))
	}
	txt := text(held)
	for _, w := range []string{"Held for you", start.Format("Monday 2 January 2006, 15:04") + " (Berlin time)", "with " + sp.Name} {
		if !strings.Contains(txt, w) {
			t.Errorf("held panel lacks %q: %q", w, txt)
		}
	}
	// The panel says until when the time is the patient's: the end of the
	// hold's life, in the clinic's zone, as the page's clock reads it.
	if until, _ := held.Find(`[data-testid="hold-until"]`).Attr("data-until"); until == "" {
		t.Error("no end of the hold's life")
	} else if at, err := time.Parse(time.RFC3339, until); err != nil || time.Until(at) <= time.Minute || time.Until(at) > 11*time.Minute {
		t.Errorf("the hold is said to last until %q (%v)", until, err)
	} else if want := "until " + at.In(c.Loc).Format("15:04"); !strings.Contains(txt, want) {
		t.Errorf("held panel lacks %q: %q", want, txt)
	}
	details := formOf(t, held.Find(`[data-testid="details-form"]`), "details form")
	if details.Action != c.BookPath(typ)+"/confirm" || !strings.HasPrefix(details.Values.Get("holdId"), "h") {
		t.Errorf("details form %+v", details)
	}
	for _, id := range []string{"name", "email", "phone"} {
		if held.Find(`label[for="`+id+`"]`).Length() != 1 || held.Find(`input#`+id+`[name="`+id+`"]`).Length() != 1 {
			t.Errorf("details form field %s without a label or input", id)
		}
	}
	if held.Find(`[data-testid="details-form"] button[type="submit"]`).Length() != 1 {
		t.Error("no confirm button")
	}
	// The grid around it is the week and filter the patient was looking at,
	// with the cell now this browser's.
	wantWeek := text(page.Doc().Find(`[data-testid="week-label"]`))
	if got := text(r.Doc().Find(`[data-testid="week-label"]`)); got != wantWeek {
		t.Errorf("the whole page answering the hold shows the week %q; the patient was on %q", got, wantWeek)
	}
	if got, _ := r.Doc().Find("select#specialist option[selected]").Attr("value"); got != sp.ID.String() {
		t.Errorf("the whole page answering the hold lost the specialist filter (selected %q, want %s)", got, sp.ID)
	}
	if st := cellState(r.Doc(), grid.CellID(sp.ID, start)); st != "mine" {
		t.Errorf("the held cell on the page is %q, want mine", st)
	}
	// A reload does not lose the hold.
	again := cl.Get(c.BookURL(typ, start, sp.ID)).Want(http.StatusOK)
	if v, _ := again.Doc().Find(`[data-testid="held"] input[name="holdId"]`).Attr("value"); v != details.Values.Get("holdId") {
		t.Errorf("after a reload the panel holds %q, want %q", v, details.Values.Get("holdId"))
	}
	// Everyone else sees it held.
	if st := stateOn(t, a, c, typ, sp.ID, start); st != "held" {
		t.Errorf("another browser sees the cell %q, want held", st)
	}
}

func TestPageHoldWithHtmxAnswersThePanelAlone(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[1]
	start := c.At(3, 15, 30)
	cl := a.newClient(t)
	r := holdHX(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
	wantFragment(t, r)
	held := r.Doc().Find(`[data-testid="held"]`)
	if held.Length() != 1 || !strings.Contains(text(held), start.Format("15:04")) {
		t.Fatalf("fragment is not the held panel:\n%s", r.Body)
	}
	form := held.Find(`[data-testid="details-form"]`)
	if hx, _ := form.Attr("hx-post"); hx != c.BookPath(typ)+"/confirm" {
		t.Errorf("details form hx-post %q", hx)
	}
	if tg, _ := form.Attr("hx-target"); tg != "#hold-panel" {
		t.Errorf("details form hx-target %q", tg)
	}
	beat := held.Find(".heartbeat")
	if hx, _ := beat.Attr("hx-post"); hx != c.BookPath(typ)+"/heartbeat" {
		t.Errorf("heartbeat hx-post %q", hx)
	}
	if vary := strings.Join(r.Header.Values("Vary"), ", "); !strings.Contains(vary, "HX-Request") {
		t.Errorf("Vary %q: a page and its fragment share a URL", vary)
	}
}

func TestPageHoldOnATakenSlotSaysJustTaken(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 11, 0)
	cl := a.newClient(t)
	f := openCellForm(t, cl, c, typ, sp.ID, start) // the page as it was
	a.bookDirect(t, c, typ, sp.ID, start, "Quick Other")

	r := cl.Post(f.Action, f.Values).Want(http.StatusConflict)
	wantFullPage(t, r)
	p := r.Doc().Find(`#hold-panel [data-testid="problem"]`)
	if !strings.Contains(text(p), "just taken") {
		t.Errorf("panel %q, want it to say the time was just taken", text(panelOf(r)))
	}
	if role, _ := p.Attr("role"); role != "alert" {
		t.Errorf("problem panel role %q", role)
	}
	if st := cellState(cl.Get(c.BookURL(typ, start, sp.ID)).Doc(), grid.CellID(sp.ID, start)); st != "taken" {
		t.Errorf("the grid shows the cell %q, want taken", st)
	}
	hx := cl.HXPost(f.Action, f.Values).Want(http.StatusConflict)
	wantFragment(t, hx)
	if !strings.Contains(text(hx.Doc().Find(`[data-testid="problem"]`)), "just taken") {
		t.Errorf("htmx panel: %s", hx.Body)
	}
}

func TestPageHoldOnASlotHeldBySomeoneElseIsLocked(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 13, 0)
	holder, other := a.newClient(t), a.newClient(t)
	f := openCellForm(t, other, c, typ, sp.ID, start)
	holdNoJS(t, holder, c, typ, sp.ID, start).Want(http.StatusOK)

	for _, hx := range []bool{false, true} {
		var r *response
		if hx {
			r = other.HXPost(f.Action, f.Values)
			r.Want(http.StatusLocked)
			wantFragment(t, r)
		} else {
			r = other.Post(f.Action, f.Values).Want(http.StatusLocked)
			wantFullPage(t, r)
		}
		if !strings.Contains(text(r.Doc().Find(`[data-testid="problem"]`)), "Someone else is booking that time") {
			t.Errorf("htmx=%v: panel %q", hx, text(panelOf(r)))
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 31 {
			t.Errorf("htmx=%v: Retry-After %q", hx, r.Header.Get("Retry-After"))
		}
	}
}

func TestPageHoldWithABadStartIsRefusedInPlace(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	cl := a.newClient(t)
	day := c.At(2, 10, 0)
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"Missing", url.Values{}},
		{"NotATime", url.Values{"start": {"tomorrow at ten"}}},
		{"NotASlot", url.Values{"start": {c.At(2, 3, 0).UTC().Format(time.RFC3339)}}},
		{"OffTheGrid", url.Values{"start": {c.At(2, 10, 7).UTC().Format(time.RFC3339)}}},
		{"BadSpecialist", url.Values{"start": {day.UTC().Format(time.RFC3339)}, "specialist": {"nobody"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cl.Post(c.BookPath(typ)+"/hold?week="+c.Week(day), tc.form).Want(http.StatusBadRequest)
			wantFullPage(t, r)
			if p := r.Doc().Find(`#hold-panel [data-testid="problem"]`); p.Length() != 1 || text(p) == "" {
				t.Errorf("no problem panel: %q", text(panelOf(r)))
			}
			hx := cl.HXPost(c.BookPath(typ)+"/hold", tc.form).Want(http.StatusBadRequest)
			wantFragment(t, hx)
		})
	}
}

func TestPageConfirmShowsFieldErrorsInPlaceAndKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 9, 30)
	cl := a.newClient(t)
	held := holdNoJS(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
	holdID := detailsForm(t, held.Doc(), "", "", "").Values.Get("holdId")

	for _, tc := range []struct {
		name, nm, email, phone, field string
	}{
		{"NoName", "", "ada@example.org", "", "name"},
		{"BadEmail", "Ada Lovelace", "ada-at-example", "", "email"},
		{"NoEmail", "Ada Lovelace", "", "+49 30 1234567", "email"},
		{"BadPhone", "Ada Lovelace", "ada@example.org", "call me maybe", "phone"},
	} {
		for _, hx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/htmx=%v", tc.name, hx), func(t *testing.T) {
				f := detailsForm(t, held.Doc(), tc.nm, tc.email, tc.phone)
				var r *response
				if hx {
					r = cl.HXPost(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
					wantFragment(t, r)
				} else {
					r = cl.Post(f.Action, f.Values).Want(http.StatusUnprocessableEntity)
					wantFullPage(t, r)
				}
				panel := r.Doc().Find(`[data-testid="held"]`)
				if panel.Length() != 1 {
					t.Fatalf("the hold panel is gone:\n%s", clip(r.Body, 2000))
				}
				if v, _ := panel.Find(`input[name="holdId"]`).Attr("value"); v != holdID {
					t.Errorf("the form now holds %q, want the same hold %q", v, holdID)
				}
				msg := panel.Find(`[data-testid="` + tc.field + `-error"]`)
				if text(msg) == "" {
					t.Fatalf("no %s-error in:\n%s", tc.field, clip(r.Body, 3000))
				}
				in := panel.Find("input#" + tc.field)
				if v, _ := in.Attr("aria-invalid"); v != "true" {
					t.Errorf("%s: aria-invalid %q", tc.field, v)
				}
				if v, _ := in.Attr("aria-describedby"); v != tc.field+"-error" {
					t.Errorf("%s: aria-describedby %q", tc.field, v)
				}
				for id, want := range map[string]string{"name": tc.nm, "email": tc.email, "phone": tc.phone} {
					if v, _ := panel.Find("input#" + id).Attr("value"); v != want {
						t.Errorf("input %s is %q, want what was typed, %q", id, v, want)
					}
				}
				if n := panel.Find(".field-error").Length(); n != 1 {
					t.Errorf("%d field errors, want 1", n)
				}
			})
		}
	}
	// And then it books.
	f := detailsForm(t, held.Doc(), "Ada Lovelace", "ada@example.org", "")
	cl.Post(f.Action, f.Values).Want(http.StatusSeeOther)
}

func TestPageConfirmOfSomeoneElsesHoldIsRefused(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 16, 0)
	holder, other := a.newClient(t), a.newClient(t)
	held := holdNoJS(t, holder, c, typ, sp.ID, start).Want(http.StatusOK)
	f := detailsForm(t, held.Doc(), "Mallory", "mallory@example.org", "")
	r := other.Post(f.Action, f.Values).Want(http.StatusForbidden)
	wantFullPage(t, r)
	if !strings.Contains(text(r.Doc().Find(`[data-testid="problem"]`)), "not yours") {
		t.Errorf("panel %q", text(panelOf(r)))
	}
	rel := formOf(t, held.Doc().Find(`[data-testid="held"] form`).Last(), "release form")
	other.Post(rel.Action, rel.Values).Want(http.StatusForbidden)
	// A's hold is untouched: A books.
	holder.Post(f.Action, f.Values).Want(http.StatusSeeOther)
}

func TestPageHeartbeatAndRelease(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(4, 10, 30)
	cl := a.newClient(t)
	held := holdHX(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
	beatURL, vals := heartbeatOf(t, held)
	m := heartbeatHoldID.FindStringSubmatch(vals)
	if m == nil {
		t.Fatalf("heartbeat hx-vals %q", vals)
	}
	cl.HXPost(beatURL, url.Values{"holdId": {m[1]}}).Want(http.StatusNoContent)

	rel := formOf(t, held.Doc().Find(`[data-testid="held"] form`).Last(), "release form")
	r := cl.HXPost(rel.Action, rel.Values).Want(http.StatusOK)
	wantFragment(t, r)
	if !strings.Contains(text(r.Doc().Find("body")), "Released") {
		t.Errorf("after release: %q", r.Body)
	}
	if st := stateOn(t, a, c, typ, sp.ID, start); st != "free" {
		t.Errorf("released cell is %q, want free", st)
	}
	// A heartbeat for the released hold tells the page it is gone.
	gone := cl.HXPost(beatURL, url.Values{"holdId": {m[1]}}).Want(http.StatusGone)
	if !strings.Contains(text(gone.Doc().Find(`[data-testid="problem"]`)), "expired") {
		t.Errorf("heartbeat after release: %q", gone.Body)
	}
}

func TestPageExpiredHoldSaysSoAndOffersToHoldAgain(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{HoldTTL: time.Second}))
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(2, 15, 0)

	// waitExpired waits until the hold is gone from the store.
	waitExpired := func(holdID string) {
		testkit.WaitFor(t, 10*time.Second, "the hold to expire", func() bool {
			hs, err := a.Deps.Holds.Active(context.Background(), c.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				if h.HoldID == holdID {
					return false
				}
			}
			return true
		})
		// The store's index counts a hold out at its expiry by this
		// process's clock; its key lives until Redis's own clock reaches
		// the same point, which on a loaded machine can be a little later
		// (the claim ran after the expiry was computed). Let that pass.
		time.Sleep(500 * time.Millisecond)
	}
	wantRetry := func(t *testing.T, r *response) {
		t.Helper()
		p := r.Doc().Find(`[data-testid="problem"]`)
		if !strings.Contains(text(p), "expired") {
			t.Fatalf("panel %q, want it to say the hold expired", text(panelOf(r)))
		}
		btn := p.Find("form button")
		if !strings.Contains(text(btn), "Hold it again") {
			t.Fatalf("the expired panel offers no \"Hold it again\" button:\n%s", clip(panelOf(r).Text(), 800))
		}
		f := formOf(t, btn, "hold again")
		if f.Values.Get("start") != start.UTC().Format(time.RFC3339) || f.Values.Get("specialist") != sp.ID.String() {
			t.Errorf("hold-again form %+v", f)
		}
	}

	t.Run("ConfirmWithoutJavaScript", func(t *testing.T) {
		cl := a.newClient(t)
		held := holdNoJS(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
		// The form exactly as the page rendered it.
		f := detailsForm(t, held.Doc(), "Katherine Johnson", "kj@example.org", "")
		waitExpired(f.Values.Get("holdId"))
		r := cl.Post(f.Action, f.Values).Want(http.StatusGone)
		wantFullPage(t, r)
		wantRetry(t, r)
		// Holding again brings back what was typed.
		again := formOf(t, r.Doc().Find(`[data-testid="problem"] form`), "hold again")
		h := cl.Post(again.Action, again.Values).Want(http.StatusOK)
		if v, _ := h.Doc().Find(`[data-testid="held"] input#name`).Attr("value"); v != "Katherine Johnson" {
			t.Errorf("held again, the name field is %q", v)
		}
		rel := formOf(t, h.Doc().Find(`[data-testid="held"] form`).Last(), "release")
		cl.Post(rel.Action, rel.Values).Want(http.StatusOK)
	})

	t.Run("HeartbeatWithHtmx", func(t *testing.T) {
		testkit.WaitFor(t, 10*time.Second, "the slot to be free", func() bool {
			hs, _ := a.Deps.Holds.Active(context.Background(), c.ID)
			return len(hs) == 0
		})
		cl := a.newClient(t)
		held := holdHX(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
		beatURL, vals := heartbeatOf(t, held)
		m := heartbeatHoldID.FindStringSubmatch(vals)
		if m == nil {
			t.Fatalf("heartbeat hx-vals %q", vals)
		}
		waitExpired(m[1])
		// What htmx sends: the element's hx-vals.
		var hv map[string]string
		if err := json.Unmarshal([]byte(vals), &hv); err != nil {
			t.Fatalf("hx-vals %q: %v", vals, err)
		}
		form := url.Values{}
		for k, v := range hv {
			form.Set(k, v)
		}
		r := cl.HXPost(beatURL, form).Want(http.StatusGone)
		wantFragment(t, r)
		wantRetry(t, r)
	})
}

func TestPageSlotTakenMeanwhileKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	first, second := c.At(2, 10, 0), c.At(2, 11, 30)
	cl := a.newClient(t)
	held := holdNoJS(t, cl, c, typ, sp.ID, first).Want(http.StatusOK)
	// Staff book the time at the desk while the patient types.
	a.bookDirect(t, c, typ, sp.ID, first, "Walk In")

	f := detailsForm(t, held.Doc(), "Hedy Lamarr", "hedy@example.org", "+43 1 5551234")
	r := cl.Post(f.Action, f.Values).Want(http.StatusConflict)
	wantFullPage(t, r)
	if !strings.Contains(text(r.Doc().Find(`#hold-panel [data-testid="problem"]`)), "just taken") {
		t.Fatalf("panel %q, want \"just taken\"", text(panelOf(r)))
	}
	page := cl.Get(c.BookURL(typ, first, sp.ID)).Want(http.StatusOK)
	if st := cellState(page.Doc(), grid.CellID(sp.ID, first)); st != "taken" {
		t.Errorf("the grid shows the lost time %q, want taken", st)
	}
	// The patient picks another time: the details are still there.
	next := cellForm(t, page.Doc(), grid.CellID(sp.ID, second))
	h := cl.Post(next.Action, next.Values)
	if h.Status != http.StatusOK {
		t.Fatalf("holding another time after \"just taken, pick another\": %d, panel %q", h.Status, text(panelOf(h)))
	}
	panel := h.Doc().Find(`[data-testid="held"]`)
	for id, want := range map[string]string{"name": "Hedy Lamarr", "email": "hedy@example.org", "phone": "+43 1 5551234"} {
		if v, _ := panel.Find("input#" + id).Attr("value"); v != want {
			t.Errorf("after the lost slot, %s is %q, want %q", id, v, want)
		}
	}
	// And it books with them.
	f2 := formOf(t, panel.Find(`[data-testid="details-form"]`), "details")
	cl.Post(f2.Action, f2.Values).Want(http.StatusSeeOther)
}
