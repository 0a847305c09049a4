package web_test

// Tests of the patients' waitlist pages: joining through the form (and
// its refusals and limits), the page of a place and leaving it, and the
// way to the form from a booking page whose week has no free time.

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/db"
	"github.com/clinic/booking/internal/outbox"
	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/internal/waitlist"
)

// pwJoinPath is the waitlist form of type typ.
func pwJoinPath(c clinic, typ db.AppointmentType) string { return c.BookPath(typ) + "/waitlist" }

// pwDay is the clinic's date of t, as the form and the API take it.
func pwDay(c clinic, t time.Time) string { return t.In(c.Loc).Format(time.DateOnly) }

// pwValues is the form filled in for name and email, waiting from..to.
func pwValues(c clinic, name, email string, from, to time.Time, times ...string) url.Values {
	return url.Values{"name": {name}, "email": {email}, "phone": {""},
		"from": {pwDay(c, from)}, "to": {pwDay(c, to)}, "specialist": {""}, "times": times}
}

// pwPlacePath matches the link of a place's page.
var pwPlacePath = regexp.MustCompile(`^/c/[a-z0-9-]+/waitlist/[A-Za-z0-9_-]{43}$`)

// pwJoinNoJS joins through the form and returns the link of the place's
// page the answer shows.
func pwJoinNoJS(t *testing.T, cl *client, c clinic, typ db.AppointmentType, v url.Values) string {
	t.Helper()
	r := cl.Post(pwJoinPath(c, typ), v).Want(http.StatusOK)
	wantFullPage(t, r)
	if r.Doc().Find(`[data-testid="waitlist-joined"]`).Length() != 1 {
		t.Fatalf("no \"you are on the waitlist\" in:\n%s", clip(r.Body, 2000))
	}
	wantPrivate(t, r)
	link, _ := r.Doc().Find(`[data-testid="waitlist-place-link"]`).Attr("href")
	if !pwPlacePath.MatchString(link) || !strings.HasPrefix(link, "/c/"+c.Slug+"/") {
		t.Fatalf("the place's link is %q", link)
	}
	return link
}

// wantPrivate checks an answer that carries a waitlist link keeps it:
// not cached, not sent on as a referrer, not indexed.
func wantPrivate(t testing.TB, r *response) {
	t.Helper()
	if r.Header.Get("Referrer-Policy") != "no-referrer" || r.Header.Get("Cache-Control") != "no-store" ||
		!strings.Contains(r.Header.Get("X-Robots-Tag"), "noindex") {
		t.Errorf("%s: Referrer-Policy %q, Cache-Control %q, X-Robots-Tag %q", r.what,
			r.Header.Get("Referrer-Policy"), r.Header.Get("Cache-Control"), r.Header.Get("X-Robots-Tag"))
	}
}

// pwPlace reads the summary of a place's page: dt -> dd, and its state.
func pwPlace(t *testing.T, r *response) (map[string]string, string) {
	t.Helper()
	dl := r.Doc().Find(`[data-testid="waitlist-place"]`)
	if dl.Length() != 1 {
		t.Fatalf("%s: no place on the page:\n%s", r.what, clip(r.Body, 2000))
	}
	out := map[string]string{}
	dl.Find("dt").Each(func(_ int, dt *goquery.Selection) { out[text(dt)] = text(dt.NextFiltered("dd")) })
	state, _ := dl.Attr("data-state")
	return out, state
}

// The form opens with the days a type can be asked for and its
// specialists; a join answers with the place's link, whose page shows the
// place and how many wait before it, and which leaves the list.
func TestWaitlistJoinThroughThePage(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	cl := a.newClient(t)
	form := cl.Get(pwJoinPath(c, typ)).Want(http.StatusOK)
	today := time.Now().In(c.Loc)
	from := form.Doc().Find(`input#from[type="date"]`)
	if v, _ := from.Attr("min"); v != pwDay(c, today) {
		t.Errorf("the first day's min is %q, want today %s", v, pwDay(c, today))
	}
	if v, _ := from.Attr("max"); v != pwDay(c, today.AddDate(0, 0, 60)) {
		t.Errorf("the first day's max is %q, want the window's end", v)
	}
	if n := form.Doc().Find(`select#specialist option`).Length(); n != 1+len(c.Specialists) {
		t.Errorf("%d specialists to choose from, want any and %d", n, len(c.Specialists))
	}
	if n := form.Doc().Find(`input[type="checkbox"][name="times"]`).Length(); n != 3 {
		t.Errorf("%d parts of the day, want 3", n)
	}

	first := uniqueEmail("first")
	f := form.Form(`[data-testid="waitlist-form"]`)
	f.Values.Set("name", "Ada Waiting")
	f.Values.Set("email", first)
	f.Values["times"] = []string{waitlist.Morning}
	if f.Action != pwJoinPath(c, typ) || f.Values.Get("from") == "" || f.Values.Get("to") == "" {
		t.Fatalf("the form posts to %q with %v", f.Action, f.Values)
	}
	link := pwJoinNoJS(t, cl, c, typ, f.Values)
	if n := messageRows(t, a, first, outbox.KindWaitlistJoined); n != 1 {
		t.Errorf("%d e-mails of the place queued, want 1", n)
	}
	pwConfirmEmail(t, a, c, first)
	// A second patient waits behind the first.
	secondEmail := uniqueEmail("second")
	second := pwJoinNoJS(t, a.newClient(t), c, typ, pwValues(c, "Bo Later", secondEmail, today, today.AddDate(0, 0, 3)))
	pwConfirmEmail(t, a, c, secondEmail)

	page := a.newClient(t).Get(link).Want(http.StatusOK)
	wantPrivate(t, page)
	s, state := pwPlace(t, page)
	if state != waitlist.StateWaiting || s["What"] != typ.Name || s["With"] != "Any specialist" ||
		s["Times of day"] != "Mornings (before 12:00)" || s["Waiting before you"] != "0" || !strings.HasPrefix(s["Status"], "Waiting.") {
		t.Errorf("the place shows %q (%s)", s, state)
	}
	if s, _ := pwPlace(t, a.newClient(t).Get(second).Want(http.StatusOK)); s["Waiting before you"] != "1" || s["Times of day"] != "Any time of day" {
		t.Errorf("the second place shows %q", s)
	}

	leave := page.Form(`[data-testid="waitlist-leave"]`)
	r := cl.Post(leave.Action, leave.Values).WantRedirect(link)
	wantPrivate(t, r)
	left := cl.Get(link).Want(http.StatusOK)
	if s, state := pwPlace(t, left); state != waitlist.StateLeft || s["Status"] != "You left the waitlist." {
		t.Errorf("after leaving the place shows %q (%s)", s, state)
	}
	if got := left.Text(`[data-testid="waitlist-notice"]`); got != "You have left the waitlist." {
		t.Errorf("the notice says %q", got)
	}
	if left.Doc().Find(`[data-testid="waitlist-leave"]`).Length() != 0 {
		t.Error("a place that left can be left again")
	}
	cl.Post(leave.Action, nil).WantRedirect(link) // leaving twice is no error
	if s, _ := pwPlace(t, a.newClient(t).Get(second).Want(http.StatusOK)); s["Waiting before you"] != "0" {
		t.Errorf("after the first left, the second shows %q", s)
	}

	for _, p := range []string{"/c/" + c.Slug + "/waitlist/no-such-token", "/c/" + c.Slug + "/waitlist/" + strings.Repeat("A", 43)} {
		r := a.newClient(t).Get(p)
		wantErrorPage(t, r, http.StatusNotFound)
		wantPrivate(t, r)
	}
	// Another clinic's link opens nothing here.
	other := a.patientClinic(t)
	wantErrorPage(t, a.newClient(t).Get("/c/"+other.Slug+strings.TrimPrefix(link, "/c/"+c.Slug)), http.StatusNotFound)
	wantErrorPage(t, a.newClient(t).Get(pwJoinPath(other, typ)), http.StatusNotFound)
}

// A refused field is named next to its input, with what was typed kept;
// an address that waits already for the type is told so.
func TestWaitlistJoinPageRefusals(t *testing.T) {
	t.Parallel()
	a := queueApp(t)
	c := a.patientClinic(t)
	typ := c.Type0()
	day := c.At(3, 12, 0)
	email := uniqueEmail("refused")
	cases := []struct {
		name, input, field string
		edit               func(url.Values)
	}{
		{"no name", "name", "patient.name", func(v url.Values) { v.Set("name", " ") }},
		{"no address", "email", "patient.email", func(v url.Values) { v.Set("email", "nobody") }},
		{"to before from", "to", "to", func(v url.Values) { v.Set("to", pwDay(c, day.AddDate(0, 0, -1))) }},
		{"past the window", "to", "to", func(v url.Values) { v.Set("to", pwDay(c, day.AddDate(0, 0, 90))) }},
		{"a past day", "from", "from", func(v url.Values) { v.Set("from", pwDay(c, day.AddDate(0, 0, -5))) }},
		{"no such part of the day", "times", "times", func(v url.Values) { v.Set("times", "night") }},
		{"no such specialist", "specialist", "specialistId", func(v url.Values) { v.Set("specialist", uuid.NewString()) }},
	}
	// Each case its own address: every try counts against the address's
	// allowance of three an hour.
	for _, tc := range cases {
		v := pwValues(c, "Ada Refused", uniqueEmail("refused"), day, day.AddDate(0, 0, 2))
		tc.edit(v)
		r := a.newClient(t).Post(pwJoinPath(c, typ), v).Want(http.StatusBadRequest)
		msg := r.Doc().Find(`[data-testid="` + tc.input + `-error"]`)
		if f, _ := msg.Attr("data-field"); f != tc.field || text(msg) == "" {
			t.Errorf("%s: the error %q names %q, want %s", tc.name, text(msg), f, tc.field)
		}
		if got, _ := r.Doc().Find(`input#email`).Attr("value"); got != v.Get("email") {
			t.Errorf("%s: the e-mail field shows %q", tc.name, got)
		}
	}
	var n int
	if err := a.Pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE clinic_id = $1`, c.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("refused joins queued %d e-mails (%v)", n, err)
	}
	v := pwValues(c, "Ada Refused", uniqueEmail("german"), day, day.AddDate(0, 0, -1))
	de := a.newClient(t).PostRaw(pwJoinPath(c, typ), v, http.Header{"Accept-Language": {"de"}}).Want(http.StatusBadRequest)
	if got := de.Text(`[data-testid="to-error"]`); !strings.Contains(got, "letzten Tag") {
		t.Errorf("German error of to: %q", got)
	}

	pwJoinNoJS(t, a.newClient(t), c, typ, pwValues(c, "Ada Twice", email, day, day))
	again := a.newClient(t).Post(pwJoinPath(c, typ), pwValues(c, "Ada Twice", strings.ToUpper(email), day, day)).Want(http.StatusConflict)
	if got := again.Text(`[data-testid="waitlist-problem"]`); !strings.Contains(got, "already on the waitlist for "+typ.Name) {
		t.Errorf("a second join says %q", got)
	}
	// Another type is another list.
	pwJoinNoJS(t, a.newClient(t), c, c.Types[1], pwValues(c, "Ada Twice", email, day, day))
}

// Three places an hour per e-mail address and clinic, however it is
// written (a refused join, which sends nothing, does not count); ten
// joins an hour per client address. Over either, 429 with Retry-After,
// and nothing is queued.
func TestWaitlistJoinPageLimits(t *testing.T) {
	t.Parallel()
	avoidHourEdge(time.Minute)
	a := queueApp(t)
	c := a.patientClinic(t)
	day := c.At(4, 12, 0)
	email := uniqueEmail("limited")
	pwJoinNoJS(t, a.newClient(t), c, c.Types[0], pwValues(c, "Ada Limited", email, day, day))
	a.newClient(t).Post(pwJoinPath(c, c.Types[0]), pwValues(c, "Ada Limited", strings.ToUpper(email), day, day)).Want(http.StatusConflict)
	a.newClient(t).Post(pwJoinPath(c, c.Types[1]), pwValues(c, "Ada Limited", email, day, day.AddDate(0, 0, -1))).Want(http.StatusBadRequest)
	cl := a.newClient(t)
	link := pwJoinNoJS(t, cl, c, c.Types[1], pwValues(c, "Ada Limited", " "+email, day, day))
	leave := cl.Get(link).Want(http.StatusOK).Form(`[data-testid="waitlist-leave"]`)
	cl.Post(leave.Action, leave.Values).WantRedirect(link)
	pwJoinNoJS(t, a.newClient(t), c, c.Types[1], pwValues(c, "Ada Limited", email, day, day)) // the third place
	pwWantTooMany(t, a.newClient(t).Post(pwJoinPath(c, c.Types[0]), pwValues(c, "Ada Limited", email, day, day)))

	cl = a.newClient(t)
	for i := range 10 {
		r := cl.Post(pwJoinPath(c, c.Types[0]), pwValues(c, "Many", uniqueEmail("many"), day, day))
		if r.Status != http.StatusOK {
			t.Fatalf("join %d from one address: %d", i+1, r.Status)
		}
	}
	fresh := uniqueEmail("fresh")
	pwWantTooMany(t, cl.Post(pwJoinPath(c, c.Types[0]), pwValues(c, "Fresh", fresh, day, day)))
	if n := messageRows(t, a, fresh, ""); n != 0 {
		t.Errorf("a refused join queued %d e-mails", n)
	}
	a.newClient(t).Post(pwJoinPath(c, c.Types[0]), pwValues(c, "Fresh", fresh, day, day)).Want(http.StatusOK)
}

// pwWantTooMany checks a 429 of the form with a Retry-After within the hour.
func pwWantTooMany(t *testing.T, r *response) {
	t.Helper()
	r.Want(http.StatusTooManyRequests)
	if secs := retryAfter(t, r); secs > 3600 {
		t.Errorf("Retry-After %d s", secs)
	}
	if got := r.Text(`[data-testid="waitlist-problem"]`); !strings.Contains(got, "try again in") {
		t.Errorf("the page says %q", got)
	}
}

// Without Redis to count the limits, nobody joins, through the form or
// the API: 503 with Retry-After.
func TestWaitlistJoinFailsClosedWithoutRedis(t *testing.T) {
	t.Parallel()
	a := newApp(t, withRedisDown(), withOptions(program.Options{Mail: program.MailOptions{Queue: ownQueue()}}))
	c := a.patientClinic(t)
	day := c.At(4, 12, 0)
	email := uniqueEmail("outage")
	r := a.newClient(t).Post(pwJoinPath(c, c.Type0()), pwValues(c, "Ada Outage", email, day, day)).Want(http.StatusServiceUnavailable)
	if r.Header.Get("Retry-After") != "60" || !strings.Contains(r.Text(`[data-testid="waitlist-problem"]`), "try again in a minute") {
		t.Errorf("Retry-After %q; the page says %q", r.Header.Get("Retry-After"), r.Text(`[data-testid="waitlist-problem"]`))
	}
	api := a.newClient(t).send(http.MethodPost, pwAPIPath(c.Type0()), pwBody(c, email, day))
	wantError(t, api, http.StatusServiceUnavailable, "UNAVAILABLE", "")
	if api.Header.Get("Retry-After") != "60" {
		t.Errorf("the API's Retry-After %q", api.Header.Get("Retry-After"))
	}
	if n := messageRows(t, a, email, ""); n != 0 {
		t.Errorf("%d e-mails queued without Redis", n)
	}
}

// A week without free time leads to the waitlist, with its days and the
// page's specialist; a week with free time does not.
func TestWaitlistLinkOnAFullWeek(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkitOneSlotADay())
	typ, sp := c.Type0(), c.Specialists[0]
	monday := c.Monday(9, 0)
	for d := range 5 {
		a.bookAs(t, c, typ, sp.ID, monday.AddDate(0, 0, d), booking.Patient{Name: "Full Week", Email: uniqueEmail("full")})
	}
	cl := a.newClient(t)
	full := cl.Get(c.BookURL(typ, monday, sp.ID)).Want(http.StatusOK)
	link, ok := full.Doc().Find(`[data-testid="waitlist-join"]`).Attr("href")
	want := pwJoinPath(c, typ) + "?" + url.Values{"from": {pwDay(c, monday)}, "to": {pwDay(c, monday.AddDate(0, 0, 6))},
		"specialist": {sp.ID.String()}}.Encode()
	if !ok || link != want {
		t.Fatalf("the full week links to %q, want %q", link, want)
	}
	form := cl.Get(link).Want(http.StatusOK)
	f := form.Form(`[data-testid="waitlist-form"]`)
	if f.Values.Get("from") != pwDay(c, monday) || f.Values.Get("to") != pwDay(c, monday.AddDate(0, 0, 6)) || f.Values.Get("specialist") != sp.ID.String() {
		t.Errorf("the form opens with %v", f.Values)
	}
	next := cl.Get(c.BookURL(typ, monday.AddDate(0, 0, 7), sp.ID)).Want(http.StatusOK)
	if n := next.Doc().Find(`[data-testid="waitlist-join"]`).Length(); n != 0 {
		t.Errorf("a week with free time links to the waitlist (%d)", n)
	}
}

// testkitOneSlotADay is a clinic of one specialist and one type that
// takes the whole of each working day: five bookings fill a week.
func testkitOneSlotADay() testkit.ClinicOptions {
	return testkit.ClinicOptions{Specialists: 1, Types: []db.AppointmentTypeInsertParams{
		{Name: "Whole day", DurationMin: 480, SlotStepMin: 480, MaxAdvanceDays: 60, MaxHoldsPerClient: 1},
	}}
}
