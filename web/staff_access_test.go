package web_test

// Tests of who may do what for how long: sign-in throttling that strangers
// cannot turn into a lock-out, the sign-in form's session-free CSRF token,
// anonymous visits that store nothing, streams that end when access ends,
// the viewer's CSRF token in live forms, the booking window on the
// timeslots API and the booking page, and /metrics on a private address.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"github.com/clinic/booking/internal/testkit"
	"github.com/clinic/booking/web"
)

// accessEndWait is how long a stream may take to notice that its access
// ended (it checks every 2 s).
const accessEndWait = 8 * time.Second

// stfCookie is the cookie name an answer sets, or nil.
func stfCookie(r *pgResp, name string) *http.Cookie {
	for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

func TestStaffSignInFromAKnownDeviceIsNotLockedOutByStrangers(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{LoginsPerMinute: 5}) // per account 5, per address 20, per known device 10
	c := stfNewClinic(t, app.Pool, 1)

	// The limits count in fixed one-minute windows: a run that crosses into
	// the next window is repeated with a fresh account.
	for try := 0; ; try++ {
		stfAvoidWindowEdge(15 * time.Second)
		window := time.Now().Unix() / 60
		acc := stfNewAccount(t, app.Pool, c.ID, "staff")
		var problems []string
		want := func(r *pgResp, status int, what string) {
			if r.Status != status {
				problems = append(problems, fmt.Sprintf("%s: %d, want %d", what, r.Status, status))
			}
		}

		// The owner's browser signed in before (and signed out).
		owner := stfNewClient(t, app.TS.URL)
		owner.Get("/staff/login").Want(http.StatusOK)
		in := owner.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {stfPassword}}).WantRedirect("/staff")
		dev := stfCookie(in, "clinic_device")
		if dev == nil {
			t.Fatal("sign-in sets no device cookie")
		}
		if !dev.HttpOnly || dev.SameSite != http.SameSiteLaxMode || dev.MaxAge < 300*24*3600 || dev.Secure {
			t.Errorf("device cookie: HttpOnly=%v SameSite=%v MaxAge=%d Secure=%v; want HttpOnly, Lax, about a year, not Secure over HTTP",
				dev.HttpOnly, dev.SameSite, dev.MaxAge, dev.Secure)
		}
		owner.Get("/staff").Want(http.StatusOK)
		owner.Post("/staff/logout", nil).WantRedirect("/staff/login")

		// A stranger tries five wrong passwords: the account's allowance for
		// unknown devices (which the owner's first sign-in used one of) runs out.
		stranger := stfNewClient(t, app.TS.URL)
		stranger.Get("/staff/login").Want(http.StatusOK)
		for i := range 5 {
			r := stranger.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {fmt.Sprintf("guess %d", i)}})
			if i < 4 {
				want(r, http.StatusUnauthorized, fmt.Sprintf("stranger's guess %d", i+1))
			} else {
				want(r, http.StatusTooManyRequests, "stranger's fifth guess")
			}
		}

		// The owner's browser still signs in with the right password ...
		owner.Get("/staff/login").Want(http.StatusOK)
		want(owner.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {stfPassword}}), http.StatusSeeOther, "the right password from the known device")
		want(owner.Get("/staff"), http.StatusOK, "the calendar after signing in from the known device")

		// ... while an unknown device, even with the right password, waits.
		fresh := stfNewClient(t, app.TS.URL)
		fresh.Get("/staff/login").Want(http.StatusOK)
		want(fresh.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {stfPassword}}), http.StatusTooManyRequests, "the right password from an unknown device")

		// A device cookie is for the account it signed in: it does not make
		// the owner's browser known for another account.
		other := stfNewAccount(t, app.Pool, c.ID, "staff")
		for i := range 6 {
			stranger.Post("/staff/login", url.Values{"email": {other.Email}, "password": {fmt.Sprintf("guess %d", i)}})
		}
		owner.Get("/staff/login").Want(http.StatusOK)
		want(owner.Post("/staff/login", url.Values{"email": {other.Email}, "password": {stfPassword}}), http.StatusTooManyRequests, "another account from the owner's browser")

		if time.Now().Unix()/60 != window && try < 2 {
			continue
		}
		for _, p := range problems {
			t.Error(p)
		}
		return
	}
}

// A known device has its own limit: a stolen device cookie cannot guess fast.
func TestStaffSignInKnownDeviceHasALimitOfItsOwn(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{LoginsPerMinute: 2}) // per known device 4
	c := stfNewClinic(t, app.Pool, 1)
	for try := 0; ; try++ {
		stfAvoidWindowEdge(10 * time.Second)
		window := time.Now().Unix() / 60
		acc := stfNewAccount(t, app.Pool, c.ID, "staff")
		cl := stfNewClient(t, app.TS.URL)
		cl.Get("/staff/login").Want(http.StatusOK)
		cl.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {stfPassword}}).WantRedirect("/staff")
		var statuses []int
		for i := range 5 {
			statuses = append(statuses, cl.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {fmt.Sprintf("guess %d", i)}}).Status)
		}
		if time.Now().Unix()/60 != window && try < 2 {
			continue
		}
		// The sign-in came from an unknown device: it counted for the account.
		if want := []int{401, 401, 401, 401, 429}; fmt.Sprint(statuses) != fmt.Sprint(want) {
			t.Fatalf("guesses from a known device: %v, want %v", statuses, want)
		}
		return
	}
}

func TestStaffSignInCSRFNeedsNoSession(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	form := func(tok string) url.Values {
		return url.Values{"email": {c.Admin.Email}, "password": {stfPassword}, "_csrf": {tok}}
	}

	t.Run("TheFormSetsNoSessionAndSignsIn", func(t *testing.T) {
		t.Parallel()
		cl := stfNewClient(t, app.TS.URL)
		page := cl.Get("/staff/login").Want(http.StatusOK)
		if ck := page.SessionCookie(); ck != nil {
			t.Errorf("the sign-in form sets a session cookie %q: an anonymous visit must store nothing", ck.Value)
		}
		if cl.CSRF == "" {
			t.Fatal("the sign-in form has no CSRF token")
		}
		ck := stfCookie(page, "clinic_login")
		if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
			t.Fatalf("the form's CSRF cookie: %+v; want HttpOnly, Lax", ck)
		}
		if strings.Contains(cl.CSRF, ck.Value) {
			t.Error("the form field repeats the cookie: it must be its signature")
		}
		cl.PostRaw("/staff/login", form(cl.CSRF), nil).WantRedirect("/staff")
		cl.Get("/staff").Want(http.StatusOK)
	})

	t.Run("WithoutAWrongOrAnothersTokenIsRefused", func(t *testing.T) {
		t.Parallel()
		a, b := stfNewClient(t, app.TS.URL), stfNewClient(t, app.TS.URL)
		a.Get("/staff/login").Want(http.StatusOK)
		b.Get("/staff/login").Want(http.StatusOK)
		if a.CSRF == b.CSRF {
			t.Fatal("two browsers got the same sign-in token")
		}
		for what, r := range map[string]*pgResp{
			"no token":              a.PostRaw("/staff/login", url.Values{"email": {c.Admin.Email}, "password": {stfPassword}}, nil),
			"a wrong token":         a.PostRaw("/staff/login", form("00"+a.CSRF[2:]), nil),
			"another browser's":     a.PostRaw("/staff/login", form(b.CSRF), nil),
			"a token but no cookie": stfNewClient(t, app.TS.URL).PostRaw("/staff/login", form(a.CSRF), nil),
		} {
			if r.Status != http.StatusForbidden {
				t.Errorf("sign-in with %s: %d, want 403", what, r.Status)
			}
		}
		a.Get("/staff").WantRedirect("/staff/login")
	})

	t.Run("SecureCookiesWhenConfigured", func(t *testing.T) {
		t.Parallel()
		secure := stfNewApp(t, web.Options{SecureCookies: true})
		cl := stfNewClient(t, secure.TS.URL)
		if ck := stfCookie(cl.Get("/staff/login"), "clinic_login"); ck == nil || !ck.Secure {
			t.Fatalf("SecureCookies: the sign-in form's cookie %+v is not Secure", ck)
		}
	})
}

// Anonymous visitors (the patient pages, their streams, the sign-in form)
// store no session: there is nothing to store for them. Not parallel: it
// counts the rows of the whole sessions table.
func TestAnonymousVisitsWriteNoSession(t *testing.T) {
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool)
	count := func() int {
		t.Helper()
		var n int
		if err := app.Pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	book := c.BookURL(c.Type0(), c.At(1, 10, 0), uuid.Nil)
	stream := c.BookPath(c.Type0()) + "/live?week=" + c.Week(c.At(1, 10, 0))
	for i := range 100 {
		for _, path := range []string{"/", "/c/" + c.Slug, book, "/staff/login"} {
			res, err := http.Get(app.TS.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode >= 400 {
				t.Fatalf("GET %s: %d", path, res.StatusCode)
			}
			for _, ck := range res.Cookies() {
				if ck.Name == "clinic_session" {
					t.Fatalf("GET %s (visit %d) sets a session cookie", path, i+1)
				}
			}
		}
		s := dialSSE(t, nil, app.TS.URL+stream)
		s.must(evWait, "the stream's first event")
		s.cancel()
	}
	if after := count(); after != before {
		t.Fatalf("400 anonymous page views and 100 stream starts wrote %d session rows", after-before)
	}
}

// stfLive opens the staff calendar's stream of cl.
func stfLive(t *testing.T, app *stfApp, cl *stfClient, query string) *sseConn {
	t.Helper()
	s := dialSSE(t, cl.hc, app.TS.URL+"/staff/live"+query)
	s.must(evWait, "the first day block")
	return s
}

// stfEnds waits for the stream's end event and checks its reason.
func stfEnds(t *testing.T, s *sseConn, reason string) {
	t.Helper()
	end, _ := s.until(accessEndWait, "the end event", func(e sseEvent) bool { return e.Name == "end" })
	if end.Data() != reason {
		t.Fatalf("the stream ended with %q, want %q", end.Data(), reason)
	}
	s.closes(evWait)
}

func TestStaffStreamsEndWhenAccessEnds(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)

	t.Run("SignOut", func(t *testing.T) {
		t.Parallel()
		cl := stfSignIn(t, app, stfNewAccount(t, app.Pool, c.ID, "staff"))
		s := stfLive(t, app, cl, "?view=day")
		cl.Post("/staff/logout", nil).WantRedirect("/staff/login")
		stfEnds(t, s, "access-ended")
	})

	t.Run("SessionDeletedFromTheStore", func(t *testing.T) {
		t.Parallel()
		cl := stfSignIn(t, app, stfNewAccount(t, app.Pool, c.ID, "staff"))
		s := stfLive(t, app, cl, "?view=day")
		if _, err := app.Pool.Exec(context.Background(), `DELETE FROM sessions WHERE token = $1`, cl.Cookie()); err != nil {
			t.Fatal(err)
		}
		stfEnds(t, s, "access-ended")
	})

	t.Run("SessionExpired", func(t *testing.T) {
		t.Parallel()
		cl := stfSignIn(t, app, stfNewAccount(t, app.Pool, c.ID, "staff"))
		s := stfLive(t, app, cl, "?view=day")
		if _, err := app.Pool.Exec(context.Background(), `UPDATE sessions SET expiry = now() - interval '1 second' WHERE token = $1`, cl.Cookie()); err != nil {
			t.Fatal(err)
		}
		stfEnds(t, s, "access-ended")
	})

	t.Run("AccountDisabled", func(t *testing.T) {
		t.Parallel()
		acc := stfNewAccount(t, app.Pool, c.ID, "staff")
		cl := stfSignIn(t, app, acc)
		s := stfLive(t, app, cl, "?view=day")
		quiet := stfSignIn(t, app, stfNewAccount(t, app.Pool, c.ID, "staff"))
		other := stfLive(t, app, quiet, "?view=day") // the same live view, another viewer

		admin := stfSignIn(t, app, c.Admin)
		page := admin.Get("/staff/users").Want(http.StatusOK)
		if page.Doc().Find(`[data-testid="user-access-form"] option[value="`+c.Admin.ID.String()+`"]`).Length() != 0 {
			t.Error("the admin is offered to disable their own account")
		}
		before := stfAuditCount(t, app.Pool, c.ID)
		r := admin.Post("/staff/users/access", url.Values{"id": {acc.ID.String()}, "action": {"disable"}}).Want(http.StatusOK)
		if !strings.Contains(r.Text(`[data-testid="table"]`), "disabled") {
			t.Errorf("the list does not show the account disabled: %q", r.Text(`[data-testid="table"]`))
		}
		if got := stfLastAudit(t, app.Pool, c.ID); got.Action != "staff.disable" || got.EntityID != acc.ID.String() || stfAuditCount(t, app.Pool, c.ID) != before+1 {
			t.Errorf("audit: %s %s", got.Action, got.EntityID)
		}
		stfEnds(t, s, "access-ended")
		// Only the disabled account's stream ends.
		for deadline := time.Now().Add(2500 * time.Millisecond); time.Now().Before(deadline); {
			if ev, ok, closed := other.next(time.Until(deadline)); closed || (ok && ev.Name == "end") {
				t.Fatalf("another account's stream on the same view ended too (%q)", ev.Data())
			}
		}

		cl.Get("/staff").WantRedirect("/staff/login")
		again := stfNewClient(t, app.TS.URL)
		again.Get("/staff/login")
		r = again.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {stfPassword}}).Want(http.StatusUnauthorized)
		if msg := r.Text(`[data-testid="login-error"]`); msg != "The e-mail address or the password is not right." {
			t.Errorf("a disabled account's sign-in says %q; it must read as wrong credentials", msg)
		}

		admin.Post("/staff/users/access", url.Values{"id": {acc.ID.String()}, "action": {"enable"}}).Want(http.StatusOK)
		again.Get("/staff/login")
		again.Post("/staff/login", url.Values{"email": {acc.Email}, "password": {stfPassword}}).WantRedirect("/staff")
	})

	t.Run("AnAdminCannotDisableThemselvesAndStaffCannotDisableAnyone", func(t *testing.T) {
		t.Parallel()
		admin := stfSignIn(t, app, c.Admin)
		r := admin.Post("/staff/users/access", url.Values{"id": {c.Admin.ID.String()}, "action": {"disable"}}).Want(http.StatusBadRequest)
		if !strings.Contains(r.Text(`[role="alert"]`), "your own account") {
			t.Errorf("disabling oneself says %q", r.Text(`[role="alert"]`))
		}
		admin.Get("/staff").Want(http.StatusOK)
		nurse := stfSignIn(t, app, c.Staff)
		nurse.Post("/staff/users/access", url.Values{"id": {c.Admin.ID.String()}, "action": {"disable"}}).Want(http.StatusForbidden)
		admin.Get("/staff").Want(http.StatusOK)
	})
}

func TestKioskStreamEndsWhenItsTokenIsRevoked(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	admin := stfSignIn(t, app, c.Admin)
	r := admin.Post("/staff/kiosks", url.Values{"name": {"Waiting room"}}).Want(http.StatusCreated)
	m := stfKioskLink.FindStringSubmatch(r.Text(`[data-testid="notice"]`))
	if m == nil {
		t.Fatalf("no device link: %q", r.Text(`[data-testid="notice"]`))
	}
	board := dialSSE(t, nil, app.TS.URL+"/kiosk/"+c.Slug+"/live?device="+m[2])
	board.must(evWait, "the board's first block")

	var id string
	admin.Get("/staff/kiosks").Doc().Find(`select#revoke-id option`).Each(func(_ int, o *goquery.Selection) {
		if o.Text() == "Waiting room" {
			id, _ = o.Attr("value")
		}
	})
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id}}).Want(http.StatusOK)
	stfEnds(t, board, "access-ended")
}

// Forms in the calendar's live day blocks carry the viewer's own CSRF
// token: the live view is shared, the token is not.
func TestStaffLiveCalendarFormsCarryTheViewersCSRFToken(t *testing.T) {
	t.Parallel()
	app := stfNewApp(t, web.Options{})
	c := stfNewClinic(t, app.Pool, 1)
	start := c.Next(time.Wednesday, 11, 0)
	date := start.Format(time.DateOnly)
	admin := stfSignIn(t, app, c.Admin)
	nurse := stfSignIn(t, app, c.Staff)
	stfPhoneBook(t, app, admin, c, c.Specialists[0].ID, start, "Live Form Patient", "live@example.org", "")

	for _, cl := range []*stfClient{admin, nurse} {
		s := dialSSE(t, cl.hc, app.TS.URL+"/staff/live?view=day&date="+date)
		ev, _ := s.until(evWait, "the day block", func(e sseEvent) bool { return e.Name == "cal-"+date })
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(ev.Data()))
		if err != nil {
			t.Fatal(err)
		}
		fields := doc.Find(`form[method="post"] input[name="_csrf"]`)
		if fields.Length() == 0 {
			t.Fatalf("the day block has no post form with a _csrf field: %s", pgClip(ev.Data(), 500))
		}
		fields.Each(func(_ int, in *goquery.Selection) {
			if v, _ := in.Attr("value"); v != cl.CSRF {
				t.Errorf("a live form's _csrf is %q, want the viewer's token %q", v, cl.CSRF)
			}
		})
		// And the form works as it arrived.
		f := stfFormOf(t, doc, `form[method="post"]`)
		if !f.Values.Has("_csrf") {
			t.Fatal("no _csrf value in the form")
		}
		s.cancel()
	}
}

func TestTimeslotsAndBookingPageStayInsideTheBookingWindow(t *testing.T) {
	t.Parallel()
	app := pgNewApp(t, web.Options{})
	c := pgNewClinic(t, app.Pool) // types bookable 60 days ahead
	typ := c.Type0()
	rdb := testkit.Redis(t)
	keys := func() []string {
		t.Helper()
		ks, err := rdb.Keys(context.Background(), "timeslots:{"+typ.ID.String()+"}:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	today := time.Now().In(c.Loc)
	day := func(n int) string { return today.AddDate(0, 0, n).Format(time.DateOnly) }
	base := app.TS.URL + "/v1/appointment-types/" + typ.ID.String() + "/timeslots"
	for _, tc := range []struct{ name, query, field string }{
		{"63Days", "?from=" + day(0) + "&to=" + day(62), "to"},
		{"Year3000", "?from=3000-01-01&to=3000-01-07", "to"},
		{"PastTheWindow", "?from=" + day(55) + "&to=" + day(62), "to"},
		{"LastYear", "?from=" + day(-365) + "&to=" + day(-360), "from"},
		{"ToBeforeFrom", "?from=" + day(3) + "&to=" + day(2), "to"},
	} {
		var body errorShape
		res := getJSON(t, base+tc.query, &body)
		if res.StatusCode != http.StatusBadRequest || body.Error.Details["field"] != tc.field {
			t.Errorf("%s: %d naming %v, want 400 naming %s", tc.name, res.StatusCode, body.Error.Details["field"], tc.field)
		}
	}
	if ks := keys(); len(ks) != 0 {
		t.Errorf("refused ranges wrote cache keys: %v", ks)
	}
	var ok struct{}
	if res := getJSON(t, base+"?from="+day(-1)+"&to="+day(60), &ok); res.StatusCode != http.StatusOK {
		t.Errorf("yesterday to the window's last day: %d, want 200", res.StatusCode)
	}

	cl := pgNewClient(t, app.TS.URL)
	cl.Get(c.BookPath(typ) + "?week=3000-01-06").Want(http.StatusBadRequest)
	cl.Get(c.BookPath(typ) + "?week=" + day(-30)).Want(http.StatusBadRequest)
	// The week holding the window's last day links to no later week.
	if last := cl.Get(c.BookPath(typ) + "?week=" + day(60)).Want(http.StatusOK); last.Doc().Find(`a[rel="next"]`).Length() != 0 {
		t.Error("the window's last week links to the week after it")
	}
	first := cl.Get(c.BookPath(typ)).Want(http.StatusOK)
	if prev, ok := first.Doc().Find(`a[rel="prev"]`).Attr("href"); ok {
		cl.Get(prev).Want(http.StatusOK) // a link the page shows works
	}
}

// With METRICS_ADDR, /metrics is served there and not on the public address.
func TestMetricsOnAPrivateAddress(t *testing.T) {
	t.Parallel()
	pool, rdb := testkit.DB(t), testkit.Redis(t)
	private := freeLoopbackAddr(t)
	deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)), scoped(web.Options{MetricsAddr: private}))
	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	deps.RunBackground(bg)
	addr := freeLoopbackAddr(t)
	srv := web.New(deps, addr)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe(ctx, 5*time.Second) }()
	t.Cleanup(func() { stop(); <-served })

	get := func(u string) (int, string) {
		t.Helper()
		for deadline := time.Now().Add(evWait); ; time.Sleep(20 * time.Millisecond) {
			res, err := http.Get(u)
			if err != nil {
				if time.Now().After(deadline) {
					t.Fatalf("GET %s: %v", u, err)
				}
				continue
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode, string(b)
		}
	}
	if st, body := get("http://" + private + "/metrics"); st != http.StatusOK || !strings.Contains(body, "clinic_streams_open") && !strings.Contains(body, "go_goroutines") {
		t.Fatalf("private /metrics: %d %s", st, pgClip(body, 200))
	}
	if st, _ := get("http://" + addr + "/metrics"); st != http.StatusNotFound {
		t.Fatalf("public /metrics with METRICS_ADDR set: %d, want 404", st)
	}
	if st, _ := get("http://" + addr + "/healthz"); st != http.StatusOK {
		t.Fatalf("public /healthz: %d", st)
	}
}

// Kiosk boards are public, so there may be thousands: the boards of one
// clinic and token share one access check per instance, not one each.
func TestKioskStreamsOfOneClinicShareTheirAccessCheck(t *testing.T) {
	t.Parallel()
	pool, queries := testkit.CountedPool(t, testkit.DB(t))
	rdb := testkit.Redis(t)
	deps := web.Wire(pool, rdb, slog.New(slog.NewTextHandler(stfTestLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		scoped(web.Options{LoginsPerMinute: 100000, HoldsPerMinute: 100000}))
	ctx, cancel := context.WithCancel(context.Background())
	deps.RunBackground(ctx)
	ts := httptest.NewServer(web.New(deps, "127.0.0.1:0").Handler())
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		cancel()
	})
	app := &stfApp{TS: ts, Deps: deps, Pool: pool, RDB: rdb}
	c := stfNewClinic(t, testkit.DB(t), 1)
	admin := stfSignIn(t, app, c.Admin)
	r := admin.Post("/staff/kiosks", url.Values{"name": {"Waiting room"}}).Want(http.StatusCreated)
	m := stfKioskLink.FindStringSubmatch(r.Text(`[data-testid="notice"]`))
	if m == nil {
		t.Fatalf("no device link: %q", r.Text(`[data-testid="notice"]`))
	}

	const boards = 50
	var open []*sseConn
	for range boards {
		b := dialSSE(t, nil, ts.URL+"/kiosk/"+c.Slug+"/live?device="+m[2])
		b.must(evWait, "the board's first block")
		open = append(open, b)
	}
	// Nothing changes on the board now: what the pool runs is the boards'
	// access checks (and the app's own background work).
	const window = 5 * time.Second
	before := queries.Load()
	time.Sleep(window)
	ran := queries.Load() - before
	// One check per 1.5-2 s is 3 or 4 in the window; one per board would be
	// about boards*window/2s = 125.
	if ran > 12 {
		t.Fatalf("%d boards of one clinic ran %d queries in %v; want their access checks shared (a few)", boards, ran, window)
	}
	t.Logf("%d boards of one clinic: %d queries in %v", boards, ran, window)

	// A shared no still reaches every board.
	var id string
	admin.Get("/staff/kiosks").Doc().Find(`select#revoke-id option`).Each(func(_ int, o *goquery.Selection) {
		if o.Text() == "Waiting room" {
			id, _ = o.Attr("value")
		}
	})
	admin.Post("/staff/kiosks/revoke", url.Values{"id": {id}}).Want(http.StatusOK)
	for _, b := range open {
		stfEnds(t, b, "access-ended")
	}
}
