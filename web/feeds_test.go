package web_test

// Calendar subscriptions: the feed a phone reads, read by ical.js as
// calendar apps built on it read it; its addresses made, replaced and
// stopped; its cache, ETag and limits.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	program "github.com/clinic/booking/internal/app"
	"github.com/clinic/booking/internal/booking"
	"github.com/clinic/booking/internal/testkit"
	"github.com/google/uuid"
)

// icalRead is what testdata/ical_read.mjs prints of a calendar.
type icalRead struct {
	Name   string `json:"name"`
	Events []struct {
		UID, Start, End, Summary, Description, Status string
	} `json:"events"`
}

// readWithICalJS runs node with ical.js (installed by npm ci) on body.
func readWithICalJS(t *testing.T, body string) icalRead {
	t.Helper()
	file := filepath.Join(t.TempDir(), "feed.ics")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", filepath.Join("testdata", "ical_read.mjs"), file).CombinedOutput()
	if err != nil {
		t.Fatalf("ical.js could not read the feed (npm ci, make static): %v\n%s\n%s", err, out, body)
	}
	var r icalRead
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ical.js printed %q: %v", out, err)
	}
	return r
}

// feedAddress makes a new address through the block's form and returns
// its path on the server.
func feedAddress(t *testing.T, cl *client, action string) string {
	t.Helper()
	res := feedPost(cl, action, url.Values{"action": {"new"}}).Want(http.StatusCreated)
	u, ok := res.Doc().Find(`[data-testid="feed-url"]`).Attr("value")
	if !ok {
		t.Fatalf("no address in the answer:\n%s", res.Body)
	}
	p, err := url.Parse(u)
	if err != nil || !strings.HasPrefix(p.Path, "/calendar/") {
		t.Fatalf("address %q", u)
	}
	if href, _ := res.Doc().Find(`[data-testid="feed-webcal"]`).Attr("href"); href != "webcal://"+p.Host+p.Path {
		t.Errorf("webcal link %q for %q", href, u)
	}
	return p.Path
}

// feedPost posts a block's form as htmx does, with the session's token.
func feedPost(cl *client, path string, form url.Values) *response {
	cl.t.Helper()
	form.Set("_csrf", cl.CSRF)
	return cl.HXPost(path, form)
}

// nextDSTChange is the first local midnight after now whose day has
// another UTC offset than the day before.
func nextDSTChange(loc *time.Location) time.Time {
	d := time.Now().In(loc)
	d = time.Date(d.Year(), d.Month(), d.Day()+1, 12, 0, 0, 0, loc)
	_, off := d.Zone()
	for {
		next := d.AddDate(0, 0, 1)
		if _, o := next.Zone(); o != off {
			return time.Date(next.Year(), next.Month(), next.Day(), 0, 0, 0, 0, loc)
		}
		d = next
	}
}

func TestFeedReadByICalJS(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{Specialists: 2})
	sp := c.Specialists[0].ID
	change := nextDSTChange(c.Loc)
	before := time.Date(change.Year(), change.Month(), change.Day()-2, 9, 0, 0, 0, c.Loc)
	after := time.Date(change.Year(), change.Month(), change.Day()+1, 9, 0, 0, 0, c.Loc)
	b1 := a.bookAs(t, c, c.Type0(), sp, before, booking.Patient{Name: "Ada Lovelace", Email: "ada@example.org"})
	b2 := a.bookAs(t, c, c.Type0(), sp, after, booking.Patient{Name: "Ben Nevis", Email: "ben@example.org"})
	cancelled := a.bookAs(t, c, c.Type0(), sp, after.Add(time.Hour), booking.Patient{Name: "Cleo Gone", Email: "cleo@example.org"})
	other := a.bookAs(t, c, c.Type0(), c.Specialists[1].ID, after, booking.Patient{Name: "Dan Other", Email: "dan@example.org"})
	if _, _, err := a.Deps.Bookings.Cancel(context.Background(), booking.CancelRequest{BookingID: cancelled.Booking.ID, ClinicID: c.ID, Actor: "staff:test"}); err != nil {
		t.Fatal(err)
	}
	admin := a.signIn(t, c.Admin)
	path := feedAddress(t, admin, "/staff/specialists/"+sp.String()+"/feed")
	anon := a.newClient(t)

	t.Run("InstantsAcrossDaylightSaving", func(t *testing.T) {
		res := anon.Get(path).Want(http.StatusOK)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/calendar") {
			t.Errorf("Content-Type %q", ct)
		}
		r := readWithICalJS(t, res.Body)
		if len(r.Events) != 2 {
			t.Fatalf("ical.js read %d events, want the specialist's 2 booked ones (not the cancelled one, not another's): %+v", len(r.Events), r.Events)
		}
		for i, want := range []booking.Booking{b1.Booking, b2.Booking} {
			ev := r.Events[i]
			if ev.UID != want.ID.String()+"@clinic-booking" {
				t.Errorf("event %d is %s, want booking %s", i, ev.UID, want.ID)
			}
			if ev.Start != want.Start.UTC().Format("2006-01-02T15:04:05.000Z") || ev.End != want.End.UTC().Format("2006-01-02T15:04:05.000Z") {
				t.Errorf("event %d: %s-%s, want %s-%s (09:00 local on both sides of %s)", i, ev.Start, ev.End, want.Start.UTC(), want.End.UTC(), change.Format(time.DateOnly))
			}
			if ev.Summary != "Consultation" || ev.Description != "Booked" || ev.Status != "CONFIRMED" {
				t.Errorf("event %d: summary %q, description %q, status %q", i, ev.Summary, ev.Description, ev.Status)
			}
		}
		if _, off1 := before.Zone(); func() bool { _, off2 := after.Zone(); return off1 == off2 }() {
			t.Fatal("the two bookings are not on two sides of a change of offset")
		}
		for _, name := range []string{"Ada", "Ben", "Cleo", "Dan", other.Booking.ID.String(), "example.org"} {
			if strings.Contains(res.Body, name) {
				t.Errorf("the feed carries %q", name)
			}
		}
	})

	t.Run("NamesWhenTheClinicTurnsThemOn", func(t *testing.T) {
		admin.Post("/staff/settings/feeds", url.Values{"names": {"on"}}).WantRedirect("/staff/settings")
		if admin.Get("/staff/settings").Doc().Find(`[data-testid="feed-names-on"][checked]`).Length() != 1 {
			t.Error("the settings page does not show names as on")
		}
		r := readWithICalJS(t, anon.Get(path).Want(http.StatusOK).Body)
		if len(r.Events) != 2 || r.Events[0].Summary != "Consultation – Ada Lovelace" || r.Events[1].Summary != "Consultation – Ben Nevis" {
			t.Errorf("with names on: %+v", r.Events)
		}
		admin.Post("/staff/settings/feeds", url.Values{}).WantRedirect("/staff/settings")
		if body := anon.Get(path).Want(http.StatusOK).Body; strings.Contains(body, "Ada") {
			t.Error("names turned off again, the feed still carries them")
		}
	})

	t.Run("InTheClinicsLanguage", func(t *testing.T) {
		if _, err := a.Pool.Exec(context.Background(), `UPDATE clinics SET language = 'de' WHERE id = $1`, c.ID); err != nil {
			t.Fatal(err)
		}
		a.Deps.Feeds.ClinicChanged(context.Background(), c.ID)
		r := readWithICalJS(t, anon.Get(path).Want(http.StatusOK).Body)
		if len(r.Events) != 2 || r.Events[0].Description != "Gebucht" {
			t.Errorf("a German clinic's feed: %+v", r.Events)
		}
	})

	t.Run("ReplacedAndRevokedAddressesAre404", func(t *testing.T) {
		next := feedAddress(t, admin, "/staff/specialists/"+sp.String()+"/feed")
		anon.Get(path).Want(http.StatusNotFound)
		anon.Get(next).Want(http.StatusOK)
		feedPost(admin, "/staff/specialists/"+sp.String()+"/feed", url.Values{"action": {"revoke"}}).Want(http.StatusOK)
		anon.Get(next).Want(http.StatusNotFound)
		anon.Get("/calendar/f_nothing.ics").Want(http.StatusNotFound)
	})
}

func TestFeedCacheETagAndRefresh(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{FeedRefresh: time.Second, FeedRequestsPerMinute: 100000}))
	c := a.clinic(t, testkit.ClinicOptions{})
	sp := c.Specialists[0].ID
	b := a.bookDirect(t, c, c.Type0(), sp, c.Monday(10, 0), "Ada Patient")
	admin := a.signIn(t, c.Admin)
	path := feedAddress(t, admin, "/staff/specialists/"+sp.String()+"/feed")
	anon := a.newClient(t)
	first := anon.Get(path).Want(http.StatusOK)
	etag := first.Header.Get("ETag")
	if etag == "" || first.Header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, first.Header.Get("Cache-Control"))
	}

	t.Run("NotModifiedOnIfNoneMatch", func(t *testing.T) {
		res := anon.send(http.MethodGet, path, nil, "If-None-Match", etag).Want(http.StatusNotModified)
		if res.Body != "" || res.Header.Get("ETag") != etag {
			t.Errorf("304 with body %q, ETag %q", res.Body, res.Header.Get("ETag"))
		}
		anon.send(http.MethodGet, path, nil, "If-None-Match", `"other"`).Want(http.StatusOK)
	})

	t.Run("ABookingChangeShowsWithinTheRefresh", func(t *testing.T) {
		if _, _, err := a.Deps.Bookings.Cancel(context.Background(), booking.CancelRequest{BookingID: b.Booking.ID, ClinicID: c.ID, Actor: "staff:test"}); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, 3*time.Second, "the cancelled booking gone from the feed", func() bool {
			res := anon.send(http.MethodGet, path, nil, "If-None-Match", etag)
			return res.Status == http.StatusOK && !strings.Contains(res.Body, b.Booking.ID.String()) && res.Header.Get("ETag") != etag
		})
	})

	t.Run("AnyChangeShowsWithinTheRefresh", func(t *testing.T) {
		a.bookDirect(t, c, c.Type0(), sp, c.Monday(11, 0), "Ben Patient")
		testkit.WaitFor(t, 3*time.Second, "the new booking in the feed", func() bool {
			return strings.Contains(anon.Get(path).Want(http.StatusOK).Body, "SUMMARY:Consultation")
		})
		// A change no booking observer hears: the cached body stands until
		// the refresh interval has passed, then the feed says it.
		if _, err := a.Pool.Exec(context.Background(), `UPDATE appointment_types SET name = 'Renamed' WHERE id = $1`, c.Type0().ID); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(anon.Get(path).Body, "Renamed") {
			t.Error("the feed was built again at once: it is not cached")
		}
		testkit.WaitFor(t, 3*time.Second, "the renamed type in the feed", func() bool {
			return strings.Contains(anon.Get(path).Body, "SUMMARY:Renamed")
		})
	})
}

func TestOwnFeedStopsWithTheAccount(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	sp := c.Specialists[0].ID
	b := a.bookDirect(t, c, c.Type0(), sp, c.Monday(10, 0), "Ada Patient")
	me := a.signIn(t, c.Staff)
	page := me.Get("/staff/account").Want(http.StatusOK)
	if !strings.Contains(page.Text(`[data-testid="feed-whose"]`), "not linked") {
		t.Errorf("an unlinked account's page: %q", page.Text(`[data-testid="feed-whose"]`))
	}
	path := feedAddress(t, me, "/staff/account/feed")
	anon := a.newClient(t)
	if strings.Contains(anon.Get(path).Want(http.StatusOK).Body, "BEGIN:VEVENT") {
		t.Error("an unlinked account's feed has events")
	}
	admin := a.signIn(t, c.Admin)
	for _, account := range []string{"", "not-an-id", uuid.NewString()} {
		r := feedPost(admin, "/staff/specialists/"+sp.String()+"/feed/link", url.Values{"account": {account}, "action": {"link"}}).Want(http.StatusUnprocessableEntity)
		if r.Text(`[role="alert"]`) == "" {
			t.Errorf("linking the account %q: no problem shown in %s", account, clip(r.Body, 800))
		}
	}
	feedPost(admin, "/staff/specialists/"+sp.String()+"/feed/link", url.Values{"account": {c.Staff.ID.String()}, "action": {"link"}}).Want(http.StatusOK)
	if !strings.Contains(anon.Get(path).Want(http.StatusOK).Body, b.Booking.ID.String()) {
		t.Error("the linked account's feed lacks its specialist's booking")
	}
	if got := me.Get("/staff/account").Text(`[data-testid="feed-whose"]`); !strings.Contains(got, c.Specialists[0].Name) {
		t.Errorf("the account page says %q", got)
	}
	if _, err := a.Deps.Staff.SetDisabled(context.Background(), c.Admin.User(c.ID), c.Staff.ID, true); err != nil {
		t.Fatal(err)
	}
	anon.Get(path).Want(http.StatusNotFound)
}

func TestFeedRateLimit(t *testing.T) {
	t.Parallel()
	a := newApp(t, withOptions(program.Options{FeedRequestsPerMinute: 3}))
	c := a.clinic(t, testkit.ClinicOptions{})
	path := feedAddress(t, a.signIn(t, c.Admin), "/staff/specialists/"+c.Specialists[0].ID.String()+"/feed")
	avoidWindowEdge(5 * time.Second)
	anon := a.clientAt(t, randomLoopback())
	for range 3 {
		anon.Get(path).Want(http.StatusOK)
	}
	res := anon.Get(path).Want(http.StatusTooManyRequests)
	if retryAfter(t, res) <= 0 {
		t.Error("429 without Retry-After")
	}
	// One address read from many client addresses is counted too.
	feed := a.clientAt(t, randomLoopback())
	for range 2 {
		feed.Get(path).Want(http.StatusTooManyRequests)
	}
	if res := a.clientAt(t, randomLoopback()).Get(path).Want(http.StatusTooManyRequests); retryAfter(t, res) <= 0 {
		t.Error("429 without Retry-After")
	}
	// Guessing addresses is counted per client address.
	guesser := a.clientAt(t, randomLoopback())
	for range 3 {
		guesser.Get("/calendar/f_guess.ics").Want(http.StatusNotFound)
	}
	guesser.Get("/calendar/f_guess.ics").Want(http.StatusTooManyRequests)
}

// An erasure reaches the cached feeds at once: a past booking keeps its
// place in the calendar, without the name.
func TestFeedNamesGoWithErasure(t *testing.T) {
	t.Parallel()
	a := newApp(t)
	c := a.clinic(t, testkit.ClinicOptions{})
	sp := c.Specialists[0].ID
	past := a.bookAs(t, c, c.Type0(), sp, c.At(-7, 10, 0), booking.Patient{Name: "Eve Erased", Email: "eve-feed@example.org"})
	admin := a.signIn(t, c.Admin)
	admin.Post("/staff/settings/feeds", url.Values{"names": {"on"}}).WantRedirect("/staff/settings")
	path := feedAddress(t, admin, "/staff/specialists/"+sp.String()+"/feed")
	anon := a.newClient(t)
	if !strings.Contains(anon.Get(path).Want(http.StatusOK).Body, "Eve Erased") {
		t.Fatal("names on, the feed lacks the name")
	}
	if _, err := a.Deps.Privacy.Erase(context.Background(), c.Admin.User(c.ID), "eve-feed@example.org", ""); err != nil {
		t.Fatal(err)
	}
	body := anon.Get(path).Want(http.StatusOK).Body
	if strings.Contains(body, "Eve") || !strings.Contains(body, past.Booking.ID.String()) {
		t.Errorf("after the erasure the feed says:\n%s", body)
	}
}
