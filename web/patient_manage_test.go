package web_test

// Tests of a booking made through the pages and its manage page: what it
// shows, cancelling (asked first) and moving the booking, and a token
// that opens nothing.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clinic/booking/internal/grid"
)

func TestPageConfirmBooksAndTheManagePageShowsIt(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[1]

	t.Run("WithoutJavaScript", func(t *testing.T) {
		start := c.At(2, 14, 30)
		cl := a.newClient(t)
		token := bookViaPages(t, cl, c, typ, sp.ID, start, "Grace Hopper", "grace@example.org")
		r := cl.Get("/manage/" + token).Want(http.StatusOK)
		wantFullPage(t, r)
		if got := text(r.Doc().Find(`h1[data-testid="booked"]`)); got != "You are booked" {
			t.Errorf("right after booking the page says %q, want \"You are booked\"", got)
		}
		sum := summaryOf(t, r)
		want := map[string]string{
			"What":   "Consultation",
			"When":   start.Format("Monday 2 January 2006, 15:04") + " (Berlin time) – " + start.Add(30*time.Minute).Format("15:04"),
			"With":   sp.Name,
			"Where":  c.Name + ", Hauptstraße 5, 10827 Berlin",
			"For":    "Grace Hopper",
			"Status": "Confirmed",
		}
		for k, v := range want {
			if sum[k] != v {
				t.Errorf("summary %s = %q, want %q", k, sum[k], v)
			}
		}
		if st, _ := r.Doc().Find(`[data-testid="summary"]`).Attr("data-status"); st != "confirmed" {
			t.Errorf("data-status %q", st)
		}
		if href, _ := r.Doc().Find(`[data-testid="manage-link"]`).Attr("href"); href != "/manage/"+token {
			t.Errorf("manage link %q", href)
		}
		if href, _ := r.Doc().Find(`a[download]`).Attr("href"); href != "/manage/"+token+"/calendar.ics" {
			t.Errorf("calendar link %q", href)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q, want no-store (the page has patient data)", cc)
		}
		if rp := r.Header.Get("Referrer-Policy"); rp != "no-referrer" {
			t.Errorf("Referrer-Policy %q", rp)
		}
		// "You are booked" is said once; the link opened later is the booking.
		again := cl.Get("/manage/" + token).Want(http.StatusOK)
		if again.Doc().Find(`[data-testid="booked"]`).Length() != 0 || text(again.Doc().Find("h1")) != "Your appointment" {
			t.Errorf("second visit h1 %q", text(again.Doc().Find("h1")))
		}
		fresh := a.newClient(t).Get("/manage/" + token).Want(http.StatusOK)
		if summaryOf(t, fresh)["When"] != want["When"] {
			t.Error("another browser with the link sees another booking")
		}
		// And the grid shows it taken, to anyone.
		if st := stateOn(t, a, c, typ, sp.ID, start); st != "taken" {
			t.Errorf("booked cell is %q, want taken", st)
		}
	})

	t.Run("WithHtmx", func(t *testing.T) {
		start := c.At(3, 9, 0)
		cl := a.newClient(t)
		held := holdHX(t, cl, c, typ, sp.ID, start).Want(http.StatusOK)
		f := detailsForm(t, held.Doc(), "Alan Turing", "alan@example.org", "")
		r := cl.HXPost(f.Action, f.Values).Want(http.StatusOK)
		to := r.Header.Get("HX-Redirect")
		if !managePath.MatchString(to) {
			t.Fatalf("HX-Redirect %q, want /manage/{token}", to)
		}
		if strings.TrimSpace(r.Body) != "" {
			t.Errorf("a redirect answer has a body: %q", r.Body)
		}
		m := cl.Get(to).Want(http.StatusOK)
		if m.Doc().Find(`[data-testid="booked"]`).Length() != 1 {
			t.Error("no \"You are booked\" after an htmx confirm")
		}
	})
}

func TestPageManageCancelAsksFirstThenCancels(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	start := c.At(3, 10, 0)
	cl := a.newClient(t)
	token := bookViaPages(t, cl, c, typ, sp.ID, start, "Rosalind Franklin", "rosalind@example.org")
	page := cl.Get("/manage/" + token).Want(http.StatusOK)
	cancel, _ := page.Doc().Find(`a[data-testid="cancel-link"]`).Attr("href")
	if cancel != "/manage/"+token+"/cancel" {
		t.Fatalf("the cancel link leads to %q", cancel)
	}
	ask := cl.Get(cancel).Want(http.StatusOK)
	wantFullPage(t, ask)
	if got := text(ask.Doc().Find("h1")); got != "Cancel this appointment?" {
		t.Errorf("confirmation page h1 %q", got)
	}
	if !strings.Contains(text(ask.Doc().Find("main")), start.Format("Monday 2 January 2006, 15:04")) {
		t.Error("the confirmation does not say which appointment")
	}
	yes := formOf(t, ask.Doc().Find(`button.danger`), "yes form")
	if yes.Values.Get("confirm") != "yes" || !strings.Contains(text(ask.Doc().Find("button.danger")), "Yes, cancel it") {
		t.Errorf("confirmation form %+v", yes)
	}
	if ask.Doc().Find(`label[for="reason"]`).Length() != 1 {
		t.Error("reason field without a label")
	}
	if href, _ := ask.Doc().Find(`a[href="/manage/` + token + `"]`).Attr("href"); href == "" {
		t.Error("no way back (\"No, keep it\")")
	}
	// Asking did not cancel.
	if sum := summaryOf(t, cl.Get("/manage/"+token)); sum["Status"] != "Confirmed" {
		t.Fatalf("after the question alone the booking is %q", sum["Status"])
	}
	if st := stateOn(t, a, c, typ, sp.ID, start); st != "taken" {
		t.Fatalf("cell %q before the cancel", st)
	}

	yes.Values.Set("reason", "Feeling better")
	r := cl.Post(yes.Action, yes.Values).Want(http.StatusSeeOther)
	if r.Header.Get("Location") != "/manage/"+token {
		t.Fatalf("cancel redirects to %q", r.Header.Get("Location"))
	}
	done := cl.Get("/manage/" + token).Want(http.StatusOK)
	if sum := summaryOf(t, done); sum["Status"] != "Cancelled" {
		t.Errorf("status %q after cancel", sum["Status"])
	}
	if st, _ := done.Doc().Find(`[data-testid="summary"]`).Attr("data-status"); st != "cancelled" {
		t.Errorf("data-status %q", st)
	}
	if !strings.Contains(text(done.Doc().Find(".notice")), "cancelled") {
		t.Errorf("notice %q", text(done.Doc().Find(".notice")))
	}
	if done.Doc().Find(`form[action$="/cancel"]`).Length() != 0 || done.Doc().Find(`a[download]`).Length() != 0 {
		t.Error("a cancelled booking still offers cancel or calendar")
	}
	if st := stateOn(t, a, c, typ, sp.ID, start); st != "free" {
		t.Errorf("the cancelled time is %q, want free", st)
	}
	// Cancelling again is harmless; moving a cancelled booking is refused on a page.
	cl.Post(yes.Action, yes.Values).Want(http.StatusSeeOther)
	wantErrorPage(t, cl.Get("/manage/"+token+"/reschedule"), http.StatusConflict)
}

func TestPageManageUnknownTokenIsNotFound(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	cl := a.newClient(t)
	tok := "nope" + strings.ReplaceAll(uuid.NewString(), "-", "")
	wantErrorPage(t, cl.Get("/manage/"+tok), http.StatusNotFound)
	wantErrorPage(t, cl.Get("/manage/"+tok+"/reschedule"), http.StatusNotFound)
	wantErrorPage(t, cl.Get("/manage/"+tok+"/calendar.ics"), http.StatusNotFound)
	wantErrorPage(t, cl.Post("/manage/"+tok+"/cancel", url.Values{"confirm": {"yes"}}), http.StatusNotFound)
	wantErrorPage(t, cl.Post("/manage/"+tok+"/reschedule", url.Values{"start": {time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)}}), http.StatusNotFound)
}

func TestPageManageRescheduleMovesTheBooking(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0]
	from, to := c.At(3, 10, 0), c.At(3, 14, 0)
	cl := a.newClient(t)
	token := bookViaPages(t, cl, c, typ, sp.ID, from, "Lise Meitner", "lise@example.org")
	manage := cl.Get("/manage/" + token).Want(http.StatusOK)
	link, _ := manage.Doc().Find(`a[href="/manage/` + token + `/reschedule"]`).Attr("href")
	if link == "" {
		t.Fatal("the manage page has no link to move the booking")
	}

	page := cl.Get(link + "?week=" + c.Week(to)).Want(http.StatusOK)
	wantFullPage(t, page)
	d := page.Doc()
	if h := text(d.Find("h1")); !strings.HasPrefix(h, "Move your appointment: Consultation") {
		t.Errorf("h1 %q", h)
	}
	if d.Find("select#specialist").Length() != 0 {
		t.Error("the move grid offers a specialist filter")
	}
	if !strings.Contains(text(d.Find(`header [data-testid="current-time"]`)), "Your current time: "+from.Format("Monday 2 January 2006, 15:04")) {
		t.Errorf("the page's head says %q", text(d.Find("header")))
	}
	if sc, _ := d.Find(`[data-testid="week-grid"]`).Attr("sse-connect"); !strings.HasPrefix(sc, "/manage/"+token+"/reschedule/live?week=") {
		t.Errorf("sse-connect %q", sc)
	}
	if next, _ := d.Find(`a[rel="next"]`).Attr("href"); !strings.HasPrefix(next, "/manage/"+token+"/reschedule?week=") {
		t.Errorf("next week link %q", next)
	}
	f := cellForm(t, d, grid.CellID(uuid.Nil, to))
	if f.Action != "/manage/"+token+"/reschedule" {
		t.Errorf("a move cell posts to %q", f.Action)
	}
	ask := cl.Post(f.Action, f.Values).Want(http.StatusOK)
	yes := formOf(t, ask.Doc().Find(`[data-testid="move-yes"]`), "move confirmation")
	r := cl.Post(yes.Action, yes.Values).Want(http.StatusSeeOther)
	if r.Header.Get("Location") != "/manage/"+token {
		t.Fatalf("move redirects to %q", r.Header.Get("Location"))
	}
	after := cl.Get("/manage/" + token).Want(http.StatusOK)
	sum := summaryOf(t, after)
	if want := to.Format("Monday 2 January 2006, 15:04") + " (Berlin time) – " + to.Add(30*time.Minute).Format("15:04"); sum["When"] != want {
		t.Errorf("after the move, When = %q, want %q", sum["When"], want)
	}
	if sum["Status"] != "Confirmed" || sum["For"] != "Lise Meitner" {
		t.Errorf("after the move: %v", sum)
	}
	if !strings.Contains(text(after.Doc().Find(".notice")), "Moved") {
		t.Errorf("notice %q", text(after.Doc().Find(".notice")))
	}
	// The old time is free again for the specialist.
	if st := stateOn(t, a, c, typ, sp.ID, from); st != "free" {
		t.Errorf("the old time is %q, want free", st)
	}
	// A start that is not a time of the week is refused in place.
	bad := cl.Post("/manage/"+token+"/reschedule", url.Values{"start": {"soon"}}).Want(http.StatusBadRequest)
	wantFullPage(t, bad)
	if bad.Doc().Find(`#hold-panel [data-testid="problem"]`).Length() != 1 {
		t.Errorf("bad move: %q", text(panelOf(bad)))
	}
	wantErrorPage(t, cl.Get("/manage/"+token+"/reschedule?week=someday"), http.StatusBadRequest)
}
