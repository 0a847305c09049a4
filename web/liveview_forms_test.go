package web_test

// The booking page answered from a watched week is the page the source
// makes, byte for byte, whatever form its address takes.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// sourceServer serves a's handlers with no live views: every page is made
// from PostgreSQL and Redis, as before views were kept.
func sourceServer(t *testing.T, a *app) string {
	t.Helper()
	deps := a.Deps
	deps.Views = nil
	deps.Registry = prometheus.NewRegistry() // its metrics are not a's
	ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL
}

// cookieHeader is the Cookie header that sends back what r set.
func cookieHeader(r *response) string {
	var parts []string
	for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}

// firstFree is the start of the first free cell of a page, "" for none.
func firstFree(t *testing.T, r *response) string {
	t.Helper()
	start, _ := r.Doc().Find(`li[data-state="free"]`).First().Attr("data-start")
	return start
}

// The type page as the clinic page links it (no week), with an empty
// week, with today's week and with a specialist, each with and without a
// client cookie and as htmx asks for it, is answered from the watched
// week, and that answer is the source's, byte for byte, before and after
// another patient's hold changes the week.
func TestLiveViewPageEqualsTheSourceInEveryForm(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0].ID
	slow := sourceServer(t, a)
	week := c.Week(time.Now())
	paths := []string{
		c.BookPath(typ),
		c.BookPath(typ) + "?week=",
		c.BookPath(typ) + "?week=" + week,
		c.BookPath(typ) + "?specialist=" + sp.String(),
	}
	cookie := cookieHeader(a.do(t, "GET", paths[0], nil).Want(http.StatusOK))
	if !strings.Contains(cookie, "=") {
		t.Fatal("the page set no client cookie")
	}
	type form struct{ path, cookie, hx string }
	var forms []form
	for _, p := range paths {
		for _, ck := range []string{"", cookie} {
			for _, hx := range []string{"", "true"} {
				forms = append(forms, form{p, ck, hx})
			}
		}
	}
	compare := func(stage string) {
		t.Helper()
		for _, f := range forms {
			hdr := []string{"Cookie", f.cookie, "HX-Request", f.hx, "Accept", browserAccept}
			a.do(t, "GET", f.path, nil, hdr...).Want(http.StatusOK) // keeps the week's view
			hits := liveHits(t, a, "page")
			fast := a.do(t, "GET", f.path, nil, hdr...).Want(http.StatusOK)
			if liveHits(t, a, "page") != hits+1 {
				t.Fatalf("%s: %s (cookie %v, htmx %q) was not answered from the watched week", stage, f.path, f.cookie != "", f.hx)
			}
			src := exchange(t, http.DefaultClient, newRequest(t, "GET", slow+f.path, nil, hdr...)).Want(http.StatusOK)
			if fast.Body != src.Body || fast.Header.Get("ETag") != src.Header.Get("ETag") {
				t.Fatalf("%s: %s (cookie %v, htmx %q): the watched week's answer differs from the source's\nmemory:\n%s\nsource:\n%s",
					stage, f.path, f.cookie != "", f.hx, clip(fast.Body, 3000), clip(src.Body, 3000))
			}
		}
	}
	compare("before any hold")

	start := firstFree(t, a.do(t, "GET", paths[0], nil).Want(http.StatusOK))
	if start == "" {
		t.Skip("no free time left in this week at the clinic")
	}
	at, err := time.Parse(time.RFC3339, start)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range c.Specialists { // held with every specialist: held on every form
		a.holdOf(t, typ.ID, s.ID, at, "another-patient-"+string(rune('a'+i)))
	}
	held := func(r *response) bool { return r.Doc().Find(`li[data-state="held"]`).Length() > 0 }
	testkit.WaitFor(t, evWait, "the hold to show on the default week", func() bool {
		return held(a.do(t, "GET", paths[0], nil).Want(http.StatusOK))
	})
	compare("after a hold")
}

// Timeslots of any days inside a watched week are answered from its view,
// and are the source's answer, byte for byte, before and after a hold.
func TestLiveViewTimeslotsOfPartOfAWeekEqualTheSource(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0].ID
	slow := sourceServer(t, a)
	monday := c.Monday(10, 0)
	a.do(t, "GET", c.BookURL(typ, monday, uuid.Nil), nil).Want(http.StatusOK) // the weeks are watched
	a.do(t, "GET", c.BookURL(typ, monday, sp), nil).Want(http.StatusOK)
	day := func(i int) string { return c.Week(monday.AddDate(0, 0, i)) }
	var urls []string
	for _, r := range [][2]int{{0, 0}, {1, 3}, {2, 2}, {4, 6}, {6, 6}, {0, 5}} {
		u := "/v1/appointment-types/" + typ.ID.String() + "/timeslots?from=" + day(r[0]) + "&to=" + day(r[1])
		urls = append(urls, u, u+"&specialistId="+sp.String())
	}
	compare := func(stage string) {
		t.Helper()
		for _, u := range urls {
			hits := liveHits(t, a, "timeslots")
			fast := a.do(t, "GET", u, nil).Want(http.StatusOK)
			if liveHits(t, a, "timeslots") != hits+1 {
				t.Fatalf("%s: %s was not answered from the watched week", stage, u)
			}
			src := exchange(t, http.DefaultClient, newRequest(t, "GET", slow+u, nil)).Want(http.StatusOK)
			if fast.Body != src.Body || fast.Header.Get("ETag") != src.Header.Get("ETag") {
				t.Fatalf("%s: %s: the watched week's answer differs from the source's\nmemory: %s\nsource: %s", stage, u, clip(fast.Body, 2000), clip(src.Body, 2000))
			}
			if !strings.Contains(src.Body, `"start"`) {
				t.Fatalf("%s: %s lists no time: nothing compared", stage, u)
			}
		}
	}
	compare("before any hold")
	a.holdOf(t, typ.ID, sp, monday.AddDate(0, 0, 2), "another-patient")
	testkit.WaitFor(t, evWait, "the hold to leave the timeslots", func() bool {
		return !strings.Contains(a.do(t, "GET", urls[5], nil).Body, `"start":"`+monday.AddDate(0, 0, 2).UTC().Format(time.RFC3339))
	})
	compare("after a hold")
}

// Timeslots of a range across two watched weeks are answered from their
// two views, and are the source's answer, byte for byte, before and after
// a hold in each week.
func TestLiveViewTimeslotsAcrossTwoWeeksEqualTheSource(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.patientClinic(t)
	typ, sp := c.Type0(), c.Specialists[0].ID
	slow := sourceServer(t, a)
	monday := c.Monday(10, 0)
	for _, week := range []time.Time{monday, monday.AddDate(0, 0, 7)} { // both weeks are watched
		a.do(t, "GET", c.BookURL(typ, week, uuid.Nil), nil).Want(http.StatusOK)
		a.do(t, "GET", c.BookURL(typ, week, sp), nil).Want(http.StatusOK)
	}
	day := func(i int) string { return c.Week(monday.AddDate(0, 0, i)) }
	var urls []string
	for _, r := range [][2]int{{0, 13}, {2, 8}, {6, 7}, {4, 11}} {
		u := "/v1/appointment-types/" + typ.ID.String() + "/timeslots?from=" + day(r[0]) + "&to=" + day(r[1])
		urls = append(urls, u, u+"&specialistId="+sp.String())
	}
	compare := func(stage string) {
		t.Helper()
		for _, u := range urls {
			hits := liveHits(t, a, "timeslots")
			fast := a.do(t, "GET", u, nil).Want(http.StatusOK)
			if liveHits(t, a, "timeslots") != hits+1 {
				t.Fatalf("%s: %s was not answered from the watched weeks", stage, u)
			}
			src := exchange(t, http.DefaultClient, newRequest(t, "GET", slow+u, nil)).Want(http.StatusOK)
			if fast.Body != src.Body || fast.Header.Get("ETag") != src.Header.Get("ETag") {
				t.Fatalf("%s: %s: the watched weeks' answer differs from the source's\nmemory: %s\nsource: %s", stage, u, clip(fast.Body, 2000), clip(src.Body, 2000))
			}
			if !strings.Contains(src.Body, `"start"`) {
				t.Fatalf("%s: %s lists no time: nothing compared", stage, u)
			}
		}
	}
	compare("before any hold")
	first, second := monday.AddDate(0, 0, 6), monday.AddDate(0, 0, 7)
	a.holdOf(t, typ.ID, sp, first, "another-patient")
	a.holdOf(t, typ.ID, sp, second, "yet-another-patient")
	gone := func(at time.Time) bool {
		return !strings.Contains(a.do(t, "GET", urls[5], nil).Body, `"start":"`+at.UTC().Format(time.RFC3339))
	}
	testkit.WaitFor(t, evWait, "the holds to leave the timeslots", func() bool { return gone(first) && gone(second) })
	compare("after a hold in each week")
}
